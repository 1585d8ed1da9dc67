"""scitt-cose 0.5.0's shipped vectors give the same verdicts here as there (its expected.json),
read from its source distribution (tests/verify/scitt/oracle.py)."""

from __future__ import annotations

import hashlib

import pytest
from affidavit.verify import errors
from affidavit.verify.scitt.keys import CoseKey, key_from_bytes
from affidavit.verify.scitt.receipt import parse_receipt, verify_receipt
from affidavit.verify.scitt.statement import parse_statement

from tests.verify.scitt.oracle import Vector, vectors

RECEIPT_V1 = "receipt-v1"
# v1's one vector this verifier refuses by design: a CCF receipt (vds 2, RFC 9942 leaves other
# structures to profiles; docs/formats.md "SCITT": only RFC9162_SHA256 is read).
CCF_ONLY = {"valid-ccf-vds2"}


def _key(data: bytes) -> list[CoseKey]:
    """The vector's log key as a trusted key; a key of another kind (secp256k1) trusts nothing."""
    try:
        return [key_from_bytes(data, source="log-key.pub")]
    except errors.AffidavitError:
        return []


def _receipt_ok(receipt: bytes, entry: bytes, keys: list[CoseKey]) -> tuple[bool, str | None]:
    if not keys:
        return False, "no usable key"
    try:
        check = verify_receipt(receipt, entry, keys)
    except errors.ScittError as e:
        return False, e.code
    return True, check.root.hex()


def test_every_receipt_v1_vector_gets_its_verdict() -> None:
    seen = []
    for vector in vectors(RECEIPT_V1):
        expected = vector.expected
        ok, found = _receipt_ok(
            vector.files["receipt.cose"],
            bytes.fromhex(expected["leaf_entry_hex"]),
            _key(vector.files["log-key.pub"]),
        )
        assert ok is expected["ok"], (vector.name, found)
        if ok:
            assert found == expected["root"], vector.name
        seen.append((vector.name, ok))
    assert len(seen) == 16
    assert sum(ok for _, ok in seen) == 5  # the README's table: five accept, eleven reject


def _v1_verdict(vector: Vector) -> tuple[bool, bool]:
    """(statement signature valid, receipt valid) for a v1 vector, read here."""
    files = vector.files
    statement_ok = True
    try:
        parsed = parse_statement(files["statement.cose"])
        parsed.verify_signature(key_from_bytes(files["issuer-key.pub"], source="issuer-key.pub"))
    except errors.AffidavitError:
        statement_ok = False
    entry = hashlib.sha256(files["statement.cose"]).digest()
    assert entry.hex() == vector.expected["leaf_entry"]  # the leaf rule is the same there
    receipt_ok, _ = _receipt_ok(files["receipt.cose"], entry, _key(files["log-key.pub"]))
    return statement_ok, receipt_ok


@pytest.mark.parametrize(
    "name",
    [
        "valid-eddsa",
        "valid-es256",
        "fail-tampered-path",
        "fail-unsupported-vds",
        "fail-bad-statement-sig",
        "valid-eddsa-multi-proof",
        "fail-zero-size-proof",
    ],
)
def test_v1_vectors_get_their_verdicts(name: str) -> None:
    (vector,) = [v for v in vectors("v1") if v.name == name]
    statement_ok, receipt_ok = _v1_verdict(vector)
    expected = vector.expected
    assert statement_ok is expected["statement_signature_valid"], name
    assert receipt_ok is expected["receipt_valid"], name
    assert (statement_ok and receipt_ok) is (expected["result"] == "VALID"), name


def test_the_ccf_vector_is_refused_as_an_unsupported_structure() -> None:
    (vector,) = [v for v in vectors("v1") if v.name in CCF_ONLY]
    with pytest.raises(errors.ScittError) as caught:
        parse_receipt(vector.files["receipt.cose"])
    assert caught.value.code == "scitt.receipt_vds_unsupported"
