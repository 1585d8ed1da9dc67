"""The three canonical encodings: jcs byte-identical to rfc8785, py-* identical to json.dumps."""

from __future__ import annotations

import json
import math
import struct

import pytest
import rfc8785
from affidavit.verify import errors
from affidavit.verify.json.canonical import (
    canonical_bytes,
    es6_number,
    jcs,
    py_compact,
    py_spaced,
    sha256_hex,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import budget
from tests.conftest import raises_code

SAFE_INT = 2**53 - 1
# Keys and strings that stress UTF-16 ordering and escapes: astral characters sort before
# U+E000..U+FFFF in UTF-16 but after them by code point.
TRICKY_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            "b",
            "\x00",
            "\x1f",
            "\x7f",
            '"',
            "\\",
            "/",
            "\u2028",
            "é",
            "\ue000",
            "\uffff",
            "\U0001f600",
            "\U00010000",
        ]
    ),
    max_size=6,
)
TEXT = st.one_of(st.text(max_size=8), TRICKY_TEXT)
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            0.0,
            -0.0,
            1.0,
            1e16,
            1e21,
            1e-7,
            1e-6,
            5e-324,
            1.7976931348623157e308,
            0.1,
            333333333.3333333,
        ]
    ),
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE_INT, max_value=SAFE_INT)
    | FLOATS
    | TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=6),
    max_leaves=40,
)
ORDINARY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE_INT, max_value=SAFE_INT)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=40,
)


@given(JSON)
@settings(max_examples=budget(local=300, ci=1500))
def test_jcs_is_byte_identical_to_rfc8785(value: object) -> None:
    assert jcs(value) == rfc8785.dumps(value)


@given(ORDINARY)
@settings(max_examples=500)
def test_jcs_fast_path_is_byte_identical_to_rfc8785_on_ordinary_documents(value: object) -> None:
    assert jcs(value) == rfc8785.dumps(value)


@given(JSON)
@settings(max_examples=500)
def test_py_forms_are_exactly_json_dumps(value: object) -> None:
    assert py_compact(value) == json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    assert py_spaced(value) == json.dumps(value, sort_keys=True).encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (123e-20, "1.23e-18"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-1.5, "-1.5"),
        (9007199254740993.0, "9007199254740992"),
        (295147905179352830000.0, "295147905179352830000"),
    ],
)
def test_es6_number_layout(value: float, expected: str) -> None:
    # Expected strings are ECMAScript's Number.prototype.toString output (RFC 8785 Appendix B).
    assert es6_number(value) == expected


def test_rfc8785_appendix_b_sample() -> None:
    # RFC 8785 §3.2.3 / cyberphone README sample.
    document = {
        "numbers": [1e30, 4.50, 6, 2e-3, 0.000000000000000000000000001],
        "escaping": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "other": [None, True, False],
    }
    assert (
        jcs(document)
        == (
            '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","numbers":[1e+30,4.5,6,0.002,1e-27],'
            '"other":[null,true,false]}'
        ).encode()
    )


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 is D83D DE00 in UTF-16: before U+E000 there, after it by code point.
    document = {"\ue000": 1, "\U0001f600": 2, "a": 3}
    assert jcs(document) == '{"a":3,"\U0001f600":2,"\ue000":1}'.encode()
    assert jcs(document) == rfc8785.dumps(document)


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (2**53, "canonical.unsafe_integer"),
        (-(2**53), "canonical.unsafe_integer"),
        ({"a": [2**64]}, "canonical.unsafe_integer"),
        ({1: "x"}, "canonical.non_string_key"),
        (float("nan"), "canonical.non_finite"),
        ([float("inf")], "canonical.non_finite"),
        ("\ud800", "canonical.lone_surrogate"),
        ({"k": {1, 2}}, "canonical.unsupported_type"),
        (b"bytes", "canonical.unsupported_type"),
    ],
)
def test_jcs_rejections(value: object, code: str) -> None:
    with pytest.raises(errors.CanonicalError) as caught:
        jcs(value)
    assert caught.value.code == code


def test_safe_integer_bounds_are_accepted() -> None:
    assert jcs([SAFE_INT, -SAFE_INT]) == b"[9007199254740991,-9007199254740991]"


def test_py_forms_reject_non_finite_and_unsupported() -> None:
    with raises_code("canonical.non_finite"):
        py_compact(float("nan"))
    with raises_code("canonical.unsupported_type"):
        py_spaced({"k": object()})


def test_py_compact_matches_the_documented_contract_check_value() -> None:
    # docs/formats.md §2 check value, computed through py-compact.
    body = {
        "input_schema_version": "1.0.0",
        "output_fields": ["signal_a", "signal_b", "signal_c"],
        "validator_name": "starter_boolean_validator",
        "validator_version": "1.0.0",
    }
    assert (
        sha256_hex(py_compact(body))
        == "b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0"
    )


def test_canonical_bytes_dispatches_and_rejects_unknown_forms() -> None:
    assert canonical_bytes({"a": 1.0}, "jcs") == b'{"a":1}'
    assert canonical_bytes({"a": 1.0}, "py-compact") == b'{"a":1.0}'
    assert canonical_bytes({"a": 1.0}, "py-spaced") == b'{"a": 1.0}'
    with pytest.raises(errors.UsageError):
        canonical_bytes({}, "xml")  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=2**64 - 1))
@settings(max_examples=2000)
def test_es6_number_equals_rfc8785_for_any_bit_pattern(bits: int) -> None:
    value = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    if math.isnan(value) or math.isinf(value):
        with raises_code("canonical.non_finite"):
            es6_number(value)
        return
    assert es6_number(value) == rfc8785.dumps(value).decode()


def test_strings_shaped_like_markers_are_written_as_strings() -> None:
    # A string shaped like the placeholders and separator marks of the old fast path
    # (docs/adr/0021-plain-encoders.md): written as the string it is, byte-identical to rfc8785.
    lookalike = {"s": "\x00" + "ab" * 8 + "0\x00", "m": "\x01\x02", "n": [1.0, 1e-7]}
    assert jcs(lookalike) == rfc8785.dumps(lookalike)


@pytest.mark.parametrize("leaf", [[], {"a": 1.0}, {"\U0001f600": 1}])
def test_jcs_of_a_value_nested_too_deeply_is_a_canonical_error(leaf: object) -> None:
    # As a library jcs() takes any value: a nesting past the interpreter's recursion limit is
    # one domain error (issue 35), whichever encoder path the value takes.
    value: object = leaf
    for _ in range(5000):
        value = [value] if isinstance(leaf, list) else {"a": value}
    with raises_code("canonical.unsupported_type"):
        jcs(value)
