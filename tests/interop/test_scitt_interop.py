"""SCITT interop with scitt-cose 0.5.0, an independent implementation (dev extra; never imported by
library code): what Affidavit issues verifies there, what scitt-cose builds verifies here, and a
tampered receipt, proof, root or statement is refused by both."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.attest.keyring import public_key_pem
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import decode, encode
from affidavit.verify.scitt.keys import key_from_bytes
from affidavit.verify.scitt.report import verify_transparent_statement
from affidavit.verify.scitt.statement import parse_statement
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.verify.scitt.support import ISSUER, LOG_COSE, LOG_KEY, edit, statement, transparent

scitt_cose = pytest.importorskip("scitt_cose")
oracle_receipt = pytest.importorskip("scitt_cose.receipt")

LOG_PEM = public_key_pem(LOG_KEY.public_key)


def _private_pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _public_pem(key: Any) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _oracle_ok(receipt: bytes, entry: bytes, pem: bytes = LOG_PEM) -> bool:
    result = oracle_receipt.verify_receipt(
        receipt, leaf_entry_hex=entry.hex(), log_public_key_pem=pem
    )
    return bool(result.ok)


def test_our_receipt_and_statement_verify_in_scitt_cose() -> None:
    signed = statement()
    ts, receipt = transparent(signed)
    entry = hashlib.sha256(signed).digest()
    result = oracle_receipt.verify_receipt(
        receipt, leaf_entry_hex=entry.hex(), log_public_key_pem=LOG_PEM
    )
    assert result.ok, result.errors
    ours = verify_transparent_statement(ts, log_keys=[LOG_COSE]).subject["receipts"][0]
    assert (result.root, result.tree_size, result.leaf_index) == (
        ours["root"],
        ours["tree_size"],
        ours["leaf_index"],
    )
    parsed = scitt_cose.parse_signed_statement(
        signed, public_key_pem=public_key_pem(ISSUER.public_key)
    )
    assert parsed["signature_verified"] is True
    assert parsed["subject"] == "pkg:demo@1"
    assert scitt_cose.extract_receipts(ts) == [receipt]


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_statements_and_receipts_built_by_scitt_cose_verify_here(alg: str) -> None:
    issuer = (
        ed25519.Ed25519PrivateKey.generate()
        if alg == "EdDSA"
        else ec.generate_private_key(ec.SECP256R1())
    )
    log = (
        ed25519.Ed25519PrivateKey.generate()
        if alg == "EdDSA"
        else ec.generate_private_key(ec.SECP256R1())
    )
    signed = scitt_cose.build_signed_statement(
        b"sbom",
        alg=alg,
        private_key_pem=_private_pem(issuer),
        issuer="https://vendor.example",
        subject="pkg:vendor/app@2",
        content_type="application/spdx+json",
        kid=b"vendor-key-1",
    )
    entry = hashlib.sha256(signed).digest()  # the same leaf rule on both sides
    entries = [hashlib.sha256(bytes([i])).hexdigest() for i in range(5)]
    entries.insert(3, entry.hex())
    receipt = scitt_cose.build_receipt(
        leaf_entry_hex=entry.hex(),
        leaf_index=3,
        tree_entries_hex=entries,
        alg=alg,
        log_private_key_pem=_private_pem(log),
        iss="ts.example",
        sub="pkg:vendor/app@2",
    )
    ts = scitt_cose.attach_receipts(signed, [receipt])
    report = verify_transparent_statement(
        ts,
        log_keys=[key_from_bytes(_public_pem(log), source="log")],
        issuer_keys=[
            key_from_bytes(_public_pem(issuer), source="issuer").bound_to(
                ["https://vendor.example"]
            )
        ],
    )
    assert report.verdict == "verified", report.to_json()
    assert report.subject["receipts"][0]["root"] == scitt_cose.merkle_root(entries)
    assert parse_statement(ts).entry_id == entry.hex()


def _flip_last(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0x01])


def _tamper_proof(parts: list[Any]) -> None:
    proof = decode(parts[1][396][-1][0], what="proof")
    proof[2][0] = bytes(b ^ 0xFF for b in proof[2][0])
    parts[1][396][-1][0] = encode(proof)


TAMPERS: dict[str, Callable[[bytes, bytes], tuple[bytes, bytes]]] = {
    # (signed statement, receipt) -> (the bytes the leaf is computed from, the receipt)
    "receipt signature": lambda s, r: (s, _flip_last(r)),
    "inclusion proof": lambda s, r: (s, edit(r, _tamper_proof)),
    "root attached": lambda s, r: (s, edit(r, lambda p: p.__setitem__(2, b"\x00" * 32))),
    "statement": lambda s, r: (edit(s, lambda p: p.__setitem__(2, b"other")), r),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_receipt_proof_root_or_statement_is_refused_by_both(name: str) -> None:
    signed = statement()
    _, receipt = transparent(signed)
    assert _oracle_ok(receipt, hashlib.sha256(signed).digest())  # untouched: both accept
    tampered_statement, tampered_receipt = TAMPERS[name](signed, receipt)
    entry = hashlib.sha256(tampered_statement).digest()
    assert not _oracle_ok(tampered_receipt, entry), name
    from affidavit.verify.scitt.receipt import verify_receipt

    with pytest.raises(errors.ScittError):
        verify_receipt(tampered_receipt, entry, [LOG_COSE])
