"""atomic_write: old bytes or new ones, never a mix, with the requested mode and no leftovers;
create_exclusive: one winner among racing processes, whole; folder_lock across processes."""

from __future__ import annotations

import multiprocessing
import os
import stat
import time
from pathlib import Path
from typing import Any

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


def _create_in_child(target: str, data: bytes, start: float) -> bool:
    """One racer: wait for the common start, then try to create ``target`` (True: created)."""
    from affidavit.attest.files import create_exclusive

    time.sleep(max(0.0, start - time.time()))
    try:
        create_exclusive(target, data, mode=0o600)
    except FileExistsError:
        assert Path(target).read_bytes() in {bytes([i]) * 65536 for i in range(RACERS)}
        return False
    return True


RACERS = 6


def test_create_exclusive_one_winner_whole_file_among_processes(tmp_path: Path) -> None:
    target = tmp_path / "registry-1.key"
    start = time.time() + 0.5
    context = multiprocessing.get_context("spawn")  # real processes, started alike
    with context.Pool(RACERS) as pool:
        won = pool.starmap(
            _create_in_child, [(str(target), bytes([i]) * 65536, start) for i in range(RACERS)]
        )
    assert sum(won) == 1
    assert target.read_bytes() == bytes([won.index(True)]) * 65536  # the winner's, all of it
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry-1.key"]  # no temporary left


def test_create_exclusive_never_replaces_or_follows(tmp_path: Path) -> None:
    from affidavit.attest.files import create_exclusive

    target = tmp_path / "k"
    create_exclusive(target, b"first", mode=0o644)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    with pytest.raises(FileExistsError):
        create_exclusive(target, b"second")
    assert target.read_bytes() == b"first"
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        create_exclusive(link, b"x")
    assert not (tmp_path / "elsewhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "k"]


def _hold_lock(folder: str, seconds: float, ready: Any) -> None:
    from affidavit.attest.files import folder_lock

    with folder_lock(folder):
        ready.set()
        time.sleep(seconds)


def test_folder_lock_excludes_another_process(tmp_path: Path) -> None:
    from affidavit.attest.files import folder_lock

    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_lock, args=(str(tmp_path), 0.6, ready))
    holder.start()
    try:
        assert ready.wait(30)
        began = time.monotonic()
        with folder_lock(tmp_path):
            waited = time.monotonic() - began
    finally:
        holder.join(30)
    assert waited > 0.3  # it waited for the holder to let go
    assert list(tmp_path.iterdir()) == []  # no lock file
