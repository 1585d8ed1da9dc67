"""Threshold verification: trusted keys only, a key counts once, keyid is only a hint."""

from __future__ import annotations

import dataclasses

import pytest
from affidavit.verify.dsse.envelope import Envelope, Signature
from affidavit.verify.dsse.verify import verify_envelope

from tests.conftest import raises_code
from tests.verify.dsse.dsse_fixtures import ALICE, BOB, CAROL, MALLORY, payload_of, sign, statement

PAYLOAD = payload_of(statement())
TRUSTED = (ALICE.public_key, BOB.public_key, CAROL.public_key)


def test_one_signature_one_trusted_key() -> None:
    result = verify_envelope(sign(PAYLOAD, [ALICE]), [ALICE.public_key])
    assert result.met
    assert result.error is None
    assert result.keys_verified == (ALICE.public_key,)
    assert result.signatures[0].verified_by == (ALICE.public_key,)


@pytest.mark.parametrize(
    ("signers", "threshold", "code"),
    [
        ([ALICE], 1, None),
        ([ALICE, BOB], 2, None),
        ([CAROL, ALICE, BOB], 3, None),
        ([ALICE, MALLORY], 2, "dsse.threshold_not_met"),
        ([ALICE], 2, "dsse.threshold_not_met"),
        ([MALLORY], 1, "dsse.signature_unverified"),
        ([ALICE, ALICE], 2, "dsse.threshold_not_met"),  # a key counts once
        ([ALICE, ALICE, BOB], 3, "dsse.threshold_not_met"),
    ],
)
def test_thresholds(signers: list, threshold: int, code: str | None) -> None:
    result = verify_envelope(sign(PAYLOAD, signers), TRUSTED, threshold=threshold)
    assert result.met is (code is None)
    assert (result.error.code if result.error else None) == code


def test_a_key_that_signs_twice_counts_once() -> None:
    result = verify_envelope(sign(PAYLOAD, [ALICE, ALICE]), TRUSTED, threshold=1)
    assert result.keys_verified == (ALICE.public_key,)
    assert [c.verified_by for c in result.signatures] == [(ALICE.public_key,)] * 2


def test_keyid_is_a_hint_only() -> None:
    """A wrong keyid does not stop a valid signature; a trusted key's keyid does not make an
    untrusted signature count."""
    wrong = sign(PAYLOAD, [ALICE], keyid="bob")
    assert verify_envelope(wrong, [ALICE.public_key]).met
    forged = sign(PAYLOAD, [MALLORY], keyid=ALICE.public_key.b64)
    assert verify_envelope(forged, [ALICE.public_key]).error.code == "dsse.signature_unverified"  # type: ignore[union-attr]


def test_signature_is_over_pae_not_the_payload() -> None:
    bare = Envelope("application/vnd.in-toto+json", PAYLOAD, (Signature("", ALICE.sign(PAYLOAD)),))
    assert verify_envelope(bare, [ALICE.public_key]).error.code == "dsse.signature_unverified"  # type: ignore[union-attr]


@pytest.mark.parametrize("field", ["payload", "payload_type", "sig"])
def test_tampering_fails(field: str) -> None:
    envelope = sign(PAYLOAD, [ALICE])
    if field == "payload":
        tampered = dataclasses.replace(envelope, payload=PAYLOAD.replace(b"PASSED", b"FAILED"))
    elif field == "payload_type":
        tampered = dataclasses.replace(envelope, payload_type="application/json")
    else:
        sig = bytearray(envelope.signatures[0].sig)
        sig[5] ^= 1
        tampered = dataclasses.replace(envelope, signatures=(Signature("", bytes(sig)),))
    assert verify_envelope(tampered, [ALICE.public_key]).error.code == "dsse.signature_unverified"  # type: ignore[union-attr]


def test_signatures_of_other_lengths_simply_do_not_verify() -> None:
    envelope = Envelope("t", b"x", (Signature("", b""), Signature("", b"\x00" * 65)))
    assert verify_envelope(envelope, [ALICE.public_key]).error.code == "dsse.signature_unverified"  # type: ignore[union-attr]


def test_other_signatures_do_not_spoil_a_valid_one() -> None:
    good = sign(PAYLOAD, [MALLORY, ALICE])
    result = verify_envelope(good, [ALICE.public_key])
    assert result.met
    assert [c.verified_by for c in result.signatures] == [(), (ALICE.public_key,)]


@pytest.mark.parametrize("threshold", [0, -1, 4])
def test_threshold_out_of_range_is_a_usage_error(threshold: int) -> None:
    with raises_code("usage.invalid"):
        verify_envelope(sign(PAYLOAD, [ALICE]), TRUSTED, threshold=threshold)


def test_duplicate_trusted_keys_are_one_key() -> None:
    with raises_code("usage.invalid"):
        verify_envelope(sign(PAYLOAD, [ALICE]), [ALICE.public_key] * 2, threshold=2)


def test_no_trusted_key_is_a_usage_error() -> None:
    with raises_code("usage.invalid"):
        verify_envelope(sign(PAYLOAD, [ALICE]), [])
