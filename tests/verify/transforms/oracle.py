"""MemPalace 3.11.0's ``mempalace/sources/transforms.py``, loaded straight from its wheel (never
installed) as the reference the differential tests compare against. The wheel is hash-pinned in
tests/oracles.txt and downloaded into build/oracles/ by ``make install-dev``."""

from __future__ import annotations

import importlib.util
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
WHEEL = ROOT / "build" / "oracles" / "mempalace-3.11.0-py3-none-any.whl"
MEMBER = "mempalace/sources/transforms.py"


def load_oracle(wheel: Path = WHEEL) -> ModuleType | None:
    """The oracle module, or ``None`` when the wheel is absent."""
    if not wheel.is_file():
        return None
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(MEMBER).decode("utf-8")
    spec = importlib.util.spec_from_loader("mempalace_oracle_transforms", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{wheel.name}/{MEMBER}", "exec"), module.__dict__)
    return module


def oracle_or_skip() -> ModuleType:
    """The oracle; skip (or, with AFFIDAVIT_REQUIRE_ORACLES=1, fail) when the wheel is absent."""
    module = load_oracle()
    if module is None:
        message = "MemPalace oracle wheel absent: run make install-dev"
        if os.environ.get("AFFIDAVIT_REQUIRE_ORACLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return module


def oracle_chain(oracle: Any, names: Sequence[str], source: bytes) -> bytes:
    """RFC 002 §7.3 replay with the oracle: the first step on the bytes if it is
    utf8_replace_invalid, else a strict decode first; a later utf8_replace_invalid gets the text's
    UTF-8 bytes (the oracle's function takes bytes only). Raises UnicodeDecodeError like ours
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
