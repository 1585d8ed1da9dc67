"""Issue 35: a time, a key or a field that nothing signs decides nothing, and a malformed value
is a domain error with a code, never a traceback (docs/formats.md §4).

Each test reproduces one hole found by the issue's adversarial run; each failed on the code
before its fix (see the commit that added it).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.actor_trust import ActorTrust
from affidavit.verify.bundles.attestation import verify_attestation
from affidavit.verify.bundles.events import sidecar_hash, signing_payload
from affidavit.verify.bundles.hashing import bundle_hash, proof_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.json.canonical import py_compact, sha256_hex

from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_KEY,
    failed_step,
    reseal,
    verifier,
)

KEY_ID = "seller-key-1"


# -- hole 1: a back-dated, unsigned signed_at -------------------------------------------------


def _sign_all(bundle: dict[str, Any], signed_at: str | None) -> dict[str, Any]:
    """``bundle`` with a sidecar signing every event under the actor key (no key directory)."""
    out = copy.deepcopy(bundle)
    signatures: dict[str, Any] = {}
    for event in out["events"]:
        entry = {
            "actor_id": event["actor_id"],
            "key_id": KEY_ID,
            "public_key_base64": ACTOR_KEY.public_key.b64,
            "signature_base64": ACTOR_KEY.sign_b64(signing_payload(event, KEY_ID)),
            "intent": "evaluated_inference",
        }
        if signed_at is not None:
            entry["signed_at"] = signed_at
        signatures[event["hash"]] = [entry]
    sidecar: dict[str, Any] = {
        "sidecar_version": "0.0.1",
        "canonicalization": "canonical_event_for_signing_v1",
        "signature_alg": "Ed25519",
        "signatures_by_event_hash": signatures,
    }
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)  # anyone can recompute it
    out["actor_signature_sidecar"] = sidecar
    return out


_REVOKED_DIRECTORY = {
    KEY_ID: {
        "actor_id": ACTOR_ID,
        "public_key_base64": ACTOR_KEY.public_key.b64,
        "issued_at": "2026-01-01T00:00:00Z",
        "revoked_at": "2026-03-01T00:00:00Z",  # the events are dated 2026-03-01T12:00:00Z
    }
}


def _requiring(trust: ActorTrust) -> BundleVerifier:
    return BundleVerifier([LOG_KEY.public_key], actor_trust=trust, require_actor_signatures=True)


@pytest.mark.parametrize("signed_at", [None, "2026-01-15T00:00:00Z"])
def test_a_back_dated_signed_at_does_not_make_a_revoked_key_trusted(
    plain: dict[str, Any], signed_at: str | None
) -> None:
    bundle = _sign_all(plain, signed_at)
    assert all(e["actor_id"] == ACTOR_ID for e in bundle["events"])
    result = _requiring(ActorTrust.from_directory(_REVOKED_DIRECTORY)).verify(bundle)
    assert failed_step(result) == ("actor_signatures", "bundle.actor_signatures_untrusted")


def test_a_signed_at_cannot_widen_the_bundles_own_directory(plain: dict[str, Any]) -> None:
    bundle = _sign_all(plain, "2026-01-15T00:00:00Z")
    bundle["key_directory"] = copy.deepcopy(_REVOKED_DIRECTORY)
    result = verifier().verify(bundle)
    assert failed_step(result) == ("actor_signature_sidecar", "event.key_not_valid")


def test_a_signed_at_outside_the_window_still_fails(plain: dict[str, Any]) -> None:
    # The stated time can only refuse (the peer refuses it too), never admit.
    bundle = _sign_all(plain, "2026-04-01T00:00:00Z")
    directory = copy.deepcopy(_REVOKED_DIRECTORY)
    directory[KEY_ID]["revoked_at"] = "2026-03-15T00:00:00Z"
    bundle["key_directory"] = directory
    assert failed_step(verifier().verify(bundle)) == (
        "actor_signature_sidecar",
        "event.key_not_valid",
    )


def test_the_trusted_window_at_the_event_time_still_trusts(plain: dict[str, Any]) -> None:
    directory = copy.deepcopy(_REVOKED_DIRECTORY)
    directory[KEY_ID]["revoked_at"] = None
    result = _requiring(ActorTrust.from_directory(directory)).verify(_sign_all(plain, None))
    assert result.verdict == "verified", result.to_json()


# -- hole 4: a one-character non-ASCII hash -------------------------------------------------


def test_non_ascii_bundle_hash_is_a_mismatch(plain: dict[str, Any]) -> None:
    bundle = {**plain, "bundle_hash": "é"}
    assert failed_step(verifier().verify(bundle)) == ("bundle_hash", "bundle.hash_mismatch")


def test_non_ascii_event_hash_is_a_mismatch(plain: dict[str, Any]) -> None:
    bundle = copy.deepcopy(plain)
    bundle["events"][0]["hash"] = "é"
    bundle["bundle_hash"] = bundle_hash(bundle)
    assert failed_step(verifier().verify(bundle)) == ("event_chain", "event.hash_mismatch")


def test_non_ascii_sidecar_hash_is_a_mismatch(plain: dict[str, Any]) -> None:
    bundle = _sign_all(plain, None)
    bundle["actor_signature_sidecar"]["sidecar_hash"] = "é"
    assert failed_step(verifier().verify(bundle)) == (
        "actor_signature_sidecar",
        "bundle.sidecar_hash_mismatch",
    )


def test_non_ascii_attestation_payload_hash_is_a_mismatch() -> None:
    body = {"deal_id": "d", "outcome": "accepted"}
    attestation = {
        "attestation": body,
        "payload_hash": "é",
        "signature": LOG_KEY.sign_b64(py_compact(body)),
        "algorithm": "Ed25519",
    }
    result = verify_attestation(attestation, [LOG_KEY.public_key])
    assert failed_step(result) == ("payload_hash", "attestation.payload_hash_mismatch")
    attestation["payload_hash"] = sha256_hex(py_compact(body))
    assert verify_attestation(attestation, [LOG_KEY.public_key]).verdict == "verified"


# -- hole 5: a non-string public_key_base64 in the key directory -----------------------------


@pytest.mark.parametrize("value", [None, 7, [], {}, True])
def test_non_string_directory_key_is_a_key_error(signed: dict[str, Any], value: Any) -> None:
    bundle = copy.deepcopy(signed)
    for entry in bundle["key_directory"].values():
        entry["public_key_base64"] = value
    assert failed_step(verifier().verify(bundle)) == ("actor_signatures", "key.bad_base64")


# -- hole 6: a list or object contract_hash on a decision event --------------------------------


def _decision_index(bundle: dict[str, Any]) -> int:
    return next(i for i, e in enumerate(bundle["events"]) if "policy_snapshot" in e["payload"])


@pytest.mark.parametrize("value", [[], ["a"], {}, {"a": 1}])
def test_unhashable_contract_hash_on_a_decision_is_refused(
    plain: dict[str, Any], value: Any
) -> None:
    bundle = copy.deepcopy(plain)
    bundle["events"][_decision_index(bundle)]["payload"]["contract_hash"] = value
    result = verifier().verify(reseal(bundle, anchor=True))
    assert failed_step(result) == ("adapter_replay", "adapter.shape_invalid")


# -- hole 8: unsigned extra fields on a logged event ------------------------------------------


def test_an_unbound_field_beside_a_logged_event_is_malformed(plain: dict[str, Any]) -> None:
    bundle = copy.deepcopy(plain)
    bundle["events"][-1].update(decision="auto_reject", payout_usd=900)
    bundle["bundle_hash"] = bundle_hash(bundle)  # the event hash and the log still hold
    result = verifier().verify(bundle)
    assert failed_step(result) == ("event_chain", "event.malformed")
    assert "payout_usd" in result.failed_step.message


def test_an_unbound_field_inside_an_actor_signature_is_malformed(signed: dict[str, Any]) -> None:
    bundle = copy.deepcopy(signed)
    bundle["events"][0]["actor_signature"]["note"] = "unsigned"
    bundle["bundle_hash"] = bundle_hash(bundle)
    assert failed_step(verifier().verify(bundle)) == ("actor_signatures", "event.malformed")


def test_actor_signature_is_the_one_extra_event_field(signed: dict[str, Any]) -> None:
    assert verifier().verify(signed).verdict == "verified"


# -- hole 9: adapter_version never compared with the embedded contract's -----------------------


def _evaluation(bundle: dict[str, Any]) -> dict[str, Any]:
    for proof in bundle["proofs"]:
        evidence = proof.get("evidence") if isinstance(proof, dict) else None
        if isinstance(evidence, dict) and "adapter_evaluation" in evidence:
            return evidence["adapter_evaluation"]  # type: ignore[no-any-return]
    for event in bundle["events"]:
        if "adapter_evaluation" in event["payload"]:
            return event["payload"]["adapter_evaluation"]  # type: ignore[no-any-return]
    raise AssertionError("no adapter_evaluation")


def test_an_evaluations_adapter_version_must_be_its_contracts(plain: dict[str, Any]) -> None:
    bundle = copy.deepcopy(plain)
    evaluation = _evaluation(bundle)
    assert evaluation["adapter_version"] == evaluation["adapter_contract"]["adapter_version"]
    evaluation["adapter_version"] = "9.9.9"
    for event in bundle["events"]:  # re-bind the edited proof: only the version is wrong
        if "proof_hashes" in event["payload"]:
            event["payload"]["proof_hashes"] = [proof_hash(p) for p in bundle["proofs"]]
    result = verifier().verify(reseal(bundle, anchor=True))
    assert failed_step(result) == ("adapter_replay", "adapter.shape_invalid")
    assert result.failed_step.expected == evaluation["adapter_contract"]["adapter_version"]
