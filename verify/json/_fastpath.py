"""Fast paths of the canonical encoders (docs/formats.md §1), kept apart from the plain paths.

Private: :mod:`affidavit.verify.json.canonical` is the interface and re-exports what callers use
(``py_marked``, ``unmark``, ``ITEM_MARK``, ``KEY_MARK``). Every trick here yields exactly the bytes
of its plain path, and tests compare them (tests/verify/json/test_canonical.py against
``json.dumps`` and ``rfc8785``; tests/verify/bundles/test_bundle_fastpath.py for marked text).
Measured with ``timeit`` in one run (Python 3.11, 2 cores, best of 5 repeats, per call; "the
vector bundle" is vectors/bundles/stamped-accepted-2.0.0.json: 4 events, 1 proof, 4.7 kB).

1. **The C encoder, built once** (:func:`one_shot`). What: CPython's private
   ``json.encoder.c_make_encoder`` is built once per form and called directly. Why:
   ``json.dumps(value, sort_keys=True, ...)`` builds a ``JSONEncoder`` and a C encoder on every
   call, and every hash is one call. Saves: py-compact of one event 2.0 µs instead of 3.3 µs
   (``json.dumps``), of the whole vector bundle 20.7 µs instead of 24.3 µs: the ~1.3 µs set-up
   per call, most of the cost of the small values hashed one by one. Fallback: where the C
   encoder is absent (not CPython), ``JSONEncoder.encode``, the plain path itself.
2. **Sentinel-marked py-* text** (:data:`py_marked`, :func:`unmark`). What: one encoding with
   U+0001 / U+0002 as the item / key separators; ``unmark`` turns it into py-compact or py-spaced
   bytes. In ASCII mode the encoder escapes every character below U+0020 inside strings, so the
   two marks occur only where separators are. Why: a bundle's events and proofs are hashed on
   their own and again inside the bundle body; the verifier encodes each once and splices the
   texts (verify/bundles/hashing.py ``encode_once``). Saves: the bundle hash, the four event
   hashes and the proof hash of the vector bundle in 37 µs instead of 45 µs (``bundle_hash``,
   ``event_hash`` and ``proof_hash``, each encoding its value again). Fallback: none needed
   (standard library only); a value that does not encode raises as ``json.dumps`` would, and the
   verifier's plain path then reports it.
3. **Float placeholders for jcs** (:func:`with_es6_floats`). What: when only some floats'
   ``repr`` differs from their ES6 form (RFC 8785 §3.2.2.3: ``1.0`` is ``1``, ``1e-07`` is
   ``1e-7``), those floats are replaced in a copy by placeholder strings holding a fresh random
   token, the C encoder writes the copy, and each placeholder is replaced by the float's ES6
   text. Why: the C encoder is faster than the pure-Python RFC 8785 writer, which is the plain
   path. Saves: ``jcs`` text of the vector bundle with one ``1.0`` added 43 µs instead of 74 µs;
   of 200 small objects with one ``1.0`` among them 471 µs instead of 864 µs; still ahead when
   every object holds such a float (645 µs instead of 748 µs). Fallback: when a placeholder is
   not found exactly once (a document's own string looks like one), None, and the caller writes
   the document with the pure-Python encoder.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, Final, Literal

__all__ = [
    "ITEM_MARK",
    "KEY_MARK",
    "c_jcs_text",
    "one_shot",
    "py_marked",
    "unmark",
    "with_es6_floats",
]

_encode_string: Final = json.encoder.encode_basestring  # C; RFC 8785 §3.2.2.2 escapes
_encode_ascii: Final = json.encoder.encode_basestring_ascii  # C; every non-ASCII as \uXXXX


def one_shot(*, ensure_ascii: bool, item: str, key: str) -> Callable[[Any], str]:
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
    strings = _encode_ascii if ensure_ascii else _encode_string
    # Arguments: markers, default, string encoder, indent, key and item separators, sort_keys,
    # skipkeys, allow_nan.
    encoder = make(None, reference.default, strings, None, key, item, True, False, False)
    return lambda value: "".join(encoder(value, 0))


c_jcs_text: Final = one_shot(ensure_ascii=False, item=",", key=":")
"""The C encoder's text with RFC 8785's separators and minimal escapes (RFC 8785 §3.2.2.2); it is
the jcs text exactly when every float's ``repr`` is its ES6 form and no key lies outside the
Basic Multilingual Plane (canonical.py decides)."""

# py-compact and py-spaced differ only in their separators. In ASCII mode every character below
# U+0020 inside a string is escaped, so U+0001 and U+0002 occur in this encoder's text exactly
# where the item and key separators are: one marked encoding yields both forms (see unmark).
ITEM_MARK: Final = "\x01"
KEY_MARK: Final = "\x02"
py_marked: Final = one_shot(ensure_ascii=True, item=ITEM_MARK, key=KEY_MARK)
"""``value`` as marked py-* text; raises ValueError, TypeError or RecursionError like json.dumps."""
_SEPARATORS: Final = {"py-compact": (b",", b":"), "py-spaced": (b", ", b": ")}


def unmark(marked_text: str, form: Literal["py-compact", "py-spaced"]) -> bytes:
    """The exact ``form`` bytes of text written by :data:`py_marked`."""
    item, key = _SEPARATORS[form]
    return marked_text.encode("ascii").replace(b"\x01", item).replace(b"\x02", key)


_PLACEHOLDER: Final = re.compile(r'"\\u0000([0-9a-f]{16})(\d+)\\u0000"')


def with_es6_floats(value: Any, es6_form: Callable[[float], str | None]) -> str | None:
    """:data:`c_jcs_text` of ``value`` with each float for which ``es6_form`` gives a text swapped
    for that text; None when the placeholders cannot be told apart from the document's strings.

    Such floats are replaced, in a copy, by placeholder strings carrying a fresh random token;
    the C encoder writes each as ``"\\u0000<token><n>\\u0000"``, which is then replaced by the
    float's ES6 form. Every placeholder must be found exactly once: if a document's own string
    happened to look like one, the count differs and the caller writes the document the plain way.
    """
    token = os.urandom(8).hex()
    forms: list[str] = []

    def swap(item: Any) -> Any:
        kind = type(item)
        if kind is float:
            form = es6_form(item)
            if form is None:
                return item
            forms.append(form)
            return f"\x00{token}{len(forms) - 1}\x00"
        if kind is dict:
            return {key: swap(child) for key, child in item.items()}
        if kind is list:
            return [swap(child) for child in item]
        return item

    text = c_jcs_text(swap(value))
    found = 0

    def form_of(match: re.Match[str]) -> str:
        nonlocal found
        if match.group(1) != token:
            return match.group(0)  # a document's own string of the same shape: left as it is
        found += 1
        return forms[int(match.group(2))]

    replaced = _PLACEHOLDER.sub(form_of, text)
    return replaced if found == len(forms) else None
