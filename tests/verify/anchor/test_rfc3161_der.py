"""The strict DER reader under RFC 3161 tokens (X.690 §8, §10, §11)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from affidavit.verify.anchor.der import DerError, context, read_one
from hypothesis import given
from hypothesis import strategies as st


def _tlv(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(raw)]) + raw + body


def test_sequence_children_and_values() -> None:
    seq = read_one(bytes.fromhex("300d02010501010006035504031300"))
    assert seq.constructed
    values = seq.children()
    assert values[0].as_int() == 5
    assert values[1].as_bool() is False
    assert values[2].as_oid() == "2.5.4.3"
    assert values[3].tag == 0x13


@pytest.mark.parametrize(
    ("hex_", "why"),
    [
        ("3080020100", "indefinite length (BER)"),
        ("30810302 0100", "long-form length for a short body"),
        ("3082000302 0100", "length with a leading zero byte"),
        ("300302010000", "trailing byte"),
        ("3004020100", "length past the end"),
        ("1f2200", "high-tag-number form"),
        ("30", "truncated header"),
    ],
)
def test_non_der_framing_is_refused(hex_: str, why: str) -> None:
    with pytest.raises(DerError):
        read_one(bytes.fromhex(hex_.replace(" ", "")))


@pytest.mark.parametrize(
    ("hex_", "value"),
    [("020100", 0), ("02017f", 127), ("02020080", 128), ("0201ff", -1), ("020280ff", -32513)],
)
def test_minimal_integers(hex_: str, value: int) -> None:
    assert read_one(bytes.fromhex(hex_)).as_int() == value


@pytest.mark.parametrize("hex_", ["0200", "0202007f", "0202ff80"])
def test_non_minimal_or_empty_integers_are_refused(hex_: str) -> None:
    with pytest.raises(DerError):
        read_one(bytes.fromhex(hex_)).as_int()


@given(st.integers(min_value=-(2**160), max_value=2**160))
def test_integers_round_trip(value: int) -> None:
    size = max(1, (value.bit_length() + 8) // 8)
    body = value.to_bytes(size, "big", signed=True)
    while len(body) > 1 and (
        (body[0] == 0 and body[1] < 0x80) or (body[0] == 0xFF and body[1] >= 0x80)
    ):
        body = body[1:]
    assert read_one(_tlv(0x02, body)).as_int() == value


@pytest.mark.parametrize("body", ["01", "00ff", ""])
def test_booleans_must_be_00_or_ff(body: str) -> None:
    with pytest.raises(DerError):
        read_one(bytes.fromhex("01" + f"{len(body) // 2:02x}" + body)).as_bool()


@pytest.mark.parametrize(
    ("hex_", "oid"),
    [
        ("0609608648016503040201", "2.16.840.1.101.3.4.2.1"),
        ("06092a864886f70d010702", "1.2.840.113549.1.7.2"),
        ("06032b0601", "1.3.6.1"),
    ],
)
def test_oids(hex_: str, oid: str) -> None:
    assert read_one(bytes.fromhex(hex_)).as_oid() == oid


@pytest.mark.parametrize("hex_", ["0600", "0602 2b86", "0603 2b8001"])
def test_bad_oids_are_refused(hex_: str) -> None:
    with pytest.raises(DerError):
        read_one(bytes.fromhex(hex_.replace(" ", ""))).as_oid()


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("20260301120000Z", datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)),
        ("20260301120000.5Z", datetime(2026, 3, 1, 12, 0, 0, 500000, tzinfo=UTC)),
        ("20260301120000.123456Z", datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_generalized_time(text: str, moment: datetime) -> None:
    assert read_one(_tlv(0x18, text.encode())).as_generalized_time() == moment


@pytest.mark.parametrize(
    "text",
    ["20260301120000", "20260301120000.50Z", "20260301120000.Z", "202603011200Z",
     "20261301120000Z", "20260301120000+0100", "20260301120000Z\n"],
)  # fmt: skip
def test_non_der_generalized_time_is_refused(text: str) -> None:
    with pytest.raises(DerError):
        read_one(_tlv(0x18, text.encode())).as_generalized_time()


def test_wrong_tag_and_primitive_children_are_refused() -> None:
    with pytest.raises(DerError):
        read_one(bytes.fromhex("020100")).as_oid()
    with pytest.raises(DerError):
        read_one(bytes.fromhex("020100")).children()
    assert context(0) == 0xA0
    assert context(1, constructed=False) == 0x81


def test_nesting_depth_is_bounded() -> None:
    data = bytes.fromhex("0500")
    for _ in range(40):
        data = _tlv(0x30, data)
    element = read_one(data)
    for _ in range(32):
        (element,) = element.children()
    with pytest.raises(DerError):
        element.children()


@given(st.binary(max_size=300))
def test_parse_token_raises_only_its_own_codes(data: bytes) -> None:
    from affidavit.verify import errors
    from affidavit.verify.anchor.rfc3161 import parse_token

    with pytest.raises(errors.ProofError) as caught:
        parse_token(data)
    assert caught.value.code in {"anchor.token_malformed", "anchor.tsa_not_granted"}


@given(
    st.recursive(st.binary(max_size=8), lambda inner: st.lists(inner, max_size=4), max_leaves=12)
)
def test_nested_sequences_never_crash_the_reader(tree: object) -> None:
    def encode(node: object) -> bytes:
        if isinstance(node, bytes):
            return _tlv(0x04, node)
        assert isinstance(node, list)
        return _tlv(0x30, b"".join(encode(n) for n in node))

    element = read_one(encode(tree))
    stack = [element]
    while stack:
        item = stack.pop()
        if item.constructed:
            stack.extend(item.children())
        else:
            assert isinstance(item.as_octets(), bytes)
