"""Writing files so that a crash leaves either the old bytes or the new ones, never a mix."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: str | Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, fsync, rename.

    The folder is fsynced too, so the rename itself survives a power cut. ``mode`` is applied to
    the new file before it becomes visible (use 0o600 for anything secret).

    Raises:
        OSError: the folder is not writable, or the disk is full (``path`` is then unchanged).
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
