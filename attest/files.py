"""Files Affidavit writes: atomically replaced files, and private files and folders.

Private means owner-only: folders 0700, files 0600. Databases hold API-key digests and facts of
every scope; SQLite gives a database's ``-wal``, ``-shm`` and ``-journal`` files its mode, so
creating it 0600 keeps those private too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from affidavit.verify import errors

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "atomic_write",
    "create_all",
    "create_exclusive",
    "folder_lock",
    "fsync_dir",
    "private_database",
    "private_dir",
    "private_file",
]

PRIVATE_DIR_MODE: Final = 0o700
PRIVATE_FILE_MODE: Final = 0o600
_SQLITE_SIDE_FILES: Final = ("-wal", "-shm", "-journal")


def atomic_write(path: str | Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder with ``mode``,
    fsync, rename, fsync of the folder.

    Raises:
        OSError: the folder is not writable, or the disk is full (``path`` is then unchanged).
    """
    target = Path(path)
    temporary = _temporary(target, data, mode)
    try:
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def create_exclusive(path: str | Path, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """Create ``path`` holding ``data`` unless it exists, atomically: whoever sees the file sees
    all of it, and of several processes racing to create it exactly one succeeds. A temporary
    file is hard-linked to ``path``: ``link(2)`` fails when ``path`` exists (even as a dangling
    symlink), where ``rename`` would replace it and ``O_EXCL`` alone shows a partial file.

    Raises:
        FileExistsError: ``path`` exists (nothing is changed).
        OSError: the folder is not writable, the disk is full, or the file system has no hard
            links (``path`` is then absent).
    """
    target = Path(path)
    temporary = _temporary(target, data, mode)
    try:
        os.link(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    fsync_dir(target.parent)


def create_all(files: Sequence[tuple[Path, bytes, int]]) -> None:
    """:func:`create_exclusive` for every ``(path, data, mode)`` of ``files``, or for none.

    Raises:
        ``io.exists``: one of them exists (nothing is written).
        OSError: as :func:`create_exclusive` (nothing is left).
    """
    for path, _, _ in files:
        if path.exists() or path.is_symlink():
            raise errors.ParseError("io.exists", f"{path} exists; refusing to overwrite it")
    written: list[Path] = []
    try:
        for path, data, mode in files:
            try:
                create_exclusive(path, data, mode=mode)
            except FileExistsError:
                raise errors.ParseError(
                    "io.exists", f"{path} exists; refusing to overwrite it"
                ) from None
            written.append(path)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise


def _temporary(target: Path, data: bytes, mode: int) -> Path:
    """A new file beside ``target`` holding ``data``, fsynced, with ``mode`` before any byte."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), mode)  # mkstemp makes 0600; the mode holds before the name
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(temporary)


def fsync_dir(folder: str | Path) -> None:
    """fsync the folder ``folder`` (so a new or renamed name in it survives a power cut)."""
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


@contextlib.contextmanager
def folder_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder ``path`` itself (no lock file to leave behind),
    waiting for it; the kernel releases it when the holder exits, however it exits.

    Raises:
        OSError: ``path`` is not a readable folder.
    """
    handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def private_dir(path: str | Path) -> Path:
    """Make the folder ``path`` (and missing parents) if absent, 0700; an existing folder keeps
    its mode (it may be a shared parent the operator chose).

    Raises:
        OSError: it cannot be created, or exists and is not a folder.
    """
    target = Path(path)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        if not target.is_dir():
            raise
        return target
    os.chmod(target, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    return target


def private_file(path: str | Path) -> bool:
    """Create ``path`` empty with mode 0600 (``O_EXCL``, never following a symlink) unless it
    exists; True when it was created here.

    Raises:
        OSError: the folder is missing or not writable.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(path, flags, PRIVATE_FILE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(handle, PRIVATE_FILE_MODE)  # the umask cannot widen, but be explicit
    finally:
        os.close(handle)
    return True


def private_database(path: str | Path, *, tighten: bool = False) -> bool:
    """Create an SQLite database file empty and private when absent (True then). With
    ``tighten``, an existing one and its side files lose group and other permissions.

    Raises:
        OSError: the folder cannot be created, or a file cannot be changed.
    """
    target = Path(path)
    private_dir(target.parent if str(target.parent) else Path("."))
    created = private_file(target)
    if tighten and not created:
        for candidate in (target, *(Path(f"{target}{s}") for s in _SQLITE_SIDE_FILES)):
            try:
                mode = candidate.lstat().st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISREG(mode) and mode & (stat.S_IRWXG | stat.S_IRWXO):
                os.chmod(candidate, PRIVATE_FILE_MODE)
    return created
