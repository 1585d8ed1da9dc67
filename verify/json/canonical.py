r"""The three canonical encodings of docs/formats.md §1, named and never mixed up.

>>> from affidavit.verify.json.canonical import jcs, py_compact, py_spaced
>>> jcs({"b": 1.0, "a": "é"})
b'{"a":"\xc3\xa9","b":1}'
>>> py_compact({"b": 1.0, "a": "é"})
b'{"a":"\\u00e9","b":1.0}'
>>> py_spaced({"b": [1, 2]})
b'{"b": [1, 2]}'

One plain encoder per form, standard-library public API only (docs/adr/0021-plain-encoders.md).
``jcs`` is RFC 8785, byte-identical to ``rfc8785.dumps`` on everything both accept; an integer
outside +-(2^53-1) is ``canonical.unsafe_integer`` (I-JSON, RFC 7493 §2.2), never rounded. The
py-* forms (AiGentsy's) are *defined* as what ``json.dumps(obj, sort_keys=True)`` writes, with
``separators=(",", ":")`` (``py-compact``) or the default ones (``py-spaced``), so a
``json.JSONEncoder`` with those arguments is their encoder.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Final, Literal

from affidavit.verify import errors

__all__ = [
    "FORMS",
    "MAX_SAFE_INTEGER",
    "Form",
    "canonical_bytes",
    "es6_number",
    "es6_repr",
    "jcs",
    "py_compact",
    "py_spaced",
    "sha256_hex",
]

Form = Literal["jcs", "py-compact", "py-spaced"]
FORMS: Final[tuple[Form, ...]] = ("jcs", "py-compact", "py-spaced")

MAX_SAFE_INTEGER: Final = 2**53 - 1  # RFC 8785 §3.2.2.3 via I-JSON (RFC 7493 §2.2)


def jcs(value: Any) -> bytes:
    """Encode ``value`` as RFC 8785 canonical JSON bytes.

    Raises:
        ``canonical.*``: ``canonical.unsafe_integer``, ``canonical.non_string_key``,
            ``canonical.non_finite``, ``canonical.lone_surrogate``,
            ``canonical.unsupported_type`` (also a value nested too deeply to encode).
    """
    _refuse_what_has_no_jcs_form(value)
    try:
        text = _jcs_text(value)
    except RecursionError as e:  # a library caller's value nested past the interpreter's limit
        raise errors.CanonicalError(
            "canonical.unsupported_type", "the value is nested too deeply to encode"
        ) from e
    try:
        return text.encode("utf-8")  # RFC 8785 §3.2.4: UTF-8
    except UnicodeEncodeError as e:
        raise errors.CanonicalError(
            "canonical.lone_surrogate", "a string holds an unpaired surrogate"
        ) from e


def _refuse_what_has_no_jcs_form(value: Any) -> None:
    """Raise for the first thing in ``value`` RFC 8785 cannot write: one walk without recursion
    (a deep value is checked to its bottom); only the exact JSON types pass, a tuple as an array."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:  # RFC 8785 §3.2.3: member names are strings
                    raise errors.CanonicalError(
                        "canonical.non_string_key", f"object key {key!r} is not a string"
                    )
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # I-JSON, RFC 7493 §2.2
                raise errors.CanonicalError(
                    "canonical.unsafe_integer",
                    f"integer {item} is outside +-(2^53-1)",
                    details={"value": str(item)},
                )
        elif kind is float:
            if not math.isfinite(item):  # RFC 8785 §3.2.2.3: no NaN, no infinities
                raise errors.CanonicalError("canonical.non_finite", f"{item!r} has no JSON form")
        else:
            raise errors.CanonicalError(
                "canonical.unsupported_type", f"{type(item).__name__} is not a JSON type"
            )


def _jcs_text(value: Any) -> str:
    """The RFC 8785 text (§3.2) of a value :func:`_refuse_what_has_no_jcs_form` accepted."""
    kind = type(value)
    if kind is str:
        return _jcs_string(value)
    if kind is dict:
        # §3.2.3: members sorted by their names' UTF-16 code units, compared as unsigned numbers
        # (as big-endian UTF-16 bytes compare).
        names = sorted(value, key=lambda name: name.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(_jcs_string(k) + ":" + _jcs_text(value[k]) for k in names) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join(map(_jcs_text, value)) + "]"  # an array, in order
    if value is None:  # §3.2.2.1: literals
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return str(value)  # a safe integer: the ES6 form of the same double (§3.2.2.3)
    return es6_number(value)  # a finite float (§3.2.2.3)


# RFC 8785 §3.2.2.2: '"' and '\' escaped; U+0000..U+001F as \b \t \n \f \r where those exist,
# else \u00XX in lowercase hex; every other character written as itself.
_JCS_ESCAPES: Final = {
    **{chr(code): f"\\u{code:04x}" for code in range(0x20)},
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}
_JCS_NEEDS_ESCAPE: Final = re.compile('["\\\\\x00-\x1f]')


def _jcs_string(text: str) -> str:
    """A string as RFC 8785 §3.2.2.2 writes it, quotes included."""
    if _JCS_NEEDS_ESCAPE.search(text) is None:  # the usual string: written as it is
        return '"' + text + '"'
    return '"' + _JCS_NEEDS_ESCAPE.sub(lambda match: _JCS_ESCAPES[match.group()], text) + '"'


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
    sign, text = ("-", text[1:]) if text[0] == "-" else ("", text)
    mantissa, _, exponent_text = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    stripped = digits.rstrip("0")
    exponent = int(exponent_text or "0") - len(fraction) + len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # value = 0.d1d2..dk x 10^n (ES6 §7.1.12.1 step 5)
    if k <= n <= 21:  # step 6: an integer, zeros appended
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:  # step 7: a decimal point inside the digits
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:  # step 8: "0." and leading zeros
        body = "0." + "0" * (-n) + digits
    else:  # steps 9 and 10: an exponent, with its sign
        e = n - 1
        e_text = f"e+{e}" if e >= 0 else f"e-{-e}"
        body = digits + e_text if k == 1 else f"{digits[0]}.{digits[1:]}{e_text}"
    return sign + body


def es6_repr(value: float) -> str | None:
    """``repr(value)`` when that already is the ES6 form (RFC 8785 §3.2.2.3), else None.

    Without an exponent, repr and ES6 agree for 1e-4 <= |x| < 1e16 except integral values, which
    repr writes with a trailing ".0". Non-finite values have no JSON form: None.
    """
    text = repr(value)
    if "e" in text or text.endswith(".0") or not math.isfinite(value):
        return None
    return text


def _python_encoder(separators: tuple[str, str]) -> json.JSONEncoder:
    return json.JSONEncoder(
        sort_keys=True,
        separators=separators,
        allow_nan=False,  # NaN and infinities: ValueError, not the non-JSON "NaN"
        check_circular=False,  # a cycle: RecursionError, like any value nested too deeply
    )


_PY_COMPACT: Final = _python_encoder((",", ":"))
_PY_SPACED: Final = _python_encoder((", ", ": "))  # json.dumps's default separators


def py_compact(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` (AiGentsy's hashes).

    Raises:
        ``canonical.*``: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _python_form(_PY_COMPACT, value)


def py_spaced(value: Any) -> bytes:
    """Encode as ``json.dumps(value, sort_keys=True)`` (AiGentsy's event and legacy bundle hashes).

    Raises:
        ``canonical.*``: ``canonical.non_finite`` or ``canonical.unsupported_type``.
    """
    return _python_form(_PY_SPACED, value)


def _python_form(encoder: json.JSONEncoder, value: Any) -> bytes:
    """``value`` in a py-* form, refusing what has no JSON form (docs/formats.md §1)."""
    try:
        text = encoder.encode(value)
    except ValueError as e:  # allow_nan=False (or an integer past str()'s digit limit)
        raise errors.CanonicalError(
            "canonical.non_finite", "NaN and infinities have no JSON form"
        ) from e
    except TypeError as e:
        raise errors.CanonicalError("canonical.unsupported_type", str(e)) from e
    except RecursionError as e:
        raise errors.CanonicalError(
            "canonical.unsupported_type", "the value is cyclic or nested too deeply"
        ) from e
    return text.encode("ascii")


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
