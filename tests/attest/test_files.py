"""atomic_write: old bytes or new ones, never a mix, with the requested mode and no leftovers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from affidavit.attest.files import atomic_write


def test_replaces_content_with_the_requested_mode(tmp_path: Path) -> None:
    target = tmp_path / "pins.json"
    target.write_bytes(b"old")
    atomic_write(target, b"new", mode=0o600)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pins.json"]


def test_a_failed_write_leaves_the_old_bytes_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "pins.json"
    target.write_bytes(b"old")

    def broken_replace(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pins.json"]
