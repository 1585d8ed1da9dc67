"""The json room: strict JSON in, canonical bytes out (docs/formats.md §1).

>>> from affidavit.verify.json import jcs, loads
>>> jcs(loads(b'{"b": 1.0, "a": "x"}'))
b'{"a":"x","b":1}'

:mod:`.strict` is the one loader of untrusted documents (duplicate keys, lone surrogates, depth
and size caps refused); :mod:`.canonical` writes the three canonical encodings (RFC 8785 JCS and
the AiGentsy ``py-compact``/``py-spaced`` forms), with :mod:`._fastpath` beside it; :mod:`.forms`
defines the textual forms of hashes and times once for every layer.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "DEFAULT_MAX_BYTES": "strict",
    "DEFAULT_MAX_ITEMS": "strict",
    "FORMS": "canonical",
    "Form": "canonical",
    "HEX64": "forms",
    "HEX64_PATTERN": "forms",
    "ITEM_MARK": "_fastpath",
    "KEY_MARK": "_fastpath",
    "MAX_SAFE_INTEGER": "canonical",
    "UTC_TIMESTAMP": "forms",
    "canonical_bytes": "canonical",
    "es6_repr": "canonical",
    "format_utc": "forms",
    "format_utc_fraction": "forms",
    "is_hex64": "forms",
    "jcs": "canonical",
    "load_object": "strict",
    "loads": "strict",
    "parse_utc": "forms",
    "py_compact": "canonical",
    "py_marked": "_fastpath",
    "py_spaced": "canonical",
    "same_digest": "forms",
    "sha256_hex": "canonical",
    "unmark": "canonical",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
