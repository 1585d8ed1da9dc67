"""Profile swarm-strict on real stamped bundles (``stamp --swarm-designate``), against the peer.

Each case is also run through aigentsy-verify 1.6.3's ``verify_bundle_swarm_strict`` (the oracle)
with the log key: both must reach the same verified / not-verified decision.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, SwarmOptions, stamp_bundles
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.json.canonical import py_compact, sha256_hex

from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_ID,
    LOG_KEY,
    OUTPUTS,
    POLICY,
    WHEN,
    contract,
    reseal,
)

DESIGNATED = ("PROOF_READY", "OUTCOME_RECORDED")


def _stamp(designate: tuple[str, ...] = DESIGNATED, *, snapshot: bool = True) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="affidavit-swarm-"))
    with TransparencyLog.create(folder / "log.db", LOG_KEY, LOG_ID) as log:
        (bundle,) = stamp_bundles(
            log,
            [StampItem("swarm-1", contract(), OUTPUTS["accepted"])],
            POLICY,
            when=WHEN,
            actor_key=ACTOR_KEY,
            actor_id=ACTOR_ID,
            swarm=SwarmOptions(designate, snapshot) if designate else SwarmOptions(),
        )
    return bundle


@pytest.fixture(scope="module")
def swarm() -> dict[str, Any]:
    return _stamp()


def _strict(trust: ActorTrust | None = None) -> BundleVerifier:
    return BundleVerifier([LOG_KEY.public_key], actor_trust=trust, profile="swarm-strict")


def _peer_verified(bundle: dict[str, Any]) -> bool:
    from aigentsy_verify.bundle import verify_bundle_swarm_strict

    result = verify_bundle_swarm_strict(copy.deepcopy(bundle), LOG_KEY.public_key.b64)
    return bool(result["verified"])


def _insert(bundle: dict[str, Any], index: int, event_type: str, payload: Any) -> dict[str, Any]:
    """A signed event inserted before ``index``; chain, signatures and anchor redone."""
    out = copy.deepcopy(bundle)
    out["events"].insert(
        index,
        {
            "event_id": f"evt_ins_{index}_{event_type.lower()}",
            "event_type": event_type,
            "deal_id": out["deal_id"],
            "actor_id": ACTOR_ID,
            "timestamp": out["events"][0]["timestamp"],
            "payload": payload,
            "prev_hash": "",
            "hash": "",
            "actor_signature": {"key_id": "actor-key-1", "signature": ""},
        },
    )
    return reseal(out, anchor=True)


def _policy(required: list[str], version: str = "swarm_enforcement/v1") -> dict[str, Any]:
    return {"swarm_policy": {"policy_version": version, "required_signed_event_types": required}}


def _unsign(event_type: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(bundle: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(bundle)
        for event in out["events"]:
            if event["event_type"] == event_type:
                del event["actor_signature"]
        return reseal(out)

    return change


def _set_snapshot(**summary: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(bundle: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(bundle)
        snapshot = out["swarm_enforcement"]["snapshot"]
        snapshot["summary"].update(summary)
        out["swarm_enforcement"]["snapshot_hash"] = sha256_hex(py_compact(snapshot))
        return out

    return change


def _directory(**changes: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(bundle: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(bundle)
        out["key_directory"]["actor-key-1"].update(changes)
        return out

    return change


def test_a_stamped_swarm_bundle_verifies(swarm: dict[str, Any]) -> None:
    result = _strict().verify(swarm)
    statuses = {s.name: s.status for s in result.steps}
    assert result.verdict == "verified", result.to_json()
    assert result.subject["profile"] == "swarm-strict"
    assert statuses["swarm_coverage"] == "self_asserted"
    assert statuses["swarm_snapshot"] == "ok"
    assert statuses["swarm_decision"] == "not_checked"
    coverage = result.step("swarm_coverage")
    assert coverage is not None
    assert coverage.details["per_type"] == {
        "PROOF_READY": {"present": 1, "passed": 1},
        "OUTCOME_RECORDED": {"present": 1, "passed": 1},
    }
    assert _peer_verified(swarm)
    trust = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw, ACTOR_ID)])
    trusted = _strict(trust).verify(swarm)
    assert trusted.step("swarm_coverage").status == "ok"  # type: ignore[union-attr]


def test_the_default_profile_reports_no_swarm_step(swarm: dict[str, Any]) -> None:
    result = BundleVerifier([LOG_KEY.public_key]).verify(swarm)
    assert result.step("swarm_coverage") is None
    assert result.to_json()["profile"] == "default"


CASES: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str, str]] = [
    ("no designation", lambda b: _stamp(()), "swarm_coverage", "bundle.swarm_designation_missing"),
    ("designated type absent", lambda b: _stamp(("SETTLED",)), "swarm_coverage",
     "bundle.swarm_coverage_incomplete"),
    ("designated event unsigned", _unsign("PROOF_READY"), "swarm_coverage",
     "bundle.swarm_coverage_incomplete"),
    ("designation unsigned", _unsign("SWARM_POLICY_SET"), "swarm_coverage",
     "bundle.swarm_designation_invalid"),
    ("unknown policy version", lambda b: _insert(b, 2, "SWARM_POLICY_SET",
     _policy(["PROOF_READY"], "swarm_enforcement/v9")), "swarm_coverage",
     "bundle.swarm_designation_invalid"),
    ("the latest designation wins", lambda b: _insert(b, 2, "SWARM_POLICY_SET",
     _policy(["SETTLED"])), "swarm_coverage", "bundle.swarm_coverage_incomplete"),
    ("snapshot hash tampered", lambda b: {**b, "swarm_enforcement": {
        **b["swarm_enforcement"], "snapshot_hash": "0" * 64}}, "swarm_snapshot",
     "bundle.swarm_snapshot_mismatch"),
    ("snapshot designation differs", _set_snapshot(required_signed_event_types=["PROOF_READY"]),
     "swarm_snapshot", "bundle.swarm_snapshot_mismatch"),
    ("inactive key without revoked_at", _directory(status="revoked"), "actor_signatures",
     "event.key_lifecycle_malformed"),
    ("key revoked before signing", _directory(revoked_at="2026-01-01T00:00:00Z"),
     "actor_signatures", "event.key_not_valid"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "step", "code"), CASES, ids=[c[0] for c in CASES])
def test_swarm_strict_failures_agree_with_the_peer(
    swarm: dict[str, Any],
    name: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    step: str,
    code: str,
) -> None:
    bundle = change(swarm)
    result = _strict().verify(bundle)
    failed = result.failed_step
    assert failed is not None, (name, result.to_json())
    assert (result.verdict, failed.name, failed.code) == ("failed", step, code)
    assert not _peer_verified(bundle), name


def _decision(**changes: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "context_version": "swarm_decision/v1",
        "enforcement": "on",
        "evaluated": True,
        "applicable": True,
        "satisfied": True,
        "reason": "all designated events signed",
        "checks_passed": ["coverage"],
        "checks_failed": [],
        "identity_hash": "c" * 64,
    }
    context.update(changes)
    digest = sha256_hex(py_compact(context))
    return {
        "identity_hash": "c" * 64,
        "decision": "authorized",
        "swarm_decision": context,
        "swarm_decision_digest": digest,
    }


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        (_decision(), "ok"),
        (_decision(applicable=False), "failed"),  # not applicable but satisfied stated
        (_decision(enforcement="off"), "failed"),  # off but evaluated
        ({**_decision(), "swarm_decision_digest": "0" * 64}, "failed"),
        (_decision(policy_hash="d" * 64), "failed"),  # a hash that names no policy
    ],
)
def test_swarm_decision_records(swarm: dict[str, Any], payload: Any, status: str) -> None:
    bundle = _insert(swarm, 3, "CONSEQUENCE_AUTHORIZED", payload)
    result = _strict().verify(bundle)
    step = result.step("swarm_decision")
    assert step is not None
    assert step.status == status, step
    if status == "failed":
        assert (result.failed_step.code, result.verdict) == (  # type: ignore[union-attr]
            "bundle.swarm_decision_invalid",
            "failed",
        )
    assert _peer_verified(bundle) == (status == "ok")
