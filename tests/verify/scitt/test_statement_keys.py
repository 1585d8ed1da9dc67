"""Signed Statements read and checked alone (issue 36 mutation campaign; RFC 9943 §6,
verify/scitt/statement.py): what a statement reports, which key its signature verifies under,
whose issuer that key is, and every refusal with its exact code. Statements here are signed by
the TEST-ONLY keys of tests/verify/scitt/support.py."""

from __future__ import annotations

import hashlib
from typing import Any

import cbor2
import pytest
from affidavit.attest.scitt import sign_statement
from affidavit.verify.scitt.cbor import encode
from affidavit.verify.scitt.cose import sig_structure
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.statement import parse_statement
from cryptography.hazmat.primitives.asymmetric import ec

from tests.conftest import raises_code
from tests.verify.scitt.support import ISSUER, ISSUER_COSE, OTHER, edit, statement, with_receipts

ISS = "https://issuer.example"
OTHER_COSE = CoseKey.from_ed25519(OTHER.public_key, "other.pub").bound_to([ISS])
P256_KEY = ec.derive_private_key(11, ec.SECP256R1())
P256 = CoseKey.from_p256(P256_KEY.public_key(), "p256.pem").bound_to([ISS])
UNNAMED = CoseKey.from_ed25519(ISSUER.public_key)  # no source, no issuer


def _signed(protected: dict[Any, Any], payload: bytes | None = b"{}") -> bytes:
    """A statement with this protected header, signed by the issuer key (detached when
    ``payload`` is None: signed over b"{}")."""
    protected_bytes = encode(protected)
    signature = ISSUER.sign(sig_structure(protected_bytes, b"{}"))
    return encode(cbor2.CBORTag(18, [protected_bytes, {}, payload, signature]))


CLAIMS = {1: ISS, 2: "pkg:demo@1"}


def test_a_statement_reports_what_it_names() -> None:
    signed = statement()
    parsed = parse_statement(with_receipts(signed, [b"r1", b"r2"]))
    assert (parsed.issuer, parsed.subject, parsed.content_type) == (
        ISS,
        "pkg:demo@1",
        "application/json",
    )
    assert parsed.claims == CLAIMS
    assert parsed.receipts == (b"r1", b"r2")
    assert parsed.alg_name == "EdDSA"
    assert parsed.registered_bytes == signed
    assert parsed.entry_id == hashlib.sha256(signed).hexdigest()
    es256 = sign_statement(b"{}", P256_KEY, issuer=ISS, subject="pkg:demo@1")
    assert parse_statement(es256).alg_name == "ES256"
    assert parse_statement(es256).verify_under([ISSUER_COSE, P256]) is P256


@pytest.mark.parametrize("content_type", [50, "text/plain"])
def test_a_content_type_is_text_or_a_uint(content_type: Any) -> None:
    parsed = parse_statement(_signed({1: -8, 3: content_type, 15: CLAIMS}))
    assert parsed.content_type == content_type
    assert parse_statement(_signed({1: -8, 15: CLAIMS})).content_type is None


@pytest.mark.parametrize(
    ("name", "protected", "unprotected", "code", "message"),
    [
        ("content type a bool", {3: True}, {}, "scitt.header_invalid",
         "s: content type is not text or uint"),
        ("content type bytes", {3: b"x"}, {}, "scitt.header_invalid",
         "s: content type is not text or uint"),
        ("claims not a map", {15: [ISS]}, {}, "scitt.claims_missing",
         "s: no CWT claims map at protected header 15 (RFC 9597 §2, RFC 9943 §6)"),
        ("iss empty", {15: {1: "", 2: "x"}}, {}, "scitt.claims_missing",
         "s: the CWT claims have no text iss (claim 1, RFC 9943 §6)"),
        ("sub empty", {15: {1: ISS, 2: ""}}, {}, "scitt.claims_missing",
         "s: the CWT claims have no text sub (claim 2, RFC 9943 §6)"),
        ("no receipts", {}, {394: []}, "scitt.header_invalid",
         "s: receipts (394) is not an array of 1 to 16 receipts"),
        ("seventeen receipts", {}, {394: [b"r"] * 17}, "scitt.header_invalid",
         "s: receipts (394) is not an array of 1 to 16 receipts"),
        ("receipts a map", {}, {394: {0: b"r"}}, "scitt.header_invalid",
         "s: receipts (394) is not an array of 1 to 16 receipts"),
        ("a receipt not bytes", {}, {394: [b"r", "r"]}, "scitt.header_invalid",
         "s: a receipt at 394 is not a byte string"),
        ("kid not bytes", {4: 7}, {}, "scitt.header_invalid", "s: kid is not a byte string"),
    ],
)  # fmt: skip
def test_a_bad_header_is_refused_with_its_code(
    name: str, protected: dict[Any, Any], unprotected: dict[Any, Any], code: str, message: str
) -> None:
    def change(parts: list[Any]) -> None:
        parts[0].update(protected)
        parts[1].update(unprotected)

    with raises_code(code) as info:
        parse_statement(edit(statement(), change), what="s")
    assert info.value.message == message, name


def test_sixteen_receipts_are_read() -> None:
    assert len(parse_statement(with_receipts(statement(), [b"r"] * 16)).receipts) == 16


@pytest.mark.parametrize("label", [3, 4, 15])
def test_crit_may_name_the_headers_a_statement_reader_processes(label: int) -> None:
    parsed = parse_statement(_signed({1: -8, 2: [label], 3: "t", 4: b"k", 15: CLAIMS}))
    assert parsed.issuer == ISS
    with raises_code("scitt.crit_unsupported"):
        parse_statement(_signed({1: -8, 2: [395], 15: CLAIMS, 395: 1}))


def test_a_size_cap_is_the_callers() -> None:
    data = statement()
    assert parse_statement(data, max_bytes=len(data)).issuer == ISS
    with raises_code("cbor.too_large"):
        parse_statement(data, max_bytes=len(data) - 1)


def test_under_one_key_the_reason_it_fails_is_kept() -> None:
    detached = parse_statement(_signed({1: -8, 15: CLAIMS}, payload=None))
    with raises_code("scitt.payload_missing"):
        detached.verify_under([ISSUER_COSE])
    parsed = parse_statement(statement())
    with raises_code("scitt.key_mismatch"):
        parsed.verify_under([P256])
    with raises_code("scitt.signature_invalid") as info:
        parsed.verify_under([OTHER_COSE])
    assert info.value.message != "the signature verifies under none of the 1 keys"


@pytest.mark.parametrize("keys", [[], [P256, OTHER_COSE]])
def test_under_none_of_several_keys_it_is_invalid(keys: list[CoseKey]) -> None:
    with raises_code("scitt.signature_invalid") as info:
        parse_statement(statement()).verify_under(keys)
    assert info.value.message == f"the signature verifies under none of the {len(keys)} keys"


def test_the_key_it_verifies_under_is_found_among_several() -> None:
    parsed = parse_statement(statement())
    assert parsed.verify_under([P256, OTHER_COSE, ISSUER_COSE]) is ISSUER_COSE
    assert parsed.verify_issuer([P256, OTHER_COSE, ISSUER_COSE]) is ISSUER_COSE


@pytest.mark.parametrize(
    ("key", "message", "issuers"),
    [
        (
            ISSUER_COSE.bound_to(["https://a.example", "https://b.example"]),
            "the statement names iss 'https://issuer.example', but the key it verifies under "
            "(issuer) signs only for 'https://a.example', 'https://b.example'",
            ["https://a.example", "https://b.example"],
        ),
        (
            UNNAMED,
            "the statement names iss 'https://issuer.example', but the key it verifies under "
            "signs only for no issuer",
            [],
        ),
    ],
)
def test_a_key_of_other_issuers_is_a_mismatch(
    key: CoseKey, message: str, issuers: list[str]
) -> None:
    """RFC 9943 §5.1.1.1: a bound key that does not verify it does not stand in either."""
    with raises_code("scitt.issuer_mismatch") as info:
        parse_statement(statement()).verify_issuer([OTHER_COSE, key])
    assert info.value.to_json() == {
        "code": "scitt.issuer_mismatch",
        "message": message,
        "details": {"issuer": ISS, "key_issuers": issuers},
    }


def test_no_key_that_verifies_is_invalid_not_a_mismatch() -> None:
    with raises_code("scitt.signature_invalid"):
        parse_statement(statement()).verify_issuer([OTHER_COSE, P256])
    with raises_code("scitt.signature_invalid"):
        parse_statement(statement()).verify_issuer([OTHER_COSE.bound_to([])])


def test_without_a_kid_every_key_is_tried_in_turn() -> None:
    parsed = parse_statement(_signed({1: -8, 15: CLAIMS}))
    assert parsed.sign1.kid is None
    assert parsed.verify_under([OTHER_COSE, P256, ISSUER_COSE]) is ISSUER_COSE


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        (lambda p: p[0].__setitem__(1, -35), "scitt.alg_unsupported",
         "{what}: alg -35 is not EdDSA (-8) or ES256 (-7) (RFC 9053)"),
        (lambda p: p.__setitem__(3, "sig"), "scitt.cose_malformed",
         "{what}: the signature is not a byte string"),
        (lambda p: p[0].__setitem__(4, 7), "scitt.header_invalid",
         "{what}: kid is not a byte string"),
    ],
)  # fmt: skip
def test_a_refusal_names_the_statement(change: Any, code: str, message: str) -> None:
    bad = edit(statement(), change)
    with raises_code(code) as info:
        parse_statement(bad)
    assert info.value.message == message.format(what="statement")
    with raises_code(code) as info:
        parse_statement(bad, what="ts.cose")
    assert info.value.message == message.format(what="ts.cose")
