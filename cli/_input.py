"""Reading a command's input: a path or ``-`` for stdin, with a size cap."""

from __future__ import annotations

import sys
from typing import Final

from affidavit.attest.host import read_capped
from affidavit.verify import errors
from affidavit.verify.json.strict import DEFAULT_MAX_BYTES

__all__ = ["MAX_ARTEFACT_BYTES", "read_artefact", "read_input"]

MAX_ARTEFACT_BYTES: Final = 1024 * 1024 * 1024  # a receipt's source, content or chunk: 1 GiB


def read_input(
    source: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    too_large: tuple[type[errors.AffidavitError], str] = (errors.ParseError, "json.too_large"),
) -> bytes:
    """Read ``source`` (a path, or ``-`` for stdin) with a size cap, never more than cap + 1 bytes.
    Over the cap is ``too_large`` (the error class and code of what was being read: a DSSE
    envelope is ``dsse.too_large``, a CBOR statement ``cbor.too_large``), ``{"limit": max_bytes}``
    in its details.

    Raises:
        ``io.unreadable``: the file cannot be read.
        ``json.too_large``: the input is over ``max_bytes`` (unless ``too_large`` names another).
    """
    if source != "-":
        data = read_capped(source, max_bytes)
    else:
        try:
            data = sys.stdin.buffer.read(max_bytes + 1)
        except OSError as e:
            raise errors.ParseError("io.unreadable", f"{source}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        family, code = too_large
        message = f"{source}: larger than {max_bytes} bytes"
        raise family(code, message, details={"limit": max_bytes})
    return data


def read_artefact(source: str, *, max_bytes: int = MAX_ARTEFACT_BYTES) -> bytes:
    """:func:`read_input` for bytes that are not JSON (a receipt's source, content, chunks): over
    ``max_bytes`` is ``io.unreadable``, not ``json.too_large``.

    Raises:
        ``io.unreadable``: the file cannot be read, or it is over ``max_bytes``.
    """
    return read_input(source, max_bytes=max_bytes, too_large=(errors.ParseError, "io.unreadable"))
