"""The json room: strict JSON in, canonical bytes out (docs/formats.md §1).

>>> from affidavit.verify.json import jcs, loads
>>> jcs(loads(b'{"b": 1.0, "a": "x"}'))
b'{"a":"x","b":1}'

:mod:`.strict` is the one loader of untrusted documents (duplicate keys, lone surrogates, depth
and size caps refused); :mod:`.canonical` writes the three canonical encodings (RFC 8785 JCS and
the AiGentsy ``py-compact``/``py-spaced`` forms), one plain encoder each; :mod:`.forms` defines the
textual forms of hashes and times once for every layer.
"""

from __future__ import annotations

from affidavit.verify.json.canonical import (
    FORMS,
    MAX_SAFE_INTEGER,
    Form,
    canonical_bytes,
    es6_repr,
    jcs,
    py_compact,
    py_spaced,
    sha256_hex,
)
from affidavit.verify.json.forms import (
    HEX64,
    HEX64_PATTERN,
    UTC_TIMESTAMP,
    format_utc,
    format_utc_fraction,
    is_hex64,
    parse_utc,
    same_digest,
)
from affidavit.verify.json.strict import DEFAULT_MAX_BYTES, DEFAULT_MAX_ITEMS, load_object, loads

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ITEMS",
    "FORMS",
    "HEX64",
    "HEX64_PATTERN",
    "MAX_SAFE_INTEGER",
    "UTC_TIMESTAMP",
    "Form",
    "canonical_bytes",
    "es6_repr",
    "format_utc",
    "format_utc_fraction",
    "is_hex64",
    "jcs",
    "load_object",
    "loads",
    "parse_utc",
    "py_compact",
    "py_spaced",
    "same_digest",
    "sha256_hex",
]
