"""Strict JSON input: each rejection has its code and location; valid JSON reads as json does."""

from __future__ import annotations

import json
import math

import pytest
from affidavit.verify import errors
from affidavit.verify.json.strict import DEFAULT_MAX_DEPTH, MAX_INT_DIGITS, load_object, loads
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=30,
)


@given(JSON_VALUES)
@settings(max_examples=300)
def test_valid_documents_read_exactly_as_the_standard_library(value: object) -> None:
    text = json.dumps(value)
    assert loads(text.encode()) == json.loads(text)
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize(
    ("document", "code", "line", "column"),
    [
        (b'{"a": 1, "a": 2}', "json.duplicate_key", 1, 10),
        (b'{"x": {"k": 1,\n "k": 2}}', "json.duplicate_key", 2, 2),
        (b'{"a": NaN}', "json.non_finite", 1, 7),
        (b"[Infinity]", "json.non_finite", 1, 2),
        (b"[-Infinity]", "json.non_finite", 1, 2),
        (b"[1e400]", "json.non_finite", 1, 2),
        (b'["\\ud800"]', "json.lone_surrogate", 1, 3),
        (b'["ok", "\\udc00x"]', "json.lone_surrogate", 1, 9),
        (b'{"\\uDBFF": 1}', "json.lone_surrogate", 1, 3),
        (b'["\xed\xa0\x80"]', "json.lone_surrogate", 1, 3),
        (b'["\xff"]', "json.invalid_utf8", 1, 3),
        (b'["\xc3"]', "json.invalid_utf8", 1, 3),
        (b"\xef\xbb\xbf{}", "json.bom", 1, 1),
        (b"{} []", "json.trailing_data", 1, 4),
        (b"{} x", "json.trailing_data", 1, 4),
        (b'{"a" 1}', "json.syntax", 1, 6),
        (b"", "json.syntax", 1, 1),
        (b'["a\nb"]', "json.syntax", 1, 4),
        (b"[01]", "json.syntax", 1, 3),
        # Integers over 4,300 digits: Python's int() refuses them (CPython's int_max_str_digits).
        (b'{"a": ' + b"1" * 4301 + b"}", "json.number_too_large", 1, 7),
        (
            b'{"s": "' + b"2" * 5000 + b'",\n "n": [0, -' + b"9" * 5000 + b"]}",
            "json.number_too_large",
            2,
            11,
        ),
    ],
)
def test_each_rejection_has_its_code_and_location(
    document: bytes, code: str, line: int, column: int
) -> None:
    with pytest.raises(errors.ParseError) as caught:
        loads(document)
    assert caught.value.code == code
    assert (caught.value.line, caught.value.column) == (line, column)
    assert caught.value.exit_code == 2


def test_paired_escaped_surrogates_are_one_character() -> None:
    assert loads(b'["\\ud83d\\ude00"]') == ["\U0001f600"]


def test_escaped_backslash_before_u_is_text_not_a_surrogate() -> None:
    assert loads(b'["\\\\ud800"]') == ["\\ud800"]


def test_high_surrogate_followed_by_a_second_high_is_rejected() -> None:
    with raises_code("json.lone_surrogate"):
        loads(b'["\\ud800\\ud800"]')


@pytest.mark.parametrize("depth", [DEFAULT_MAX_DEPTH + 1, 10_000, 1_000_000])
def test_deep_nesting_is_refused_before_parsing(depth: int) -> None:
    with raises_code("json.too_deep") as caught:
        loads(b"[" * depth + b"]" * depth)
    assert caught.value.code == "json.too_deep"
    assert caught.value.column == DEFAULT_MAX_DEPTH + 1


def test_depth_at_the_limit_is_accepted_and_brackets_in_strings_do_not_count() -> None:
    depth = DEFAULT_MAX_DEPTH
    assert loads(b"[" * depth + b"]" * depth) is not None
    many_brackets = json.dumps({"s": "[" * 1000 + "{" * 1000}).encode()
    assert loads(many_brackets) == {"s": "[" * 1000 + "{" * 1000}


def test_limits_are_arguments() -> None:
    with raises_code("json.too_deep"):
        loads(b"[[[]]]", max_depth=2)
    with raises_code("json.too_large") as caught:
        loads(b"[1, 2, 3]", max_bytes=8)
    assert caught.value.code == "json.too_large"


def test_load_object_requires_an_object() -> None:
    assert load_object(b'{"a": 1}') == {"a": 1}
    with raises_code("json.wrong_type") as caught:
        load_object(b"[1]", what="contract")
    assert "contract must be a JSON object, not an array" in caught.value.message


def test_key_order_is_kept_and_numbers_keep_their_type() -> None:
    value = loads(b'{"b": 1, "a": 1.0, "c": -0.0}')
    assert list(value) == ["b", "a", "c"]
    assert type(value["b"]) is int
    assert type(value["a"]) is float
    assert math.copysign(1, value["c"]) == -1


@given(st.binary(max_size=200))
@settings(max_examples=500)
def test_arbitrary_bytes_never_escape_as_anything_but_a_json_error(data: bytes) -> None:
    outcome: object
    try:
        outcome = loads(data)
    except errors.ParseError as e:
        outcome = e
    assert not isinstance(outcome, Exception) or outcome.code.startswith("json.")


def test_integers_up_to_the_digit_limit_are_read_exactly() -> None:
    digits = "7" * MAX_INT_DIGITS
    assert loads(f"[{digits}, -{digits}]".encode()) == [int(digits), -int(digits)]


def test_huge_integer_is_refused_whatever_the_interpreter_limit() -> None:
    import sys

    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # unlimited: the parser's own cap must still hold
    try:
        with raises_code("json.number_too_large") as caught:
            loads(b"[" + b"1" * (MAX_INT_DIGITS + 1) + b"]")
    finally:
        sys.set_int_max_str_digits(before)
    assert (caught.value.code, caught.value.line, caught.value.column) == (
        "json.number_too_large",
        1,
        2,
    )
    assert caught.value.exit_code == 2


def test_a_lower_interpreter_limit_is_named_with_its_position() -> None:
    import sys

    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        with raises_code("json.number_too_large") as caught:
            loads(b'{"a": [1,\n  ' + b"5" * 2000 + b"]}")
    finally:
        sys.set_int_max_str_digits(before)
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert caught.value.details["limit"] == 1000


def test_long_fractions_and_exponents_are_not_integers() -> None:
    assert loads(b"[0." + b"1" * 5000 + b"]") == [0.1111111111111111]
    with raises_code("json.non_finite"):
        loads(b"[" + b"1" * 5000 + b".0]")


@given(st.integers(min_value=1, max_value=6000), st.booleans())
@settings(max_examples=60)
def test_integers_of_any_length_read_or_fail_with_the_number_code(n: int, neg: bool) -> None:
    literal = ("-" if neg else "") + "9" * n
    document = ("[" + literal + "]").encode()
    if n <= MAX_INT_DIGITS:
        assert loads(document) == [int(literal)]
        return
    with raises_code("json.number_too_large") as caught:
        loads(document)
    assert (caught.value.code, caught.value.line, caught.value.column) == (
        "json.number_too_large",
        1,
        2,
    )
