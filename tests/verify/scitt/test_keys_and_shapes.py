"""Keys (verify/scitt/keys.py) and the COSE and receipt shapes refused with their codes."""

from __future__ import annotations

from typing import Any

import cbor2
import pytest
from affidavit.attest.scitt import sign_statement
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import encode
from affidavit.verify.scitt.cose import parse_sign1
from affidavit.verify.scitt.keys import CoseKey, key_from_bytes
from affidavit.verify.scitt.receipt import parse_receipt
from affidavit.verify.scitt.statement import parse_statement
from affidavit.verify.trust import KeyFile, read_key_files
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.verify.scitt.support import ISSUER, ISSUER_COSE, edit, statement, transparent

P256 = ec.derive_private_key(0xC0FFEE, ec.SECP256R1())  # TEST-ONLY


def _pem(key: Any) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def test_key_forms() -> None:
    assert key_from_bytes(ISSUER.public_key.b64.encode(), source="k.pub") == CoseKey.from_ed25519(
        ISSUER.public_key, "k.pub"
    )
    p256 = key_from_bytes(_pem(P256), source="v.pem")
    assert (p256.kty, p256.crv, p256.describe) == (2, 1, "ES256 (P-256)")
    assert p256.to_cose()[2] == p256.thumbprint
    for other in (ec.derive_private_key(7, ec.SECP384R1()), rsa.generate_private_key(65537, 1024)):
        with pytest.raises(errors.ScittError) as caught:
            key_from_bytes(_pem(other), source="x.pem")
        assert caught.value.code == "scitt.key_unrecognized"
    with pytest.raises(errors.KeyMaterialError):
        key_from_bytes(b"not a key", source="x.pub")


def _key(file: KeyFile) -> CoseKey:
    return key_from_bytes(file.data, source=file.source)


def test_a_folder_skips_what_is_not_a_key_and_refuses_none() -> None:
    files = [KeyFile("d/a.pub", ISSUER.public_key.b64.encode()), KeyFile("d/README", b"x")]
    keys, skipped = read_key_files(files, _key, folder="d")
    assert [k.source for k in keys] == ["d/a.pub"]
    assert [s.source for s in skipped] == ["d/README"]
    with pytest.raises(errors.UsageError):
        read_key_files(files[1:], _key, folder="d")


def test_es256_signatures() -> None:
    signed = sign_statement(b"x", P256, issuer="i", subject="s")
    parsed = parse_statement(signed)
    key = key_from_bytes(_pem(P256), source="v.pem")
    parsed.verify_signature(key)
    with pytest.raises(errors.ScittError) as caught:
        parsed.verify_signature(ISSUER_COSE)  # EdDSA key for an ES256 signature
    assert caught.value.code == "scitt.key_mismatch"
    for bad in (parsed.sign1.signature[:63], b"\x00" * 64, b"\xff" * 64):
        with pytest.raises(errors.ScittError) as caught:
            key.verify(-7, parsed.sign1.to_be_signed(), bad)
        assert caught.value.code == "scitt.signature_invalid"
    with pytest.raises(errors.ScittError) as caught:
        key.verify(True, b"", b"")  # a bool is not an algorithm
    assert caught.value.code == "scitt.alg_unsupported"
    for floating in (-8.0, -7.0):  # equal to an algorithm, but not one: refused, never a crash
        with pytest.raises(errors.ScittError) as caught:
            key.verify(floating, b"", b"")
        assert caught.value.code == "scitt.alg_unsupported"


@pytest.mark.parametrize(
    ("name", "body", "code"),
    [
        ("three elements", [b"", {}, None], "scitt.cose_malformed"),
        ("protected not bytes", [{}, {}, None, b""], "scitt.cose_malformed"),
        ("protected not a map", [encode([1]), {}, None, b""], "scitt.cose_malformed"),
        ("unprotected not a map", [b"", [], None, b""], "scitt.cose_malformed"),
        ("payload a number", [b"", {}, 1, b""], "scitt.cose_malformed"),
        ("crit not a list", [encode({1: -8, 2: 1}), {}, None, b""], "scitt.crit_unsupported"),
        ("crit empty", [encode({1: -8, 2: []}), {}, None, b""], "scitt.crit_unsupported"),
        ("a bool label", [b"", {True: 1}, None, b""], "scitt.cose_malformed"),
        ("protected with a tag", [bytes.fromhex("a101d28101"), {}, None, b""], "cbor.malformed"),
    ],
)
def test_cose_shapes(name: str, body: list[Any], code: str) -> None:
    with pytest.raises(errors.ScittError) as caught:
        parse_sign1(encode(cbor2.CBORTag(18, body)), what=name)
    assert caught.value.code == code, name


def test_another_tag_is_not_a_cose_sign1() -> None:
    with pytest.raises(errors.ScittError) as caught:
        parse_sign1(encode([b"", {}, None, b""]), what="untagged")
    assert caught.value.code == "scitt.cose_malformed"


def _proofs(value: Any) -> Any:
    def change(parts: list[Any]) -> None:
        parts[1][396][-1] = value

    return change


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("a proof that is not bytes", _proofs([1])),
        ("a proof of two elements", _proofs([encode([1, 0])])),
        ("a negative size", _proofs([encode([-1, 0, []])])),
        ("a short hash", _proofs([encode([2, 0, [b"\x00" * 31]])])),
        ("index not below size", _proofs([encode([2, 2, [b"\x00" * 32]])])),
        ("a zero-size tail proof", lambda p: p[1][396][-1].append(encode([0, 0, []]))),
        ("seventeen proofs", lambda p: p[1][396].__setitem__(-1, p[1][396][-1] * 17)),
        ("no vdp", lambda p: p[1].pop(396)),
    ],
)
def test_receipt_shapes(name: str, change: Any) -> None:
    _, receipt = transparent(statement())
    with pytest.raises(errors.ScittError) as caught:
        parse_receipt(edit(receipt, change))
    assert caught.value.code == "scitt.receipt_malformed", name
