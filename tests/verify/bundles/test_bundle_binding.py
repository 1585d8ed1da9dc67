"""cross_reference: the logged leaf covers the events up to its finality event, nothing after it,
and consequence identities must be ones the bundle authorized (docs/formats.md §4
cross-reference)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.verify.bundles.test_bundle_support import OUTPUTS, reseal, stamp, verifier

AUTHORIZED = "a" * 64
OTHER = "b" * 64


@pytest.fixture(scope="module")
def v2() -> dict[str, dict[str, Any]]:
    return stamp({"accepted": OUTPUTS["accepted"]})


def _append(bundle: dict[str, Any], event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A correctly chained event appended after the last one, bundle_hash recomputed."""
    out = copy.deepcopy(bundle)
    last = out["events"][-1]
    out["events"].append(
        {
            "event_id": f"evt_appended_{len(out['events'])}",
            "event_type": event_type,
            "deal_id": out["deal_id"],
            "actor_id": last["actor_id"],
            "timestamp": last["timestamp"],
            "payload": payload,
            "prev_hash": "",
            "hash": "",
        }
    )
    return reseal(out)


def _insert(bundle: dict[str, Any], index: int, event_type: str, payload: dict[str, Any]) -> Any:
    """An event inserted before ``index``; the chain resealed and the last event re-anchored."""
    out = copy.deepcopy(bundle)
    out["events"].insert(
        index,
        {
            "event_id": f"evt_inserted_{index}_{event_type}",
            "event_type": event_type,
            "deal_id": out["deal_id"],
            "actor_id": out["events"][0]["actor_id"],
            "timestamp": out["events"][0]["timestamp"],
            "payload": payload,
            "prev_hash": "",
            "hash": "",
        },
    )
    return reseal(out, anchor=True)


@pytest.mark.parametrize(
    ("event_type", "payload"),
    [
        ("OUTCOME_RECORDED", {"decision": "auto_reject"}),
        ("PAYOUT_REQUESTED", {"amount": 100}),
        ("DEAL_NOTE", {}),
    ],
)
def test_events_after_the_logged_finality_event_never_verify(
    v2: dict[str, Any], event_type: str, payload: dict[str, Any]
) -> None:
    bundle = _append(v2["accepted"], event_type, payload)
    result = verifier().verify(bundle)
    assert result.verdict == "failed"
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == ("cross_reference", "bundle.events_after_finality")
    assert step.details["events_after_finality"] == 1
    assert step.details["covered_events"] == len(bundle["events"]) - 1


def test_the_logged_event_last_still_verifies(v2: dict[str, Any]) -> None:
    result = verifier().verify(v2["accepted"])
    step = result.step("cross_reference")
    assert step is not None
    assert result.verdict == "verified"
    assert step.details["leaf_binding"] == "bound"
    assert step.details["consequence_binding"] == "no_consequence_authorization_claimed"
    assert step.details["events_after_finality"] == 0


def _authorize(identity: str, decision: str = "authorized") -> dict[str, Any]:
    return {"identity_hash": identity, "decision": decision}


def test_consequence_substitution_fails(v2: dict[str, Any]) -> None:
    bundle = _insert(v2["accepted"], 3, "CONSEQUENCE_AUTHORIZED", _authorize(AUTHORIZED))
    bound = verifier().verify(bundle)
    assert bound.verdict == "verified"
    assert bound.step("cross_reference").details["consequence_binding"] == (  # type: ignore[union-attr]
        "consequence_authorized_not_dispatched"
    )
    dispatched = _insert(bundle, 4, "CONSEQUENCE_DISPATCHED", {"consequence_identity_hash": OTHER})
    result = verifier().verify(dispatched)
    step = result.failed_step
    assert result.verdict == "failed"
    assert step is not None
    assert (step.name, step.code) == ("cross_reference", "bundle.consequence_identity_mismatch")
    assert step.details["consequence_binding"] == "consequence_identity_mismatch"
    good = _insert(bundle, 4, "CONSEQUENCE_DISPATCHED", {"consequence_identity_hash": AUTHORIZED})
    ok = verifier().verify(good)
    assert ok.verdict == "verified"
    assert ok.step("cross_reference").details["consequence_binding"] == "consequence_bound"  # type: ignore[union-attr]


def test_a_denied_authorization_confers_nothing(v2: dict[str, Any]) -> None:
    bundle = _insert(v2["accepted"], 3, "CONSEQUENCE_AUTHORIZED", _authorize(AUTHORIZED, "denied"))
    bundle = _insert(bundle, 4, "CONSEQUENCE_DISPATCHED", {"identity_hash": AUTHORIZED})
    result = verifier().verify(bundle)
    assert result.verdict == "verified"
    assert result.step("cross_reference").details["consequence_binding"] == (  # type: ignore[union-attr]
        "no_consequence_authorization_claimed"
    )


def test_consequence_mismatch_fails_without_an_anchor(v2: dict[str, Any]) -> None:
    bundle = _insert(v2["accepted"], 3, "CONSEQUENCE_AUTHORIZED", _authorize(AUTHORIZED))
    bundle = _insert(bundle, 4, "OUTCOME_RECONCILED_NOTE", {"identity_hash": OTHER})
    del bundle["merkle_inclusion"]
    bundle = reseal(bundle)
    result = verifier().verify(bundle)
    step = result.failed_step
    assert step is not None
    assert (result.verdict, step.name, step.code) == (
        "failed",
        "cross_reference",
        "bundle.consequence_identity_mismatch",
    )


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        (lambda b: b["merkle_inclusion"].update(leaf_hash="0" * 64), "anchor_unbound", None),
        (lambda b: b.pop("merkle_inclusion"), "no_anchor_claimed", None),
    ],
)
def test_leaf_binding_statuses(v2: dict[str, Any], change: Any, status: str, code: Any) -> None:
    bundle = copy.deepcopy(v2["accepted"])
    change(bundle)
    result = verifier().verify(reseal(bundle))
    step = result.step("cross_reference")
    assert step is not None
    assert step.details["leaf_binding"] == status
    assert result.verdict != "verified"


@pytest.mark.parametrize(
    ("adapter_id", "code"),
    [("", "adapter.shape_invalid"), ("other.adapter.v1", "adapter.shape_invalid")],
)
def test_an_evaluation_must_name_its_contract(
    v2: dict[str, Any], adapter_id: str, code: str
) -> None:
    from affidavit.verify.bundles.hashing import proof_hash

    bundle = copy.deepcopy(v2["accepted"])
    bundle["proofs"][0]["evidence"]["adapter_evaluation"]["adapter_id"] = adapter_id
    bundle["events"][1]["payload"]["proof_hashes"] = [proof_hash(p) for p in bundle["proofs"]]
    result = verifier().verify(reseal(bundle, anchor=True))
    step = result.failed_step
    assert step is not None
    assert (step.name, step.code) == ("adapter_replay", code)
