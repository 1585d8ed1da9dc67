"""What the host gives, read outside :mod:`affidavit.verify`: the clock, and files read under a cap.

>>> utc_now().tzinfo
datetime.timezone.utc

``verify`` takes time and bytes as arguments and reads neither itself (style.md rule 8); the layers
above it read them here, each in one place (rule 18): :func:`utc_now` is the clock of every
command, log, witness and server (a library function that needs the time takes a ``clock`` or a
moment, and this is its default), and :func:`read_capped` reads every file whose size is bounded
(keys, states, contracts, receipts, the command line's inputs); :func:`read_key_bytes` is it for
key files, public or private, whose bytes :mod:`affidavit.verify.crypto.trusted_keys` parses.

Imported by the command line's ``verify bundle`` path (docs/adr/0003-cold-start.md): it imports
no :mod:`pathlib`; :mod:`datetime` is loaded there already (click's), so it is imported at the top
(docs/adr/0022-click-alone.md, "Amendment (issue 32)").
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
    """The bytes of the file at ``path``, at most ``limit + 1`` of them: more than ``limit`` means
    the file is larger than ``limit`` (the caller checks, and says what too large means for what
    it reads; the first bytes are there for a caller that looks into them). A huge or endless file
    (``/dev/zero``) costs no more than a small one.

    Raises:
        ``io.unreadable``: the file cannot be read (a folder included); the message starts with
            the path, and the ``OSError`` is the cause.
    """
    try:
        with open(path, "rb") as handle:
            # As many bytes as the file says it holds (plus one, to see its end), not a
            # limit-sized buffer: read(limit + 1) allocates the whole limit (64 MiB for JSON
            # input) on every call, a quarter of the cost of reading a bundle (issue 34). A
            # file that holds more than it says (a device, a pipe, a growing file) is read on,
            # still to limit + 1 bytes at most.
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
