"""scitt-cose 0.5.0's shipped vectors, read straight from its source distribution (hash-pinned in
tests/oracles.txt, downloaded into build/oracles/ by ``make install-dev``; the wheel ships none).
The archive is checked against the pin again, so a substituted file fails instead of passing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
SDIST = ROOT / "build" / "oracles" / "scitt_cose-0.5.0.tar.gz"
PINS = ROOT / "tests" / "oracles.txt"
PREFIX = "scitt_cose-0.5.0/test-vectors/"
ABSENT = "scitt-cose 0.5.0 sdist absent: run make install-dev to download the oracle's vectors"


@dataclass(frozen=True)
class Vector:
    """One vector directory: its files' bytes and its expected.json."""

    set_name: str
    name: str
    files: dict[str, bytes]
    expected: dict[str, Any]


def _pinned() -> str:
    found = re.search(
        r"^scitt-cose==0\.5\.0\s+--hash=sha256:([0-9a-f]{64})\s*$",
        PINS.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert found is not None, "tests/oracles.txt pins no scitt-cose==0.5.0 hash"
    return found.group(1)


def vectors(set_name: str) -> list[Vector]:
    """Every vector of ``set_name`` (``receipt-v1`` or ``v1``); skip when the sdist is absent
    (fail instead under AFFIDAVIT_REQUIRE_ORACLES=1, as CI sets)."""
    if not SDIST.is_file():
        if os.environ.get("AFFIDAVIT_REQUIRE_ORACLES") == "1":
            pytest.fail(f"{ABSENT} (AFFIDAVIT_REQUIRE_ORACLES=1)")
        pytest.skip(ABSENT)
    data = SDIST.read_bytes()
    assert hashlib.sha256(data).hexdigest() == _pinned(), f"{SDIST} is not the pinned sdist"
    found: dict[str, dict[str, bytes]] = {}
    with tarfile.open(SDIST) as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.startswith(PREFIX + set_name + "/"):
                continue
            parts = member.name[len(PREFIX) + len(set_name) + 1 :].split("/")
            if len(parts) != 2:
                continue
            handle = archive.extractfile(member)
            assert handle is not None
            found.setdefault(parts[0], {})[parts[1]] = handle.read()
    out = [
        Vector(set_name, name, files, json.loads(files["expected.json"]))
        for name, files in sorted(found.items())
        if "expected.json" in files
    ]
    assert out, f"no {set_name} vectors in {SDIST}"
    return out
