r"""The three canonical encodings of formats.md §1, named and never mixed up.

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
encoder writes the document.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import os
import re
from collections.abc import Callable
from typing import Any, Final, Literal

from affidavit.verify import errors

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


def _one_shot(*, ensure_ascii: bool, item: str, key: str) -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True, allow_nan=False, ...)`` without its per-call set-up.

    CPython's C encoder is built once and called directly (what ``JSONEncoder.encode`` does on
    every call). Cycle tracking is off: a cyclic value ends in RecursionError, which callers map to
    ``canonical.unsupported_type``; values parsed from JSON never have cycles. Falls back to
    ``JSONEncoder.encode`` where the C encoder is absent; tests compare both with json.dumps.
    """
    reference = json.JSONEncoder(
        ensure_ascii=ensure_ascii, allow_nan=False, sort_keys=True, separators=(item, key)
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return reference.encode
    strings = json.encoder.encode_basestring_ascii if ensure_ascii else _encode_string
    # Arguments: markers, default, string encoder, indent, key and item separators, sort_keys,
    # skipkeys, allow_nan.
    encoder = make(None, reference.default, strings, None, key, item, True, False, False)
    return lambda value: "".join(encoder(value, 0))


_fast_jcs: Final = _one_shot(ensure_ascii=False, item=",", key=":")
_py_compact_text: Final = _one_shot(ensure_ascii=True, item=",", key=":")
_py_spaced_text: Final = _one_shot(ensure_ascii=True, item=", ", key=": ")

# py-compact and py-spaced differ only in their separators. In ASCII mode every character below
# U+0020 inside a string is escaped, so U+0001 and U+0002 occur in this encoder's text exactly
# where the item and key separators are: one marked encoding yields both forms (see unmark).
ITEM_MARK: Final = "\x01"
KEY_MARK: Final = "\x02"
py_marked: Final = _one_shot(ensure_ascii=True, item=ITEM_MARK, key=KEY_MARK)
"""``value`` as marked py-* text; raises ValueError, TypeError or RecursionError like json.dumps."""
_SEPARATORS: Final = {"py-compact": (b",", b":"), "py-spaced": (b", ", b": ")}


def unmark(marked_text: str, form: Literal["py-compact", "py-spaced"]) -> bytes:
    """The exact ``form`` bytes of text written by :data:`py_marked`."""
    item, key = _SEPARATORS[form]
    return marked_text.encode("ascii").replace(b"\x01", item).replace(b"\x02", key)


def jcs(value: Any) -> bytes:
    """Encode ``value`` as RFC 8785 canonical JSON bytes.

    Raises:
        CanonicalError: ``canonical.unsafe_integer``, ``canonical.non_string_key``,
            ``canonical.non_finite``, ``canonical.lone_surrogate``,
            ``canonical.unsupported_type``.
    """
    path = _scan(value)
    if path is _Path.C_ENCODER:
        text = _fast_jcs(value)
    elif path is _Path.FLOAT_PLACEHOLDERS:
        text = _with_es6_floats(value)
    else:
        text = "".join(_encode_slow(value))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise errors.CanonicalError(
            "canonical.lone_surrogate", "a string holds an unpaired surrogate"
        ) from e


def py_compact(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` (AiGentsy's hashes).

    Raises:
        CanonicalError: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _encode_python(_py_compact_text, value)


def py_spaced(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True)`` (AiGentsy's event and legacy bundle hashes).

    Raises:
        CanonicalError: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _encode_python(_py_spaced_text, value)


_ENCODERS: Final = {"jcs": jcs, "py-compact": py_compact, "py-spaced": py_spaced}


def canonical_bytes(value: Any, form: Form) -> bytes:
    """Encode ``value`` in the named form.

    Raises:
        UsageError: the form is unknown.
        CanonicalError: the value has no encoding in that form.
    """
    try:
        encoder = _ENCODERS[form]
    except KeyError:
        raise errors.UsageError(
            f"unknown canonical form {form!r}; choose one of {', '.join(FORMS)}"
        ) from None
    return encoder(value)


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data`` (formats.md notation ``H(x)``)."""
    return hashlib.sha256(data).hexdigest()


def es6_number(value: float) -> str:
    """The ES6 ``Number.prototype.toString`` form of a finite double (RFC 8785 §3.2.2.3).

    Python's ``repr`` already yields the shortest digit string that round-trips, choosing the
    closest when several do (ES6 §7.1.12.1 step 5); only the layout differs.

    Raises:
        CanonicalNonFinite: NaN or an infinity.
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


_PLACEHOLDER: Final = re.compile(r'"\\u0000([0-9a-f]{16})(\d+)\\u0000"')


def _with_es6_floats(value: Any) -> str:
    """The C encoder's output with each float whose repr is not its ES6 form swapped in.

    Such floats are replaced, in a copy, by placeholder strings carrying a fresh random token;
    the C encoder writes each as ``"\\u0000<token><n>\\u0000"``, which is then replaced by the
    float's ES6 form. Every placeholder must be found exactly once: if a document's own string
    happened to look like one, the count differs and the pure-Python encoder writes it instead.
    """
    token = os.urandom(8).hex()
    forms: list[str] = []

    def swap(item: Any) -> Any:
        kind = type(item)
        if kind is float:
            if es6_repr(item) is not None:
                return item
            forms.append(es6_number(item))
            return f"\x00{token}{len(forms) - 1}\x00"
        if kind is dict:
            return {key: swap(child) for key, child in item.items()}
        if kind is list:
            return [swap(child) for child in item]
        return item

    text = _fast_jcs(swap(value))
    found = 0

    def form_of(match: re.Match[str]) -> str:
        nonlocal found
        if match.group(1) != token:
            return match.group(0)  # a document's own string of the same shape: left as it is
        found += 1
        return forms[int(match.group(2))]

    replaced = _PLACEHOLDER.sub(form_of, text)
    return replaced if found == len(forms) else "".join(_encode_slow(value))


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
