"""Strict JSON input: the one loader every command uses for untrusted documents.

>>> from affidavit.verify.json.strict import loads
>>> loads(b'{"a": [1, 2.5, "x"]}')
{'a': [1, 2.5, 'x']}

Each refusal has its own ``json.*`` code and a 1-based line and column (the table of
docs/formats.md §1 "Strict input"). Size is checked before decoding, depth and item count by one
linear pre-scan (deep input never reaches the recursive parser), then the standard library's C
scanner parses with hooks; :data:`MAX_INT_DIGITS` is our cap, so the verdict never depends on the
interpreter's ``int_max_str_digits``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from functools import partial
from typing import Any, Final, NoReturn

from affidavit.verify import errors

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_ITEMS",
    "MAX_INT_DIGITS",
    "load_object",
    "loads",
]

DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH: Final = 128
# Items (values and keys) one document may make, docs/formats.md §1: each costs up to ~230 bytes
# built from as little as two bytes of input ("1," or "{}").
DEFAULT_MAX_ITEMS: Final = 1_000_000
# CPython's default int_max_str_digits (Python 3.11+): the longest integer literal read.
MAX_INT_DIGITS: Final = 4300

# The pre-scan is one linear pass. Escaped quotes are made inert first: backslash runs pair up
# from the left as in a JSON string (RFC 8259 §7), so after "\\\\" -> "__" a quote is escaped
# exactly when a backslash is left before it (same offsets). Then a string is a quote, non-quotes
# and its closing quote or the end; any other run of non-punctuation is one scalar token. Up to
# the first backslash outside a string (a syntax error) this finds the parser's depths.
_STRING_OR_BRACKET = re.compile(rb'"[^"]*(?:"|\Z)|[\[\]{}]|[^\s,:\[\]{}"]+')
# In order: an escaped backslash (consumed, so "\\ud800" is text), a high surrogate escape
# directly followed by a low one (a pair, RFC 8259 §7), or any other surrogate escape (lone).
_ESCAPE = re.compile(
    r"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|u(?P<lone>[dD][89a-fA-F][0-9a-fA-F]{2}))"
)
# Any escaped surrogate (paired or not): only then can the parsed value hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# A raw lone surrogate cannot come from valid UTF-8; json only makes one from an escape.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A run of digits longer than MAX_INT_DIGITS anywhere: only then can an integer be too long.
_LONG_DIGITS: Final = re.compile(f"[0-9]{{{MAX_INT_DIGITS + 1}}}")
# Strings (skipped) and number tokens, to locate a too-long integer literal.
_STRING_OR_NUMBER: Final = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?', re.DOTALL
)


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Any:
    """Parse one strict JSON document (``str`` is re-encoded as UTF-8) into plain Python values.

    Raises:
        ``json.*``: each refusal with its own code (docs/formats.md §1).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise errors.ParseError(
            "json.too_large",
            f"document is {len(raw)} bytes, over the limit of {max_bytes}",
            details={"size": len(raw), "limit": max_bytes},
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raise errors.ParseError(
            "json.bom", "document starts with a UTF-8 byte-order mark", line=1, column=1
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = _position_of_byte(raw, e.start)
        code = "json.lone_surrogate" if _is_encoded_surrogate(raw, e.start) else "json.invalid_utf8"
        raise errors.ParseError(
            code, f"invalid UTF-8 at byte {e.start}", line=line, column=column
        ) from e
    _check_depth(raw, max_depth, max_items)
    try:
        value = _decode(text)
    except _DuplicateKey as e:
        _raise_duplicate(text, e.args[0])
    except _NonFinite as e:
        literal = e.args[0]
        _raise_at(text, text.find(literal), "json.non_finite", f"non-finite number {literal}")
    except _IntegerTooLong:
        _raise_integer_too_long(text)
    except json.JSONDecodeError as e:
        code, message = "json.syntax", e.msg
        if e.msg == "Extra data":
            code, message = "json.trailing_data", "data after the JSON value"
        raise errors.ParseError(code, message, line=e.lineno, column=e.colno) from None
    except RecursionError:  # pragma: no cover - the depth pre-scan makes this unreachable
        raise errors.ParseError("json.too_deep", "nesting too deep") from None
    # An escaped surrogate needs a backslash: a memchr-speed test skips the search (issue 34).
    if b"\\" in raw and _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        _raise_lone_surrogate(text)
    return value


def _decode(text: str) -> Any:
    # The C fast path converts integers itself and, under the default int_max_str_digits
    # (== MAX_INT_DIGITS), raises ValueError for a longer one: only then is the checking hook
    # used. Without that limit, or with a higher one, a long digit run sends the text to the hook,
    # so the verdict never depends on the interpreter (docs/formats.md §1).
    limit = sys.get_int_max_str_digits()
    if (limit == 0 or limit > MAX_INT_DIGITS) and _LONG_DIGITS.search(text):
        return _CHECKED_DECODER.decode(text)
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # "Exceeds the limit (N digits) for integer string conversion"
        return _CHECKED_DECODER.decode(text)


def load_object(
    data: bytes | bytearray | memoryview | str, *, what: str = "document", **limits: int
) -> dict[str, Any]:
    """Like :func:`loads`, but the top-level value must be an object.

    Raises:
        ``json.*``: as :func:`loads`; ``json.wrong_type`` when the value is not an object.
    """
    value = loads(data, **limits)
    if not isinstance(value, dict):
        raise errors.ParseError(
            "json.wrong_type",
            f"{what} must be a JSON object, not {_json_type(value)}",
            line=1,
            column=1,
        )
    return value


# The hooks: what they raise propagates out of the C scanner's decode() unchanged.
class _DuplicateKey(Exception):
    """``args[0]``: the key."""


class _NonFinite(Exception):
    """``args[0]``: the literal."""


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


class _IntegerTooLong(Exception):
    pass


def _parse_int(literal: str) -> int:
    if len(literal.removeprefix("-")) > MAX_INT_DIGITS:
        raise _IntegerTooLong
    try:
        return int(literal)
    except ValueError:  # an interpreter whose own limit is set lower than ours
        raise _IntegerTooLong from None


def _reject_constant(literal: str) -> NoReturn:
    raise _NonFinite(literal)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):  # e.g. 1e400: not representable, and never silently infinite
        raise _NonFinite(literal)
    return value


# strict: control characters inside strings are errors (RFC 8259 §7).
_hooked = partial(json.JSONDecoder, object_pairs_hook=_object_pairs, strict=True,
                  parse_constant=_reject_constant, parse_float=_parse_float)  # fmt: skip
_DECODER: Final = _hooked()
_CHECKED_DECODER: Final = _hooked(parse_int=_parse_int)


def _check_depth(raw: bytes, max_depth: int, max_items: int) -> None:
    # Fast path: in a readable document every item but the first follows a "[", "{", "," or
    # ":", so fewer of those than the limits (or fewer bytes than max_items) pass both.
    brackets = raw.count(b"[") + raw.count(b"{")
    if brackets <= max_depth and (
        len(raw) < max_items or 1 + brackets + raw.count(b",") + raw.count(b":") <= max_items
    ):
        return
    depth = items = 0
    inert = raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    for match in _STRING_OR_BRACKET.finditer(inert):
        token = match.group()
        if token in (b"]", b"}"):
            depth -= 1
            continue
        items += 1  # docs/formats.md §1: an object, array, string, number or literal
        if items > max_items:
            message = f"more than {max_items} items (values and keys)"
            raise _over_limit("json.too_many_items", message, raw, match.start(), max_items)
        if token in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                message = f"nesting deeper than {max_depth}"
                raise _over_limit("json.too_deep", message, raw, match.start(), max_depth)


def _over_limit(code: str, message: str, raw: bytes, at: int, limit: int) -> errors.ParseError:
    line, column = _position_of_byte(raw, at)
    return errors.ParseError(code, message, line=line, column=column, details={"limit": limit})


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _raise_at(text: str, at: int, code: str, message: str, **details: object) -> NoReturn:
    """Raise ``code`` at character ``at`` of ``text`` (line and column 0 when ``at`` is -1)."""
    line, column = _position_of_char(text, at) if at >= 0 else (0, 0)
    raise errors.ParseError(code, message, line=line, column=column, details=details)


def _raise_lone_surrogate(text: str) -> NoReturn:
    lone = next((m for m in _ESCAPE.finditer(text) if m["lone"]), None)
    if lone is None:  # pragma: no cover - the parsed value holds one, so the text does
        _raise_at(text, -1, "json.lone_surrogate", "unpaired surrogate")
    message = f"unpaired surrogate \\u{lone['lone'].lower()}"
    _raise_at(text, lone.start(), "json.lone_surrogate", message)


def _raise_duplicate(text: str, key: str) -> NoReturn:
    needle = json.dumps(key)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    _raise_at(text, second, "json.duplicate_key", f"duplicate key {needle}", key=key)


def _raise_integer_too_long(text: str) -> NoReturn:
    # The limit is ours, or the interpreter's when it is set lower (as low as 640). The first
    # plain integer token outside strings over it is the one the hook refused (document order).
    interpreter = sys.get_int_max_str_digits()
    limit = MAX_INT_DIGITS if interpreter == 0 else min(interpreter, MAX_INT_DIGITS)
    at = -1
    for match in _STRING_OR_NUMBER.finditer(text):
        token = match.group()
        digits = token.removeprefix("-")
        if token[0] != '"' and digits.isdigit() and len(digits) > limit:
            at = match.start()
            break
    message = f"integer literal longer than {limit} digits"
    _raise_at(text, at, "json.number_too_large", message, limit=limit)


def _position_of_char(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _position_of_byte(raw: bytes, index: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, index) + 1
    start = raw.rfind(b"\n", 0, index) + 1
    return line, len(raw[start:index].decode("utf-8", "replace")) + 1


def _is_encoded_surrogate(raw: bytes, index: int) -> bool:
    # UTF-8 encodings of U+D800..U+DFFF start with 0xED followed by 0xA0..0xBF.
    return (
        raw[index : index + 1] == b"\xed"
        and 0xA0 <= (raw[index + 1 : index + 2] or b"\x00")[0] <= 0xBF
    )


def _json_type(value: Any) -> str:
    names: dict[type, str] = {list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    names[float] = "a number"
    return "null" if value is None else names.get(type(value), type(value).__name__)
