"""Strict CBOR for SCITT: one decoder for untrusted bytes, one deterministic encoder.

>>> decode(bytes.fromhex("a201020304"), what="map")
{1: 2, 3: 4}
>>> decode(bytes.fromhex("a201020102"), what="map")
Traceback (most recent call last):
...
affidavit.verify.errors.ScittError: map: a map holds the key 1 twice (RFC 8949 §5.6)
>>> encode({3: 1, 1: [b"a"]}).hex()
'a2018141610301'

Decoding is two passes: a walk of the item heads (RFC 8949 §3) that refuses what is not shortest
and definite (§4.2.1), unnamed tags, excess depth and trailing bytes; then ``cbor2`` builds plain
``dict`` and ``list``, refusing duplicate keys and invalid UTF-8. Map key order is not checked
(RFC 9052 signs the protected header as sent). :func:`encode` is core deterministic (§4.2.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import cbor2
from affidavit.verify import errors

__all__ = ["COSE_TAGS", "MAX_CBOR_BYTES", "MAX_DEPTH", "decode", "encode"]

MAX_CBOR_BYTES: Final = 4 * 1024 * 1024
MAX_DEPTH: Final = 16
COSE_TAGS: Final = frozenset({18})  # RFC 9052 §2: COSE_Sign1_Tagged
_MAX_ITEMS: Final = 65_536  # data items in one input: bounds the work of a small hostile input


def _fail(code: str, what: str, message: str, **details: Any) -> errors.ScittError:
    return errors.ScittError(code, f"{what}: {message}", details=details or None)


class _Scanner:
    """Pass 1 (module docstring): a walk over item heads, nothing built."""

    def __init__(self, data: bytes, what: str, max_depth: int, tags: frozenset[int]) -> None:
        self.data = data
        self.tags = tags
        self.what = what
        self.max_depth = max_depth
        self.items = 0

    def argument(self, at: int) -> tuple[int, int, int, int]:
        """The major type, additional information, argument and the offset after the head."""
        data, what = self.data, self.what
        if at >= len(data):
            raise _fail("cbor.malformed", what, "truncated: a data item is missing", offset=at)
        initial = data[at]
        major, info = initial >> 5, initial & 0x1F
        if info < 24:
            return major, info, info, at + 1
        if info == 31:
            if major in (2, 3, 4, 5):
                raise _fail(
                    "cbor.indefinite_length",
                    what,
                    "an indefinite-length string, array or map (RFC 8949 §4.2.1)",
                    offset=at,
                )
            raise _fail("cbor.malformed", what, "a break or reserved item (RFC 8949 §3)", offset=at)
        if info > 27:
            raise _fail(
                "cbor.malformed", what, "a reserved additional information value", offset=at
            )
        width = 1 << (info - 24)
        end = at + 1 + width
        if end > len(data):
            raise _fail("cbor.malformed", what, "truncated: an argument is cut off", offset=at)
        value = int.from_bytes(data[at + 1 : end], "big")
        if major == 7:
            if info == 24 and value < 32:  # RFC 8949 §3.3: not well-formed
                raise _fail("cbor.malformed", what, "a two-byte simple value below 32", offset=at)
            return major, info, value, end  # floats keep their width
        shortest = 24 if value < 0x100 else 25 if value < 0x10000 else 26 if value < 2**32 else 27
        if value < 24 or info != shortest:
            raise _fail(
                "cbor.non_shortest",
                what,
                f"the argument {value} is not in its shortest form (RFC 8949 §4.2.1)",
                offset=at,
            )
        return major, info, value, end

    def item(self, at: int, depth: int) -> int:
        """Check the item at ``at``; returns the offset after it."""
        self.items += 1
        if self.items > _MAX_ITEMS:
            raise _fail("cbor.too_large", self.what, f"more than {_MAX_ITEMS} data items")
        major, _, value, at = self.argument(at)
        if major in (2, 3):  # byte and text strings
            if value > len(self.data) - at:
                raise _fail("cbor.malformed", self.what, "truncated: a string runs past the end")
            return at + value
        if major in (4, 5, 6):  # arrays, maps, tags nest
            if depth >= self.max_depth:
                raise _fail(
                    "cbor.too_deep", self.what, f"nested deeper than {self.max_depth} levels"
                )
            if major == 6:
                if value not in self.tags:
                    raise _fail(
                        "cbor.malformed", self.what, f"tag {value} is not one this reader uses"
                    )
                return self.item(at, depth + 1)
            count = value * 2 if major == 5 else value
            if count > len(self.data) - at:  # every item is at least one byte
                raise _fail("cbor.malformed", self.what, "truncated: more items than bytes left")
            for _ in range(count):
                at = self.item(at, depth + 1)
        return at


def _plain(value: Any, what: str) -> Any:
    """cbor2's frozen containers as ``dict`` and ``list``; map keys integers, text or bytes."""
    if isinstance(value, bytes | str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, int | str | bytes):
                raise _fail(
                    "cbor.malformed", what, "a map key that is not an integer, text or bytes"
                )
            out[key] = _plain(item, what)
        return out
    if isinstance(value, list | tuple):
        return [_plain(v, what) for v in value]
    if isinstance(value, cbor2.CBORTag):
        return cbor2.CBORTag(value.tag, _plain(value.value, what))
    return value


def decode(
    data: bytes,
    *,
    what: str,
    max_bytes: int = MAX_CBOR_BYTES,
    max_depth: int = MAX_DEPTH,
    tags: frozenset[int] = COSE_TAGS,
) -> Any:
    """The one data item of ``data``, read strictly (module docstring); tags other than ``tags``
    are refused, so cbor2 never interprets one.

    Raises:
        ``cbor.too_large``: over ``max_bytes``, or more data items than the cap.
        ``cbor.malformed``, ``cbor.trailing_bytes``, ``cbor.indefinite_length``,
            ``cbor.non_shortest``, ``cbor.duplicate_key``, ``cbor.too_deep``.
    """
    if len(data) > max_bytes:
        raise _fail(
            "cbor.too_large",
            what,
            f"{len(data)} bytes, over the cap of {max_bytes}",
            limit=max_bytes,
        )
    end = _Scanner(data, what, max_depth, tags).item(0, 0)
    if end != len(data):
        raise _fail(
            "cbor.trailing_bytes",
            what,
            f"{len(data) - end} byte(s) after the data item",
            offset=end,
        )
    try:
        value = cbor2.loads(
            data,
            allow_indefinite=False,
            allow_duplicate_keys=False,
            max_depth=max_depth + 1,
            str_errors="strict",
        )
    except cbor2.CBORDecodeError as e:
        text = str(e)
        if "duplicate" in text.lower():
            raise _fail("cbor.duplicate_key", what, _duplicate_message(text)) from None
        raise _fail("cbor.malformed", what, text.splitlines()[0] if text else "not CBOR") from None
    except (ValueError, TypeError, RecursionError) as e:  # a tag cbor2 could not interpret
        raise _fail("cbor.malformed", what, f"{type(e).__name__}: {e}") from None
    return _plain(value, what)


def _duplicate_message(text: str) -> str:
    key = text.split("key", 1)[-1].strip(" :") if "key" in text else ""
    named = f"the key {key} " if key and len(key) < 80 else "a key "
    return f"a map holds {named}twice (RFC 8949 §5.6)"


def _deterministic(value: Any) -> Any:
    if isinstance(value, Mapping):
        pairs = [(encode(k), _deterministic(v), k) for k, v in value.items()]
        pairs.sort(key=lambda pair: pair[0])  # RFC 8949 §4.2.1: bytewise order of encoded keys
        return {k: v for _, v, k in pairs}
    if isinstance(value, list | tuple):
        return [_deterministic(v) for v in value]
    if isinstance(value, cbor2.CBORTag):
        return cbor2.CBORTag(value.tag, _deterministic(value.value))
    return value


def encode(value: Any) -> bytes:
    """``value`` in CBOR's core deterministic encoding (RFC 8949 §4.2.1): shortest arguments,
    definite lengths, map keys in the bytewise order of their encodings.

    Raises:
        ``cbor.malformed``: a value CBOR cannot carry.
    """
    try:
        return cbor2.dumps(_deterministic(value), canonical=False)
    except (cbor2.CBOREncodeError, TypeError, ValueError) as e:
        raise errors.ScittError("cbor.malformed", f"cannot encode: {e}") from None
