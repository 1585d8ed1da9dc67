"""DSSE PAE and the strict envelope parser: vectors, every refusal with its exact code."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from affidavit.verify.dsse.envelope import (
    MAX_ENVELOPE_BYTES,
    MAX_SIGNATURES,
    Envelope,
    Signature,
    decode_b64,
    envelope_json,
    pae,
    parse_envelope,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.verify.dsse.dsse_fixtures import ALICE, b64, envelope_bytes, signed_statement

# -- PAE (DSSE protocol.md, "Signature Definition") --------------------------------------------


@pytest.mark.parametrize(
    ("payload_type", "body", "expected"),
    [
        # DSSE protocol.md, "Test Vectors"
        (
            "http://example.com/HelloWorld",
            b"hello world",
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world",
        ),
        ("", b"", b"DSSEv1 0  0 "),
        # LEN counts bytes, not characters: "é" is two bytes in UTF-8.
        ("é", b"x", b"DSSEv1 2 \xc3\xa9 1 x"),
        # the body is opaque: spaces and digits in it cannot shift the framing
        ("a 1 b", b"2 c", b"DSSEv1 5 a 1 b 3 2 c"),
        (
            "application/vnd.in-toto+json",
            b"{}",
            b"DSSEv1 28 application/vnd.in-toto+json 2 {}",
        ),
    ],
)
def test_pae_vectors(payload_type: str, body: bytes, expected: bytes) -> None:
    assert pae(payload_type, body) == expected


def test_pae_lengths_have_no_leading_zeros() -> None:
    assert pae("t", b"x" * 10) == b"DSSEv1 1 t 10 " + b"x" * 10


# -- parsing: accepted forms ---------------------------------------------------------------------


def _document(**overrides: Any) -> dict[str, Any]:
    envelope = signed_statement()
    document = envelope_json(envelope)
    document.update(overrides)
    return document


def test_round_trip_of_a_signed_envelope() -> None:
    envelope = signed_statement()
    assert parse_envelope(envelope_bytes(envelope)) == envelope


def test_keyid_unset_reads_as_empty() -> None:
    document = _document()
    del document["signatures"][0]["keyid"]
    assert parse_envelope(envelope_bytes(document)).signatures[0].keyid == ""


def test_unknown_fields_are_ignored_at_every_level() -> None:
    document = _document(extra={"x": 1}, payloadUtf8="ignored")
    document["signatures"][0]["cert"] = "ignored"
    assert parse_envelope(envelope_bytes(document)) == signed_statement()


@pytest.mark.parametrize(
    "encode",
    [
        lambda raw: base64.b64encode(raw).decode(),
        lambda raw: base64.b64encode(raw).decode().rstrip("="),
        lambda raw: base64.urlsafe_b64encode(raw).decode(),
        lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ],
    ids=["standard", "standard-unpadded", "urlsafe", "urlsafe-unpadded"],
)
def test_base64_standard_or_url_safe_with_or_without_padding(encode: Any) -> None:
    raw = bytes(range(256)) + b"\xfb\xff"  # both +/ and -_ occur in the encodings
    envelope = Envelope("t", raw, (Signature("k", b"\xfb\xff\xfe"),))
    document = {
        "payload": encode(raw),
        "payloadType": "t",
        "signatures": [{"keyid": "k", "sig": encode(b"\xfb\xff\xfe")}],
    }
    assert parse_envelope(json.dumps(document).encode()) == envelope


def test_empty_payload_and_type_are_allowed() -> None:
    """DSSE envelope.md: REQUIRED "even if empty"."""
    raw = json.dumps({"payload": "", "payloadType": "", "signatures": [{"sig": ""}]})
    assert parse_envelope(raw.encode()) == Envelope("", b"", (Signature("", b""),))


# -- parsing: refusals, each with its code -------------------------------------------------------

_SIG = b64(b"\x01" * 64)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"[]", "dsse.malformed"),
        (b'"x"', "dsse.malformed"),
        (b'{"payloadType": "t", "signatures": [{"sig": ""}]}', "dsse.malformed"),
        (b'{"payload": "", "signatures": [{"sig": ""}]}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t"}', "dsse.malformed"),
        (b'{"payload": 1, "payloadType": "t", "signatures": [{"sig": ""}]}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": null, "signatures": [{"sig": ""}]}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t", "signatures": {"sig": ""}}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t", "signatures": ["AAAA"]}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t", "signatures": [{}]}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t", "signatures": [{"sig": 1}]}', "dsse.malformed"),
        (
            b'{"payload": "", "payloadType": "t", "signatures": [{"sig": "", "keyid": null}]}',
            "dsse.malformed",
        ),
        (
            b'{"payload": "", "payloadType": "t", "signatures": [{"sig": "", "keyid": 7}]}',
            "dsse.malformed",
        ),
        (b'{"payload": "", "payloadType": "t", "signatures": null}', "dsse.malformed"),
        (b'{"payload": "", "payloadType": "t", "signatures": []}', "dsse.no_signatures"),
        # strict JSON (docs/formats.md §1)
        (
            b'{"payload": "", "payload": "", "payloadType": "t", "signatures": [{"sig": ""}]}',
            "json.duplicate_key",
        ),
        (
            b'{"payload": "", "payloadType": "t", "signatures": [{"sig": ""}], "n": NaN}',
            "json.non_finite",
        ),
        (
            b'{"payload": "", "payloadType": "t", "signatures": [{"sig": ""}]} x',
            "json.trailing_data",
        ),
        (b"{'payload': 1}", "json.syntax"),
        (b"\xef\xbb\xbf{}", "json.bom"),
        (b'{"payload": "\\ud800", "payloadType": "t", "signatures": []}', "json.lone_surrogate"),
    ],
)
def test_malformed_envelopes(raw: bytes, code: str) -> None:
    with raises_code(code):
        parse_envelope(raw)


@pytest.mark.parametrize(
    "text",
    [
        "AAAA AAAA",  # whitespace
        "AAAA\nAAAA",
        " AAAA",
        "AAAA.",  # stray character
        "AA+-",  # the two alphabets mixed
        "+_AA",
        "A",  # impossible length
        "AAAAA",
        "AA=",  # too little padding
        "AAA==",  # too much padding
        "AA===",
        "=AAA",  # padding not at the end
        "AA=A",
        "AB==",  # non-canonical: unused trailing bits set
        "AAB=",
        "AB",
        "é",
    ],
)
def test_bad_base64_in_payload_and_sig(text: str) -> None:
    with raises_code("dsse.bad_base64"):
        decode_b64(text, field="payload")
    payload = _document(payload=text)
    with raises_code("dsse.bad_base64") as caught:
        parse_envelope(envelope_bytes(payload))
    assert caught.value.details == {"field": "payload"}
    sig = _document()
    sig["signatures"][0]["sig"] = text
    with raises_code("dsse.bad_base64") as caught:
        parse_envelope(envelope_bytes(sig))
    assert caught.value.details == {"field": "signatures[0].sig"}


def test_size_cap_is_checked_before_parsing() -> None:
    with raises_code("dsse.too_large"):
        parse_envelope(b" " * (MAX_ENVELOPE_BYTES + 1))


def test_signature_count_cap() -> None:
    document = _document(signatures=[{"sig": _SIG}] * (MAX_SIGNATURES + 1))
    with raises_code("dsse.too_many_signatures"):
        parse_envelope(envelope_bytes(document))
    document["signatures"] = [{"sig": _SIG}] * MAX_SIGNATURES
    assert len(parse_envelope(envelope_bytes(document)).signatures) == MAX_SIGNATURES


# -- round trip ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    payload_type=st.text(max_size=40),
    payload=st.binary(max_size=200),
    signatures=st.lists(
        st.tuples(st.text(max_size=20), st.binary(max_size=80)), min_size=1, max_size=4
    ),
    url_safe=st.booleans(),
    strip=st.booleans(),
)
def test_round_trip(
    payload_type: str,
    payload: bytes,
    signatures: list[tuple[str, bytes]],
    url_safe: bool,
    strip: bool,
) -> None:
    """Whatever we write (any alphabet, padded or not) reads back to the same envelope."""
    surrogate = any(
        0xD800 <= ord(c) <= 0xDFFF for s in (payload_type, *(k for k, _ in signatures)) for c in s
    )
    if surrogate:  # not UTF-8 text: strict JSON refuses a lone surrogate
        return
    envelope = Envelope(payload_type, payload, tuple(Signature(k, s) for k, s in signatures))

    def enc(raw: bytes) -> str:
        text = (base64.urlsafe_b64encode if url_safe else base64.b64encode)(raw).decode()
        return text.rstrip("=") if strip else text

    document = {
        "payload": enc(payload),
        "payloadType": payload_type,
        "signatures": [{"keyid": k, "sig": enc(s)} for k, s in signatures],
    }
    assert parse_envelope(json.dumps(document).encode()) == envelope
    assert parse_envelope(envelope_bytes(envelope)) == envelope


def test_envelope_json_is_what_the_parser_reads() -> None:
    envelope = signed_statement(keys=(ALICE,))
    assert envelope_json(parse_envelope(envelope_bytes(envelope))) == envelope_json(envelope)
