r"""The three canonical encodings of docs/formats.md §1, named and never mixed up.

>>> from affidavit.verify.json.canonical import jcs, py_compact, py_spaced
>>> jcs({"b": 1.0, "a": "é"})
b'{"a":"\xc3\xa9","b":1}'
>>> py_compact({"b": 1.0, "a": "é"})
b'{"a":"\\u00e9","b":1.0}'
>>> py_spaced({"b": [1, 2]})
b'{"b": [1, 2]}'

``jcs``
    RFC 8785: UTF-8, object keys sorted by UTF-16 code units (§3.2.3), numbers in the ES6
    ``Number.prototype.toString`` form (§3.2.2.3), minimal string escapes (§3.2.2.2). Integers
    outside +-(2^53-1) are refused (``canonical.unsafe_integer``, I-JSON RFC 7493 §2.2) rather than
    rounded. Byte-identical to ``rfc8785.dumps`` on everything both accept (tests prove it).
``py-compact``
    ``json.dumps(obj, sort_keys=True, separators=(",", ":"))``: ASCII-only, floats as ``repr``.
``py-spaced``
    The same with the default separators ``", "`` and ``": "``.

Speed (see ``bench/``): ``jcs`` first walks the value once, checking what RFC 8785 forbids and
choosing an encoder. When no float's ``repr`` differs from its ES6 form and no key lies outside the
Basic Multilingual Plane (whose code-point order could differ from UTF-16 order), the standard
library's C encoder already writes the RFC 8785 bytes. When only floats differ, the C encoder writes
a copy with placeholders that are then replaced by the ES6 forms. Otherwise a small pure-Python
encoder writes the document. The tricks (the C encoder built once, the placeholders, and the
sentinel-marked py-* text re-exported here as :data:`py_marked` / :func:`unmark`) live in the
private :mod:`affidavit.verify.json._fastpath`, with what each saves, measured.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
from collections.abc import Callable
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.json._fastpath import (
    ITEM_MARK,
    KEY_MARK,
    c_jcs_text,
    one_shot,
    py_marked,
    unmark,
    with_es6_floats,
)

__all__ = [
    "FORMS",
    "ITEM_MARK",
    "KEY_MARK",
    "Form",
    "canonical_bytes",
    "es6_number",
    "es6_repr",
    "jcs",
    "py_compact",
    "py_marked",
    "py_spaced",
    "sha256_hex",
    "unmark",
]

Form = Literal["jcs", "py-compact", "py-spaced"]
FORMS: Final[tuple[Form, ...]] = ("jcs", "py-compact", "py-spaced")

MAX_SAFE_INTEGER: Final = 2**53 - 1  # RFC 8785 §3.2.2.3 via I-JSON (RFC 7493 §2.2)

_encode_string: Final = json.encoder.encode_basestring  # C; RFC 8785 §3.2.2.2 escapes

# The C encoder built once per form (_fastpath trick 1: ~1.3 µs less per call than json.dumps).
_py_compact_text: Final = one_shot(ensure_ascii=True, item=",", key=":")
_py_spaced_text: Final = one_shot(ensure_ascii=True, item=", ", key=": ")


def jcs(value: Any) -> bytes:
    """Encode ``value`` as RFC 8785 canonical JSON bytes.

    Raises:
        ``canonical.*``: ``canonical.unsafe_integer``, ``canonical.non_string_key``,
            ``canonical.non_finite``, ``canonical.lone_surrogate``,
            ``canonical.unsupported_type`` (also a value nested too deeply to encode).
    """
    path = _scan(value)
    try:
        if path is _Path.C_ENCODER:
            text = c_jcs_text(value)  # _fastpath trick 1: already the RFC 8785 text
        elif path is _Path.FLOAT_PLACEHOLDERS:
            # _fastpath trick 3; None when a document's string looked like a placeholder
            placed = with_es6_floats(value, _es6_unless_repr)
            text = "".join(_encode_slow(value)) if placed is None else placed
        else:
            text = "".join(_encode_slow(value))
    except RecursionError as e:  # a library caller's value nested past the interpreter's limit
        raise errors.CanonicalError(
            "canonical.unsupported_type", "the value is nested too deeply to encode"
        ) from e
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise errors.CanonicalError(
            "canonical.lone_surrogate", "a string holds an unpaired surrogate"
        ) from e


def py_compact(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` (AiGentsy's hashes).

    Raises:
        ``canonical.*``: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _encode_python(_py_compact_text, value)


def py_spaced(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True)`` (AiGentsy's event and legacy bundle hashes).

    Raises:
        ``canonical.*``: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _encode_python(_py_spaced_text, value)


_ENCODERS: Final = {"jcs": jcs, "py-compact": py_compact, "py-spaced": py_spaced}


def canonical_bytes(value: Any, form: Form) -> bytes:
    """Encode ``value`` in the named form.

    Raises:
        ``usage.invalid``: the form is unknown.
        ``canonical.*``: the value has no encoding in that form.
    """
    try:
        encoder = _ENCODERS[form]
    except KeyError:
        raise errors.UsageError(
            f"unknown canonical form {form!r}; choose one of {', '.join(FORMS)}"
        ) from None
    return encoder(value)


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data`` (docs/formats.md notation ``H(x)``)."""
    return hashlib.sha256(data).hexdigest()


def es6_number(value: float) -> str:
    """The ES6 ``Number.prototype.toString`` form of a finite double (RFC 8785 §3.2.2.3).

    Python's ``repr`` already yields the shortest digit string that round-trips, choosing the
    closest when several do (ES6 §7.1.12.1 step 5); only the layout differs.

    Raises:
        ``canonical.non_finite``: NaN or an infinity.
    """
    if math.isnan(value) or math.isinf(value):
        raise errors.CanonicalError("canonical.non_finite", f"{value!r} has no JSON form")
    if value == 0:
        return "0"  # both +0 and -0 (ES6 §7.1.12.1 step 2)
    text = repr(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent_text = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    exponent = int(exponent_text or "0") - len(fraction)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # value = 0.d1d2..dk x 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        e_text = f"e+{e}" if e >= 0 else f"e-{-e}"
        body = digits + e_text if k == 1 else f"{digits[0]}.{digits[1:]}{e_text}"
    return sign + body


# ------------------------------------------------------------------------------------------


def _encode_python(encode: Callable[[Any], str], value: Any) -> bytes:
    try:
        return encode(value).encode("ascii")
    except ValueError as e:  # allow_nan=False
        raise errors.CanonicalError(
            "canonical.non_finite", "NaN and infinities have no JSON form"
        ) from e
    except TypeError as e:
        raise errors.CanonicalError("canonical.unsupported_type", str(e)) from e
    except RecursionError as e:
        raise errors.CanonicalError(
            "canonical.unsupported_type", "the value is cyclic or nested too deeply"
        ) from e


def es6_repr(value: float) -> str | None:
    """``repr(value)`` when that already is the ES6 form (RFC 8785 §3.2.2.3), else None.

    Without an exponent, repr and ES6 agree for 1e-4 <= |x| < 1e16 except integral values, which
    repr writes with a trailing ".0". Non-finite values have no JSON form: None.
    """
    text = repr(value)
    if "e" in text or text.endswith(".0") or not math.isfinite(value):
        return None
    return text


class _Path(enum.Enum):
    C_ENCODER = "the C encoder's bytes are already RFC 8785"
    FLOAT_PLACEHOLDERS = "only some floats differ: C encoder with placeholders, then ES6 forms"
    PYTHON = "key order may differ: the pure-Python encoder"


def _scan(value: Any) -> _Path:
    """Validate ``value`` for RFC 8785 and choose the encoder that writes its exact bytes."""
    floats = astral = False
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    raise errors.CanonicalError(
                        "canonical.non_string_key", f"object key {key!r} is not a string"
                    )
                if not key.isascii() and max(key) > "\uffff":
                    astral = True  # UTF-16 order may differ from code points (RFC 8785 §3.2.3)
            extend(item.values())
        elif kind is list:
            extend(item)
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                raise errors.CanonicalError(
                    "canonical.unsafe_integer",
                    f"integer {item} is outside +-(2^53-1)",
                    details={"value": str(item)},
                )
        elif kind is float:
            if math.isnan(item) or math.isinf(item):
                raise errors.CanonicalError("canonical.non_finite", f"{item!r} has no JSON form")
            if es6_repr(item) is None:
                floats = True
        elif kind is tuple:
            extend(item)
            astral = True  # written by the pure-Python encoder, which treats tuples as arrays
        else:
            raise errors.CanonicalError(
                "canonical.unsupported_type", f"{type(item).__name__} is not a JSON type"
            )
    if astral:
        return _Path.PYTHON
    return _Path.FLOAT_PLACEHOLDERS if floats else _Path.C_ENCODER


def _es6_unless_repr(value: float) -> str | None:
    """The ES6 form of a float whose ``repr`` is not already that form, else None."""
    return None if es6_repr(value) is not None else es6_number(value)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _encode_slow(value: Any) -> list[str]:
    out: list[str] = []
    _write(value, out.append)
    return out


def _write(value: Any, emit: Any) -> None:
    if value is None:
        emit("null")
    elif value is True:
        emit("true")
    elif value is False:
        emit("false")
    elif type(value) is str:
        emit(_encode_string(value))
    elif type(value) is int:
        emit(int.__repr__(value))
    elif type(value) is float:
        emit(es6_number(value))
    elif type(value) is dict:
        emit("{")
        for index, key in enumerate(sorted(value, key=_utf16_key)):
            if index:
                emit(",")
            emit(_encode_string(key))
            emit(":")
            _write(value[key], emit)
        emit("}")
    else:  # list or tuple; anything else was refused by _needs_slow_path
        emit("[")
        for index, item in enumerate(value):
            if index:
                emit(",")
            _write(item, emit)
        emit("]")
