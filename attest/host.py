"""What the host gives, read outside :mod:`affidavit.verify`: the clock, and files read under a cap.

>>> utc_now().tzinfo
datetime.timezone.utc

``verify`` reads neither time nor files itself (style.md rule 8); the layers above read them here,
each in one place (rule 18). On the ``verify bundle`` path (docs/adr/0003-cold-start.md): no
:mod:`pathlib`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from affidavit.verify import errors
from affidavit.verify.crypto.trusted_keys import MAX_KEY_FILE_BYTES

__all__ = ["read_capped", "read_key_bytes", "utc_now"]


def utc_now() -> datetime:
    """The system clock: the current time, aware, in UTC."""
    return datetime.now(UTC)


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the file at ``path``, at most ``limit + 1``: more than ``limit`` means too
    large (the caller checks). An endless file (``/dev/zero``) costs no more than a small one.

    Raises:
        ``io.unreadable``: the file cannot be read (a folder included); the message starts with
            the path, and the ``OSError`` is the cause.
    """
    try:
        with open(path, "rb") as handle:
            # As many bytes as the file says it holds, plus one: read(limit + 1) would allocate
            # the whole limit each call. A file holding more than it says is read on.
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(min(size, limit) + 1)
            if size < len(data) <= limit:
                data += handle.read(limit + 1 - len(data))
    except OSError as e:
        raise errors.ParseError("io.unreadable", f"{os.fspath(path)}: {e.strerror or e}") from e
    return data


def read_key_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a key file (public or private), at most
    :data:`~affidavit.verify.crypto.trusted_keys.MAX_KEY_FILE_BYTES`.

    Raises:
        ``io.unreadable``: the file cannot be read (a folder included).
        ``key.unrecognized``: it is larger than a key file.
    """
    data = read_capped(path, MAX_KEY_FILE_BYTES)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise errors.KeyMaterialError(
            "key.unrecognized", f"{os.fspath(path)}: too large for a key file"
        )
    return data
