"""Codes of the json room: strict parsing (``json.*``), files (``io.*``) and canonical forms.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import INPUT, Code

PARSE: Final = (
    Code(
        "io.exists",
        INPUT,
        "Refused to overwrite an existing file the caller did not allow replacing.",
    ),
    Code("io.unreadable", INPUT, "A file could not be read."),
    Code(
        "io.worker_failed",
        INPUT,
        "A worker process of a bulk run ended unexpectedly (killed, out of memory); the inputs"
        " it held got no result (docs/adr/0023).",
    ),
    Code("json.bom", INPUT, "The document starts with a byte-order mark."),
    Code(
        "json.duplicate_key",
        INPUT,
        "An object has the same key twice; the document could be read two ways.",
    ),
    Code("json.invalid_utf8", INPUT, "The bytes are not valid UTF-8."),
    Code(
        "json.lone_surrogate",
        INPUT,
        "A string holds an unpaired UTF-16 surrogate (raw or escaped).",
    ),
    Code(
        "json.non_finite",
        INPUT,
        "NaN, Infinity or -Infinity literal, or a number too large for a double.",
    ),
    Code("json.number_too_large", INPUT, "An integer literal has more than 4,300 digits."),
    Code("json.syntax", INPUT, "Not well-formed JSON (RFC 8259)."),
    Code("json.too_deep", INPUT, "Arrays and objects nest deeper than the limit (default 128)."),
    Code(
        "json.too_many_items",
        INPUT,
        "More objects and arrays than the limit (default 1,000,000) in one document.",
    ),
    Code("json.too_large", INPUT, "The document is larger than the size limit (default 64 MiB)."),
    Code("json.trailing_data", INPUT, "Data follows the JSON value."),
    Code("json.wrong_type", INPUT, "The JSON value is not of the expected type (e.g. an object)."),
)

CANONICAL: Final = (
    Code(
        "canonical.lone_surrogate",
        INPUT,
        "A string holds an unpaired surrogate, which has no UTF-8 form.",
    ),
    Code("canonical.non_finite", INPUT, "NaN and infinities have no JSON form."),
    Code("canonical.non_string_key", INPUT, "An object key is not a string."),
    Code(
        "canonical.unsafe_integer",
        INPUT,
        "An integer outside +-(2^53-1) cannot be encoded by RFC 8785 (I-JSON).",
    ),
    Code(
        "canonical.unsupported_type",
        INPUT,
        "A value is not a JSON type (dict, list, str, int, float, bool, None).",
    ),
)
