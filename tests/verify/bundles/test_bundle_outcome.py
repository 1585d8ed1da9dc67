"""OUTCOME_RECONCILED vocabularies and the ProofPack v2 policy_layer (docs/formats.md §4)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from affidavit.verify.bundles.events import VOCABULARIES

from tests.verify.bundles.test_bundle_support import OUTPUTS, reseal, stamp, verifier


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return stamp({"accepted": OUTPUTS["accepted"]})["accepted"]


def _reconciled(bundle: dict[str, Any], **payload: Any) -> dict[str, Any]:
    """An OUTCOME_RECONCILED before the finality event; chain and anchor redone."""
    out = copy.deepcopy(bundle)
    body = {
        "expected_outcome_hash": "e" * 64,
        "observed_outcome_hash": "e" * 64,
        "reconciliation_status": "matched",
        "readback_source": "erp",
        "readback_source_type": "first_party",
        "evidence_hash": "f" * 64,
        "evidence_redaction_status": "hash_only",
    }
    body.update(payload)
    out["events"].insert(
        len(out["events"]) - 1,
        {
            "event_id": "evt_reconciled",
            "event_type": "OUTCOME_RECONCILED",
            "deal_id": out["deal_id"],
            "actor_id": "reconciler-1",
            "timestamp": out["events"][0]["timestamp"],
            "payload": {k: v for k, v in body.items() if v is not None},
            "prev_hash": "",
            "hash": "",
        },
    )
    return reseal(out, anchor=True)


def test_known_vocabulary_is_reported(base: dict[str, Any]) -> None:
    result = verifier().verify(_reconciled(base))
    step = result.step("outcome_reconciliation")
    assert result.verdict == "verified"
    assert step is not None
    assert step.status == "ok"
    assert step.details["records"][0]["readback_source_type"] == "first_party"
    assert verifier().verify(base).step("outcome_reconciliation") is None


@pytest.mark.parametrize("field", sorted(VOCABULARIES))
@pytest.mark.parametrize("value", ["made_up", None, 3])
def test_unknown_values_fail(base: dict[str, Any], field: str, value: Any) -> None:
    result = verifier().verify(_reconciled(base, **{field: value}))
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == (
        "outcome_reconciliation",
        "bundle.reconciliation_vocabulary_unknown",
    )
    assert step.details["unknown"] == [f"events[3].payload.{field}={value!r}"]


def test_the_sdk_vocabularies_are_ours() -> None:
    from aigentsy.client import AiGentsyClient

    assert VOCABULARIES["reconciliation_status"] == AiGentsyClient._RECONCILIATION_STATUSES
    assert VOCABULARIES["readback_source_type"] == AiGentsyClient._READBACK_SOURCE_TYPES
    assert VOCABULARIES["evidence_redaction_status"] == AiGentsyClient._EVIDENCE_REDACTION_STATUSES


LAYER = {
    "sla": {"guarantees": {"delivery_hours": 48, "quality_floor": 0.9}},
    "mandate": {"max_spend": 100},
    "spawn": {},
    "attestation": {"ocs_score": 81, "ocs_tier": "gold"},
    "outcome": {"metric": "accuracy", "threshold": 0.95},
    "referral_chain": ["agent-a", "agent-b"],
}


def test_policy_layer_is_shown_and_never_trusted(base: dict[str, Any]) -> None:
    bundle = dict(copy.deepcopy(base), policy_layer=LAYER)
    result = verifier().verify(bundle)
    assert result.verdict == "verified"
    view = result.to_json()["policy_layer"]
    assert view["sections"] == ["sla", "mandate", "attestation", "outcome", "referral_chain"]
    assert (view["covered_by_bundle_hash"], view["used_in_verdict"]) == (False, False)
    from aigentsy_verify.policy_layer import parse_policy_layer

    peer = parse_policy_layer(bundle)
    assert {k: v for k, v in view.items() if k in peer} == peer
    # Editing it changes no hash and no verdict: it is recorded, not verified.
    edited = dict(bundle, policy_layer={**LAYER, "sla": {"delivery_hours": 1}})
    assert verifier().verify(edited).verdict == "verified"
    assert "policy_layer" not in verifier().verify(base).to_json()


@pytest.mark.parametrize("layer", [None, [], "x", {}])
def test_a_non_object_policy_layer_reads_as_v1(base: dict[str, Any], layer: Any) -> None:
    view = verifier().verify(dict(copy.deepcopy(base), policy_layer=layer)).to_json()
    assert view["policy_layer"]["has_policy"] is False
    assert view["verdict"] == "verified"
    json.dumps(view)
