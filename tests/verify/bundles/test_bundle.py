"""ProofPack bundle verification: peer fixtures, stamped bundles, attacks, fail-closed verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify.bundles.attestation import verify_attestation
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.contracts.validators import ValidatorRegistry
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.results import Report, Result

from tests.schemas import assert_verify_report
from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    OTHER_KEY,
    OUTPUTS,
    contract,
    edit,
    reseal,
    stamp,
    verifier,
)


@pytest.fixture(scope="module")
def v2() -> dict[str, dict[str, Any]]:
    return stamp(OUTPUTS)


@pytest.fixture(scope="module")
def v3() -> dict[str, dict[str, Any]]:
    return stamp(OUTPUTS, actor=True)


def _failure(result: Result) -> tuple[str, str | None]:
    step = result.failed_step
    assert step is not None, result.to_json()
    return step.name, step.code


def _schema_check(document: dict[str, Any]) -> None:
    assert_verify_report(document)


# -- peer fixtures ------------------------------------------------------------------------------


def test_peer_sample_bundle(peer_vectors: Path) -> None:
    data = (peer_vectors / "aigentsy" / "sample_bundle.json").read_bytes()
    result = BundleVerifier().verify_bytes(data)
    statuses = {s.name: s.status for s in result.steps}
    assert statuses["bundle_hash"] == statuses["event_chain"] == "ok"
    assert statuses["merkle_inclusion"] == statuses["sth_signature"] == "not_checked"
    assert result.verdict == "unanchored"
    assert result.code == "bundle.unanchored"
    # Even with a trusted key it stays unanchored: there is nothing signed to check.
    key = json.loads((peer_vectors / "aigentsy" / "sample_key.json").read_text())
    trusted = BundleVerifier([Ed25519PublicKey.from_b64(key["public_key_base64"])])
    assert trusted.verify_bytes(data).verdict == "unanchored"


def test_peer_sample_bundle_hash_matches_peer_formula(peer_vectors: Path) -> None:
    bundle = json.loads((peer_vectors / "aigentsy" / "sample_bundle.json").read_text())
    assert bundle_hash(bundle) == bundle["bundle_hash"]
    legacy = {k: v for k, v in bundle.items() if k != "spec_version"}
    assert bundle_hash(legacy) != bundle["bundle_hash"]  # the py-spaced legacy form differs


def test_peer_sample_attestation(peer_vectors: Path) -> None:
    folder = peer_vectors / "aigentsy"
    document = json.loads((folder / "sample_attestation.json").read_text())
    key = Ed25519PublicKey.from_b64(
        json.loads((folder / "sample_key.json").read_text())["public_key_base64"]
    )
    assert verify_attestation(document, [key]).verdict == "verified"
    assert verify_attestation(document).verdict == "unanchored"
    other = OTHER_KEY.public_key
    assert verify_attestation(document, [other]).code == "attestation.signature_bad"
    forged = dict(document, attestation={**document["attestation"], "ocs": 99.0})
    assert verify_attestation(forged, [key]).code == "attestation.payload_hash_mismatch"


# -- stamped bundles ----------------------------------------------------------------------------


def test_stamped_bundles_verify(v2: dict[str, Any], v3: dict[str, Any]) -> None:
    check = verifier()
    for bundle in [*v2.values(), *v3.values()]:
        result = check.verify(bundle)
        assert result.verdict == "verified", result.to_json()
        statuses = {s.name: s.status for s in result.steps}
        # Keys only the bundle carries are self-asserted, never ok (docs/adr/0008).
        expected_actor = "self_asserted" if bundle["spec_version"] == "3.0.0" else "not_checked"
        assert statuses["actor_signatures"] == expected_actor
        assert statuses["adapter_replay"] == statuses["proof_binding"] == "ok"
        _schema_check(Report("bundle", (result,)).to_json())


def test_decisions(v2: dict[str, Any]) -> None:
    decisions = {deal: b["events"][-1]["payload"]["decision"] for deal, b in v2.items()}
    assert decisions == {
        "accepted": "auto_accept",
        "review": "require_review",
        "rejected": "auto_reject",
        "invalid_output": "require_review",
    }
    evaluation = v2["invalid_output"]["proofs"][0]["evidence"]["adapter_evaluation"]
    assert (evaluation["validation_result"], evaluation["normalized_policy_inputs"]) == (
        "rejected",
        {},
    )


def test_untrusted_key_never_verified(v2: dict[str, Any]) -> None:
    bundle = v2["accepted"]
    assert BundleVerifier().verify(bundle).verdict == "unanchored"
    result = BundleVerifier([OTHER_KEY.public_key]).verify(bundle)
    assert result.verdict == "failed"
    assert _failure(result) == ("sth_signature", "treehead.signature_bad")
    # A self-consistent bundle from a log the caller does not trust.
    foreign = stamp({"x": OUTPUTS["accepted"]}, key=OTHER_KEY)["x"]
    assert BundleVerifier([OTHER_KEY.public_key]).verify(foreign).verdict == "verified"
    assert _failure(verifier().verify(foreign)) == ("sth_signature", "treehead.signature_bad")


def test_tree_head_verified_once_per_run(
    v2: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import affidavit.verify.bundles.verifier as module

    calls = []
    real = module.verify_ed25519

    def counting(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(module, "verify_ed25519", counting)
    check = verifier()
    for bundle in v2.values():
        assert check.verify(bundle).verified
    assert len(calls) == 1  # four bundles, one head


# -- attacks that repair every hash ---------------------------------------------------------------


def test_rewritten_decision_with_replayed_proof(v2: dict[str, Any]) -> None:
    """Rewrite the decision, repair the chain and bundle_hash, keep the old proof and head."""

    def flip(b: dict[str, Any]) -> None:
        b["events"][-1]["payload"]["decision"] = "auto_accept"

    forged = reseal(edit(v2["rejected"], flip))
    assert _failure(verifier().verify(forged)) == ("cross_reference", "bundle.leaf_unbound")


def test_proof_swapped_with_bundle_hash_repaired(v2: dict[str, Any]) -> None:
    def swap(b: dict[str, Any]) -> None:
        b["proofs"] = v2["accepted"]["proofs"]

    forged = reseal(edit(v2["rejected"], swap))
    assert _failure(verifier().verify(forged)) == ("proof_binding", "bundle.proof_unbound")


def test_leaf_of_non_finality_event(v2: dict[str, Any]) -> None:
    from affidavit.verify.bundles.events import leaf_data
    from affidavit.verify.crypto.merkle import leaf_hash

    def point_at_creation(b: dict[str, Any]) -> None:
        b["merkle_inclusion"]["leaf_hash"] = leaf_hash(leaf_data(b["events"][0])).hex()

    forged = reseal(edit(v2["accepted"], point_at_creation))
    assert _failure(verifier().verify(forged))[0] == "merkle_inclusion"


def _anchored(bundle: dict[str, Any], change: Any) -> Result:
    """Apply a semantic change, reseal and re-anchor under the trusted key, verify."""
    return verifier().verify(reseal(edit(bundle, change), anchor=True))


def _evaluation(b: dict[str, Any]) -> dict[str, Any]:
    evaluation: dict[str, Any] = b["proofs"][0]["evidence"]["adapter_evaluation"]
    return evaluation


def _rebind(b: dict[str, Any]) -> None:
    from affidavit.verify.bundles.hashing import proof_hash

    b["events"][1]["payload"]["proof_hashes"] = [proof_hash(p) for p in b["proofs"]]


@pytest.mark.parametrize(
    ("name", "change", "code"),
    [
        (
            "rerun_mismatch",
            lambda b: b["proofs"][0]["evidence"].update(
                adapter_output={"signal_a": False, "signal_b": False}
            ),
            "adapter.validator_result_inconsistent",
        ),
        (
            "contract_changed",
            lambda b: _evaluation(b)["adapter_contract"].update(adapter_version="0.2.0"),
            "adapter.contract_hash_mismatch",
        ),
        (
            "schema_broken",
            lambda b: _evaluation(b)["adapter_contract"].update(adapter_id="Not DNS"),
            "adapter.schema_fail",
        ),
        (
            "leaked_input",
            lambda b: _evaluation(b)["normalized_policy_inputs"].update(secret=True),
            "adapter.normalized_inputs_not_allowed",
        ),
        (
            "rejected_with_inputs",
            lambda b: _evaluation(b).update(validation_result="rejected"),
            "adapter.validator_result_inconsistent",
        ),
        # Not a string: once a TypeError (unhashable) out of a verifier that never raises.
        (
            "result_is_a_list",
            lambda b: _evaluation(b).update(validation_result=["passed"]),
            "adapter.validator_result_inconsistent",
        ),
        (
            "result_is_an_object",
            lambda b: _evaluation(b).update(validation_result={"passed": True}),
            "adapter.validator_result_inconsistent",
        ),
        (
            "validator_renamed",
            lambda b: _evaluation(b).update(validator_version="9.9.9"),
            "adapter.validator_declaration_missing",
        ),
        (
            "no_embedded_contract",
            lambda b: _evaluation(b).pop("adapter_contract"),
            "adapter.shape_invalid",
        ),
        (
            "snapshot_inputs_forged",
            lambda b: b["events"][2]["payload"]["policy_snapshot"]["evaluated_inputs"].update(
                signal_b=False
            ),
            "adapter.matched_rule_does_not_fire",
        ),
        (
            "decision_word_forged",
            lambda b: b["events"][2]["payload"].update(decision="auto_reject"),
            "adapter.matched_rule_does_not_fire",
        ),
        (
            "policy_hash_forged",
            lambda b: b["events"][2]["payload"].update(policy_hash="0" * 64),
            "adapter.matched_rule_does_not_fire",
        ),
    ],
)
def test_adapter_replay_catches(v2: dict[str, Any], name: str, change: Any, code: str) -> None:
    def apply(b: dict[str, Any]) -> None:
        change(b)
        _rebind(b)

    result = _anchored(v2["accepted"], apply)
    assert _failure(result) == ("adapter_replay", code), name


def test_validators_are_the_callers(v2: dict[str, Any]) -> None:
    # Step 10 re-runs validators from BundleVerifier(validators=...), never from whatever happens
    # to be installed: here a sealed registry without the contract's validator skips the re-run.
    def apply(b: dict[str, Any]) -> None:
        b["proofs"][0]["evidence"].update(adapter_output={"signal_a": False, "signal_b": False})
        _rebind(b)

    forged = reseal(edit(v2["accepted"], apply), anchor=True)
    assert _failure(verifier().verify(forged))[0] == "adapter_replay"  # the built-in re-runs
    sealed = BundleVerifier(verifier().trusted_keys, validators=ValidatorRegistry({}))
    step = next(s for s in sealed.verify(forged).steps if s.name == "adapter_replay")
    assert step.status == "ok"
    assert "not installed" in json.dumps(step.to_json())


def test_revoked_contract_routes_to_unknown_adapter() -> None:
    revoked = contract(status="revoked", replaced_by="acme.eval_suite.v0@0.2.0")
    bundle = stamp({"r": OUTPUTS["accepted"]}, declaration=revoked)["r"]
    evaluation = _evaluation(bundle)
    assert evaluation["validation_result"] == "unknown_adapter"
    assert evaluation["normalized_policy_inputs"] == {}
    assert evaluation["lifecycle_warnings"] == [
        {"kind": "revoked", "replaced_by": "acme.eval_suite.v0@0.2.0"}
    ]
    assert bundle["events"][-1]["payload"]["decision"] == "require_review"
    result = verifier().verify(bundle)
    assert result.verdict == "verified"
    assert any("revoked" in w for w in result.subject["warnings"])


def test_deprecated_contract_warns() -> None:
    bundle = stamp({"d": OUTPUTS["accepted"]}, declaration=contract(status="deprecated"))["d"]
    result = verifier().verify(bundle)
    assert result.verdict == "verified"
    assert result.subject["warnings"] == ["acme.eval_suite.v0@0.1.0 is deprecated"]
    assert bundle["events"][-1]["payload"]["decision"] == "auto_accept"


# -- actor signatures and key directory ---------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (
            lambda b: b["key_directory"]["actor-key-1"].update(issued_at="2027-01-01T00:00:00Z"),
            "event.key_not_valid",
        ),
        (
            lambda b: b["key_directory"]["actor-key-1"].update(revoked_at="2026-03-01T12:00:00Z"),
            "event.key_not_valid",
        ),
        (
            lambda b: b["key_directory"]["actor-key-1"].update(actor_id="someone-else"),
            "event.actor_mismatch",
        ),
        (lambda b: b["key_directory"].clear(), "event.key_unknown"),
        (
            lambda b: b["key_directory"]["actor-key-1"].update(
                public_key_base64=OTHER_KEY.public_key.b64
            ),
            "event.signature_bad",
        ),
    ],
)
def test_key_directory_windows(v3: dict[str, Any], change: Any, code: str) -> None:
    # key_directory is outside bundle_hash, so no resealing is needed for these.
    result = verifier().verify(edit(v3["accepted"], change))
    assert _failure(result) == ("actor_signatures", code)
    assert v3["accepted"]["events"][0]["actor_id"] == ACTOR_ID


def test_sidecar(v3: dict[str, Any]) -> None:
    from affidavit.verify.bundles.events import sidecar_hash, signing_payload

    from tests.verify.bundles.test_bundle_support import ACTOR_KEY

    bundle = edit(v3["accepted"], lambda b: None)
    event = bundle["events"][1]
    entry = {
        "actor_id": ACTOR_ID,
        "key_id": "actor-key-1",
        "public_key_base64": ACTOR_KEY.public_key.b64,
        "signature_base64": ACTOR_KEY.sign_b64(signing_payload(event, "actor-key-1")),
        "intent": "attest",
        "signed_at": event["timestamp"],
        "signed_payload_canonical_keys": ["event_id"],
    }
    sidecar: dict[str, Any] = {
        "sidecar_version": "1.0.0",
        "canonicalization": "canonical_event_for_signing_v1",
        "signature_alg": "Ed25519",
        "signatures_by_event_hash": {event["hash"]: [entry]},
    }
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    bundle["actor_signature_sidecar"] = sidecar
    step = verifier().verify(bundle).step("actor_signature_sidecar")
    assert step is not None
    assert (step.status, step.details["trust"]) == ("self_asserted", "bundle_key_directory")
    broken = edit(bundle, lambda b: b["actor_signature_sidecar"].update(sidecar_version="2"))
    assert _failure(verifier().verify(broken)) == (
        "actor_signature_sidecar",
        "bundle.sidecar_hash_mismatch",
    )


# -- unreadable input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{", "json.syntax"),
        (b'{"a": 1, "a": 2}', "json.duplicate_key"),
        (b"[]", "bundle.malformed"),
        (b'{"deal_id": "d", "proofs": [], "events": {}, "bundle_hash": ""}', "bundle.malformed"),
        (
            b'{"spec_version": "9", "deal_id": "d", "proofs": [], "events": [], "bundle_hash": ""}',
            "bundle.unsupported_version",
        ),
    ],
)
def test_unreadable(data: bytes, code: str) -> None:
    result = verifier().verify_bytes(data)
    assert (result.verdict, result.code, result.exit_code) == ("unreadable", code, 2)


@pytest.mark.parametrize("text", ["plain", "é ü", 'quote" back\\slash', "\u2028 \U0001f600", ""])
def test_leaf_data_fast_path_is_py_compact(text: str) -> None:
    from affidavit.verify.bundles.events import leaf_data
    from affidavit.verify.json.canonical import py_compact

    event = {
        "deal_id": text,
        "hash": "h" + text,
        "event_id": "e",
        "event_type": "T",
        "timestamp": text,
    }
    expected = py_compact(
        {
            "deal_id": text,
            "event_type": "T",
            "event_id": "e",
            "event_hash": "h" + text,
            "timestamp": text,
        }
    )
    assert leaf_data(event) == expected
    assert leaf_data(dict(event, timestamp=1)) == py_compact(
        {
            "deal_id": text,
            "event_type": "T",
            "event_id": "e",
            "event_hash": "h" + text,
            "timestamp": 1,
        }
    )
