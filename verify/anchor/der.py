"""A small, strict DER reader: just what RFC 3161 time-stamp tokens need (X.690 §8, §10).

>>> seq = read_one(bytes.fromhex("3006020105010100"))
>>> [t.tag for t in seq.children()], seq.children()[0].as_int()
([2, 1], 5)

Only DER is read (low-tag-number identifiers, shortest definite lengths, one element with no
trailing bytes, minimal INTEGERs and OID arcs, strict BOOLEANs and GeneralizedTime); anything
else is :class:`DerError`. It parses and trusts nothing: :mod:`.rfc3161` checks.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final, NamedTuple

__all__ = [
    "BOOLEAN",
    "GENERALIZED_TIME",
    "INTEGER",
    "NULL",
    "OCTET_STRING",
    "OID",
    "SEQUENCE",
    "SET",
    "DerError",
    "Element",
    "context",
    "read_one",
]

# Universal tags (X.680 §8.4), constructed bit 0x20 included where DER requires it.
BOOLEAN: Final = 0x01
INTEGER: Final = 0x02
OCTET_STRING: Final = 0x04
NULL: Final = 0x05
OID: Final = 0x06
GENERALIZED_TIME: Final = 0x18
SEQUENCE: Final = 0x30
SET: Final = 0x31

MAX_DEPTH: Final = 32
_GENTIME = re.compile(r"([0-9]{14})(?:\.([0-9]*[1-9]))?Z")


class DerError(ValueError):
    """The bytes are not strict DER, or not the element the caller expected."""


def context(number: int, *, constructed: bool = True) -> int:
    """The identifier octet of a context-specific tag ``[number]`` (X.690 §8.1.2)."""
    return 0x80 | (0x20 if constructed else 0) | number


class Element(NamedTuple):
    """One DER element: its identifier octet, its contents and its whole encoding."""

    tag: int
    content: bytes
    encoded: bytes
    depth: int = 0

    @property
    def constructed(self) -> bool:
        return bool(self.tag & 0x20)

    def expect(self, tag: int, what: str) -> Element:
        """Return self if it has ``tag``, else raise :class:`DerError` naming ``what``."""
        if self.tag != tag:
            raise DerError(f"{what}: expected tag 0x{tag:02x}, got 0x{self.tag:02x}")
        return self

    def children(self) -> list[Element]:
        if not self.constructed:
            raise DerError(f"tag 0x{self.tag:02x} is primitive, it has no children")
        if self.depth >= MAX_DEPTH:
            raise DerError("nesting too deep")
        out: list[Element] = []
        offset = 0
        while offset < len(self.content):
            element, offset = _read(self.content, offset, self.depth + 1)
            out.append(element)
        return out

    def as_int(self) -> int:
        """An INTEGER's value (X.690 §8.3), minimal encoding required."""
        body = self.expect(INTEGER, "INTEGER").content
        if not body:
            raise DerError("INTEGER with no contents")
        if len(body) > 1 and (
            (body[0] == 0x00 and body[1] < 0x80) or (body[0] == 0xFF and body[1] >= 0x80)
        ):
            raise DerError("INTEGER not minimally encoded (X.690 §8.3.2)")
        return int.from_bytes(body, "big", signed=True)

    def as_bool(self) -> bool:
        """A BOOLEAN; DER allows only 0x00 and 0xFF (X.690 §11.1)."""
        body = self.expect(BOOLEAN, "BOOLEAN").content
        if body not in (b"\x00", b"\xff"):
            raise DerError("BOOLEAN is not 0x00 or 0xFF (X.690 §11.1)")
        return body == b"\xff"

    def as_octets(self) -> bytes:
        """An OCTET STRING's bytes (primitive only, as DER requires)."""
        return self.expect(OCTET_STRING, "OCTET STRING").content

    def as_oid(self) -> str:
        """An OBJECT IDENTIFIER in dotted form (X.690 §8.19), minimal arcs required."""
        body = self.expect(OID, "OBJECT IDENTIFIER").content
        if not body or body[-1] & 0x80:
            raise DerError("OBJECT IDENTIFIER is empty or truncated")
        arcs: list[int] = []
        value = 0
        start = True
        for byte in body:
            if start and byte == 0x80:
                raise DerError("OBJECT IDENTIFIER arc not minimally encoded (X.690 §8.19.2)")
            value = (value << 7) | (byte & 0x7F)
            start = not byte & 0x80
            if start:
                arcs.append(value)
                value = 0
        first = min(arcs[0] // 40, 2)
        return ".".join(str(a) for a in (first, arcs[0] - 40 * first, *arcs[1:]))

    def as_generalized_time(self) -> datetime:
        """A GeneralizedTime in UTC (RFC 3161 §2.4.2: ``YYYYMMDDhhmmss[.s...]Z``)."""
        text = self.expect(GENERALIZED_TIME, "GeneralizedTime").content.decode("ascii", "replace")
        match = _GENTIME.fullmatch(text)
        if match is None:
            raise DerError(f"GeneralizedTime {text!r} is not YYYYMMDDhhmmss[.f]Z (DER)")
        try:
            moment = datetime.strptime(match.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            raise DerError(f"GeneralizedTime {text!r} is not a real date") from None
        fraction = match.group(2) or ""
        return moment.replace(microsecond=int((fraction + "000000")[:6])) if fraction else moment


def read_one(data: bytes) -> Element:
    """Read exactly one DER element that fills ``data``.

    Raises:
        DerError: not strict DER, or bytes are left after the element.
    """
    element, end = _read(bytes(data), 0, 0)
    if end != len(data):
        raise DerError(f"{len(data) - end} trailing byte(s) after the DER element")
    return element


def _read(data: bytes, offset: int, depth: int) -> tuple[Element, int]:
    """Read one element at ``offset``; return it and the offset just past it (X.690 §8.1)."""
    if offset + 2 > len(data):
        raise DerError("truncated DER element")
    tag = data[offset]
    if tag & 0x1F == 0x1F:
        raise DerError("high-tag-number form is not used by RFC 3161 structures")
    first = data[offset + 1]
    header = 2
    if first < 0x80:
        length = first
    elif first == 0x80:
        raise DerError("indefinite length (BER) is not DER (X.690 §10.1)")
    else:
        count = first & 0x7F
        if count > 4 or offset + 2 + count > len(data):
            raise DerError("DER length field too long or truncated")
        raw = data[offset + 2 : offset + 2 + count]
        length = int.from_bytes(raw, "big")
        if raw[0] == 0 or length < 0x80:
            raise DerError("DER length not in its shortest form (X.690 §10.1)")
        header += count
    end = offset + header + length
    if end > len(data):
        raise DerError("DER element runs past the end of its container")
    return Element(tag, data[offset + header : end], data[offset:end], depth), end
