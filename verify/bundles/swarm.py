"""Profile ``swarm-strict``: complete, temporally valid actor-signature coverage of the events a
bundle designates (docs/formats.md §4; aigentsy-verify 1.6.3 ``--swarm-strict``).

>>> [s.name for s in swarm_steps({"events": []}, None)]
['swarm_coverage', 'swarm_snapshot', 'swarm_decision']

The designation is the latest event whose ``payload.swarm_policy`` is an object. The runtime's
``swarm_enforcement`` snapshot (outside ``bundle_hash``) is checked against it, never the source
of authority. The profile never re-runs a policy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.actor_keys import directory_entries
from affidavit.verify.bundles.events import check_directory_signature, trust_step
from affidavit.verify.bundles.swarm_decision import check_swarm_decision
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.results import StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.actor_trust import ActorTrust

__all__ = ["POLICY_VERSION", "find_designation", "swarm_steps"]

POLICY_VERSION: Final = "swarm_enforcement/v1"
COVERAGE: Final = "swarm_coverage"
SNAPSHOT: Final = "swarm_snapshot"


def find_designation(events: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the latest event whose ``payload.swarm_policy`` is an object."""
    for index in range(len(events) - 1, -1, -1):
        payload = events[index].get("payload")
        if isinstance(payload, dict) and isinstance(payload.get("swarm_policy"), dict):
            return index
    return None


def _as_set(values: Sequence[Any]) -> list[str]:
    """A list compared as a set, whatever its items (canonical text, sorted)."""
    return sorted({json.dumps(v, sort_keys=True) for v in values})


class _Strict:
    """Strict check of one event's ``actor_signature`` against the key directory (either shape),
    by the signed actor's key, inside its window and lifecycle."""

    def __init__(self, bundle: Mapping[str, Any], trust: ActorTrust | None) -> None:
        self.directory = directory_entries(bundle.get("key_directory")) or {}
        self.trust = trust
        self.untrusted = 0

    def problem(self, event: Mapping[str, Any]) -> str | None:
        signature = event.get("actor_signature")
        if not isinstance(signature, dict) or not signature.get("signature"):
            return "no actor_signature"
        key_id = signature.get("key_id")
        if not isinstance(key_id, str) or not key_id:
            return "actor_signature lacks a key_id"
        entry = self.directory.get(key_id)
        when = event["timestamp"]
        error = check_directory_signature(event, entry, key_id, signature["signature"], when)
        if error is not None:
            return f"{error.code}: {error.message}"
        if self.trust is None or not self.trust.vouches(
            entry.get("public_key_base64") if isinstance(entry, dict) else None,
            event["actor_id"],
            when,
        ):
            self.untrusted += 1
        return None


def _coverage(
    bundle: Mapping[str, Any], trust: ActorTrust | None
) -> tuple[StepResult, list[Any] | None]:
    """Step ``swarm_coverage`` and the designated types (None without a designation)."""
    events: Sequence[Mapping[str, Any]] = bundle["events"]
    index = find_designation(events)
    if index is None:
        missing = errors.BundleError(
            "bundle.swarm_designation_missing", "no event carries payload.swarm_policy"
        )
        return StepResult.failed(COVERAGE, missing), None
    designation = events[index]
    policy = designation["payload"]["swarm_policy"]
    strict = _Strict(bundle, trust)
    problems: list[str] = []
    why = strict.problem(designation)
    if why is not None:
        problems.append(f"designation event signature: {why}")
    if policy.get("policy_version") != POLICY_VERSION:
        problems.append(f"unsupported policy_version: {policy.get('policy_version')!r}")
    required = policy.get("required_signed_event_types")
    if not isinstance(required, list):
        problems.append("required_signed_event_types missing or not an array")
        required = []
    details: dict[str, Any] = {
        "designation_event_id": designation["event_id"],
        "required_signed_event_types": list(required),
    }
    if problems:
        invalid = errors.BundleError("bundle.swarm_designation_invalid", "; ".join(problems))
        return StepResult.failed(COVERAGE, invalid, errors=problems, **details), required
    per_type: dict[str, dict[str, int]] = {}
    for event_type in dict.fromkeys(t for t in required if isinstance(t, str)):
        instances = [e for e in events if e["event_type"] == event_type]
        passed = 0
        if not instances:
            problems.append(f"required event type absent: {event_type}")
        for event in instances:
            why = strict.problem(event)
            if why is None:
                passed += 1
            else:
                problems.append(f"{event_type} ({event['event_id']}): {why}")
        per_type[event_type] = {"present": len(instances), "passed": passed}
    if any(not isinstance(t, str) for t in required):
        problems.append("required_signed_event_types holds a non-string")
    details["per_type"] = per_type
    if problems:
        incomplete = errors.BundleError(
            "bundle.swarm_coverage_incomplete",
            f"{len(problems)} problem(s): " + "; ".join(problems[:3]),
        )
        return StepResult.failed(COVERAGE, incomplete, errors=problems, **details), required
    return trust_step(COVERAGE, not strict.untrusted, **details), required


def _snapshot(bundle: Mapping[str, Any], required: list[Any] | None) -> StepResult:
    """Step ``swarm_snapshot``: ``snapshot_hash`` recomputes and the snapshot's designated types
    equal the signed designation's (as sets)."""

    def mismatch(message: str, **details: Any) -> StepResult:
        error = errors.BundleError("bundle.swarm_snapshot_mismatch", message)
        return StepResult.failed(SNAPSHOT, error, **details)

    if "swarm_enforcement" not in bundle:
        return StepResult.not_checked(SNAPSHOT, "the bundle has no swarm_enforcement snapshot")
    section = bundle["swarm_enforcement"]
    snapshot = section.get("snapshot") if isinstance(section, dict) else None
    if not isinstance(snapshot, dict):
        return mismatch("swarm_enforcement.snapshot is not an object")
    try:
        recomputed = sha256_hex(py_compact(snapshot))
    except errors.AffidavitError as e:
        return StepResult.failed(SNAPSHOT, e)
    claimed = section.get("snapshot_hash")
    if claimed != recomputed:
        return mismatch("snapshot_hash does not recompute", expected=recomputed, actual=claimed)
    summary = snapshot.get("summary")
    listed = summary.get("required_signed_event_types") if isinstance(summary, dict) else None
    if required is not None and isinstance(listed, list) and _as_set(listed) != _as_set(required):
        message = "the snapshot's designation differs from the signed designation"
        return mismatch(message, expected=required, actual=listed)
    return StepResult.ok(SNAPSHOT, snapshot_hash=recomputed)


def swarm_steps(bundle: Mapping[str, Any], trust: ActorTrust | None) -> list[StepResult]:
    """Steps ``swarm_coverage``, ``swarm_snapshot``, ``swarm_decision`` of chain-checked events."""
    coverage, required = _coverage(bundle, trust)
    return [coverage, _snapshot(bundle, required), check_swarm_decision(bundle, required)]
