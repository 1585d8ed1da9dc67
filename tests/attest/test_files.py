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


def test_private_helpers_create_owner_only(tmp_path: Path) -> None:
    import os

    from affidavit.attest.files import private_database, private_dir, private_file

    old = os.umask(0o022)  # a permissive umask must not widen what is created
    try:
        folder = private_dir(tmp_path / "a" / "b")
        assert folder.stat().st_mode & 0o777 == 0o700
        assert private_file(folder / "f") is True
        assert private_file(folder / "f") is False  # never recreated
        assert (folder / "f").stat().st_mode & 0o777 == 0o600
        db = tmp_path / "new" / "x.db"
        assert private_database(db) is True
        assert (db.stat().st_mode & 0o777, db.parent.stat().st_mode & 0o777) == (0o600, 0o700)
        old_db = tmp_path / "old.db"
        old_db.write_bytes(b"")
        Path(f"{old_db}-wal").write_bytes(b"")
        old_db.chmod(0o644)
        Path(f"{old_db}-wal").chmod(0o644)
        assert private_database(old_db, tighten=True) is False
        assert old_db.stat().st_mode & 0o777 == 0o600
        assert Path(f"{old_db}-wal").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    private_dir(shared)  # an existing folder keeps its mode (it may be the operator's)
    assert shared.stat().st_mode & 0o777 == 0o755
