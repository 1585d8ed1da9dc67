"""MemPalace 3.11.0's ``mempalace/sources/transforms.py``, loaded straight from its wheel (never
installed) as the reference the differential tests compare against. The wheel is hash-pinned in
tests/oracles.txt and downloaded into build/oracles/ by ``make install-dev``; the loader checks the
pin again, so a stale or substituted file is a failure, not a silently different oracle."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
WHEEL = ROOT / "build" / "oracles" / "mempalace-3.11.0-py3-none-any.whl"
PINS = ROOT / "tests" / "oracles.txt"
MEMBER = "mempalace/sources/transforms.py"
ABSENT = "MemPalace 3.11.0 oracle wheel absent: run make install-dev to download the oracle"


def pinned_sha256(pins: Path = PINS) -> str:
    """The ``--hash=sha256:`` of ``mempalace==3.11.0`` in tests/oracles.txt."""
    found = re.search(
        r"^mempalace==3\.11\.0\s+--hash=sha256:([0-9a-f]{64})\s*$",
        pins.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert found is not None, f"{pins} pins no mempalace==3.11.0 hash"
    return found.group(1)


def load_oracle(wheel: Path = WHEEL) -> ModuleType | None:
    """The oracle module, or ``None`` when the wheel is absent. A wheel that does not match the
    pin in tests/oracles.txt fails the test."""
    if not wheel.is_file():
        return None
    data = wheel.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == pinned_sha256(), f"{wheel} is not the pinned wheel (sha256 {digest})"
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(MEMBER).decode("utf-8")
    spec = importlib.util.spec_from_loader("mempalace_oracle_transforms", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{wheel.name}/{MEMBER}", "exec"), module.__dict__)
    return module


def oracle_or_skip(wheel: Path = WHEEL) -> ModuleType:
    """The oracle; skip when the wheel is absent, or fail instead when AFFIDAVIT_REQUIRE_ORACLES=1
    (CI sets it, so the differential test cannot silently stop running there)."""
    module = load_oracle(wheel)
    if module is None:
        if os.environ.get("AFFIDAVIT_REQUIRE_ORACLES") == "1":
            pytest.fail(f"{ABSENT} (AFFIDAVIT_REQUIRE_ORACLES=1)")
        pytest.skip(ABSENT)
    return module


def oracle_chain(oracle: Any, names: Sequence[str], source: bytes) -> bytes:
    """RFC 002 §7.3 replay with the oracle ("the first step operates on the original source bytes,
    every subsequent step on the prior step's output"): the first step on the bytes if it is
    utf8_replace_invalid, else a strict decode first; a later utf8_replace_invalid gets the text's
    UTF-8 bytes (the oracle's function takes bytes only). Raises UnicodeDecodeError where ours
    raises transform.not_utf8."""
    if not names:
        return source
    data: Any = source
    rest = list(names)
    if rest[0] == "utf8_replace_invalid":
        data = oracle.RESERVED_TRANSFORMATIONS[rest.pop(0)](source)
    else:
        data = source.decode("utf-8")
    for name in rest:
        fn = oracle.RESERVED_TRANSFORMATIONS[name]
        data = fn(data.encode("utf-8")) if name == "utf8_replace_invalid" else fn(data)
    assert isinstance(data, str)
    return data.encode("utf-8")
