"""The strict CBOR decoder (verify/scitt/cbor.py): each refusal with its exact code, and the
deterministic encoder (RFC 8949 §4.2.1)."""

from __future__ import annotations

import cbor2
import pytest
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import MAX_DEPTH, decode, encode
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("hex_input", "code"),
    [
        ("a201020102", "cbor.duplicate_key"),  # {1: 2, 1: 2}
        ("a2a1616101a1616101", "cbor.malformed"),  # map keys that are maps
        ("9f01ff", "cbor.indefinite_length"),  # [_ 1]
        ("bf0102ff", "cbor.indefinite_length"),  # {_ 1: 2}
        ("5f4161ff", "cbor.indefinite_length"),  # (_ h'61')
        ("7f6161ff", "cbor.indefinite_length"),
        ("0102", "cbor.trailing_bytes"),
        ("a10102ff", "cbor.trailing_bytes"),
        ("1817", "cbor.non_shortest"),  # 23 in one extra byte
        ("190017", "cbor.non_shortest"),
        ("1a000000ff", "cbor.non_shortest"),
        ("1b00000000ffffffff", "cbor.non_shortest"),
        ("d81201", "cbor.non_shortest"),  # tag 18 in one extra byte
        ("5800", "cbor.non_shortest"),  # an empty bstr with a one-byte length
        ("1c", "cbor.malformed"),  # reserved additional information
        ("f818", "cbor.malformed"),  # a two-byte simple value below 32
        ("ff", "cbor.malformed"),  # a lone break
        ("43ab", "cbor.malformed"),  # truncated bstr
        ("9a7fffffff", "cbor.malformed"),  # an array announcing more items than bytes
        ("", "cbor.malformed"),
        ("c11a514b67b0", "cbor.malformed"),  # tag 1 (a date): not one COSE uses
        ("62c328", "cbor.malformed"),  # invalid UTF-8 text
    ],
)
def test_refused_with_its_code(hex_input: str, code: str) -> None:
    with pytest.raises(errors.ScittError) as caught:
        decode(bytes.fromhex(hex_input), what="input")
    assert caught.value.code == code
    assert caught.value.exit_code == 2


def test_oversize_is_refused_before_any_decoding() -> None:
    data = encode(b"x" * 100)
    with pytest.raises(errors.ScittError) as caught:
        decode(data, what="input", max_bytes=len(data) - 1)
    assert caught.value.code == "cbor.too_large"
    assert decode(data, what="input", max_bytes=len(data)) == b"x" * 100


def test_nesting_beyond_the_cap_is_refused() -> None:
    deep = bytes.fromhex("81" * (MAX_DEPTH + 1)) + b"\x00"
    with pytest.raises(errors.ScittError) as caught:
        decode(deep, what="input")
    assert caught.value.code == "cbor.too_deep"
    assert decode(bytes.fromhex("81" * MAX_DEPTH) + b"\x00", what="input") is not None


def test_key_order_is_not_required_but_the_encoder_sorts() -> None:
    # RFC 9052 signs the protected bytes as sent: {3: 1, 1: 2} decodes; the encoder writes 1 first
    assert decode(bytes.fromhex("a203010102"), what="map") == {3: 1, 1: 2}
    assert encode({3: 1, 1: 2}).hex() == "a201020301"
    # RFC 8949 §4.2.1 bytewise order of the encoded keys: 24 (0x1818) before -1 (0x20)
    assert list(decode(encode({-1: 0, 24: 0}), what="map")) == [24, -1]


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64 - 1) | st.binary() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.integers(-100, 100) | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(values)
def test_what_the_encoder_writes_decodes_to_the_same_value(value: object) -> None:
    data = encode(value)
    assert decode(data, what="value") == value
    assert encode(decode(data, what="value")) == data  # deterministic: one encoding per value
    assert cbor2.loads(data) == cbor2.loads(cbor2.dumps(value))
