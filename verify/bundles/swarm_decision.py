"""Step ``swarm_decision`` of profile ``swarm-strict``: the recorded gate decision context.

>>> check_swarm_decision({"events": []}, None).status
'not_checked'

Each ``CONSEQUENCE_AUTHORIZED`` event's ``payload.swarm_decision`` (``swarm_decision/v1``) must be
well-shaped, coherent, match its ``swarm_decision_digest`` and correlate with its event and the
signed designation (docs/formats.md §4; behaviour of aigentsy-verify 1.6.3); any problem fails
with ``bundle.swarm_decision_invalid``, listed in ``details.records[*].errors``. Events without
the key are historical and skip (``not_checked`` when none has it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.results import StepResult

__all__ = ["CONTEXT_VERSION", "check_swarm_decision"]

STEP: Final = "swarm_decision"
CONTEXT_VERSION: Final = "swarm_decision/v1"
_DIGEST_EXCLUDED: Final = ("recorded_at", "event_id")


def _hash(value: Any) -> str | None:
    try:
        return sha256_hex(py_compact(value))
    except errors.AffidavitError:
        return None


def _same_set(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return sorted(json.dumps(v, sort_keys=True) for v in a) == sorted(
        json.dumps(v, sort_keys=True) for v in b
    )


def _shape(raw: Any, context: Mapping[str, Any]) -> list[str]:
    problems = []
    if not isinstance(raw, dict):
        problems.append("swarm_decision present but not an object (malformed, not absent)")
    if context.get("context_version") != CONTEXT_VERSION:
        problems.append(f"unsupported context_version: {context.get('context_version')!r}")
    if context.get("enforcement") not in ("on", "off"):
        problems.append("enforcement must be 'on' or 'off'")
    if not isinstance(context.get("evaluated"), bool):
        problems.append("evaluated must be a boolean")
    for name in ("applicable", "satisfied"):
        if isinstance(raw, dict) and name not in raw:
            problems.append(f"{name} missing (v1 requires it, null when not evaluated)")
        elif context.get(name) is not None and not isinstance(context.get(name), bool):
            problems.append(f"{name} must be a boolean or null")
    if isinstance(raw, dict):
        problems.extend(
            f"{name} missing (v1 requires it)"
            for name in ("reason", "checks_passed", "checks_failed")
            if name not in raw
        )
    problems.extend(
        f"{name} must be an array"
        for name in ("checks_passed", "checks_failed")
        if name in context and not isinstance(context[name], list)
    )
    return problems


def _coherence(context: Mapping[str, Any]) -> list[str]:
    enforcement, evaluated = context.get("enforcement"), context.get("evaluated")
    applicable, satisfied = context.get("applicable"), context.get("satisfied")
    problems = []
    if enforcement == "off" and evaluated is True:
        problems.append("contradiction: enforcement off but evaluated")
    if evaluated is False and (applicable is not None or satisfied is not None):
        problems.append("contradiction: not evaluated but applicable/satisfied stated")
    if evaluated is True and applicable is None:
        problems.append("contradiction: evaluated but applicable is null")
    if applicable is False and satisfied is not None:
        problems.append("contradiction: not applicable but satisfied stated")
    if applicable is True and satisfied is None:
        problems.append("contradiction: applicable but satisfied is null")
    return problems


def _correlation(
    event: Mapping[str, Any],
    context: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    required: list[Any] | None,
) -> list[str]:
    payload = event["payload"]
    problems = []
    claimed = payload.get("swarm_decision_digest")
    if not claimed:
        problems.append("swarm_decision_digest missing")
    else:
        material = {k: v for k, v in context.items() if k not in _DIGEST_EXCLUDED}
        if _hash(material) != claimed:
            problems.append("swarm_decision_digest does not recompute")
    problems.extend(
        f"context {name} differs from its own event's"
        for name in ("identity_hash", "acceptance_id", "hash_version")
        if context.get(name) and payload.get(name) and context[name] != payload[name]
    )
    named_id, policy_hash = context.get("policy_event_id"), context.get("policy_hash")
    if named_id:
        named = [e for e in events if e["event_id"] == named_id]
        policy = named[0]["payload"].get("swarm_policy") if len(named) == 1 else None
        if len(named) != 1:
            problems.append(f"policy_event_id {named_id!r} names {len(named)} events, not one")
        elif not isinstance(policy, dict):
            problems.append("policy_event_id names an event without a swarm_policy")
        else:
            listed, stated = (
                policy.get("required_signed_event_types"),
                context.get("required_signed_event_types"),
            )
            if (
                isinstance(listed, list)
                and isinstance(stated, list)
                and not _same_set(listed, stated)
            ):
                problems.append("context designation differs from the designation it names")
            version = context.get("policy_version")
            if policy.get("policy_version") and version and policy["policy_version"] != version:
                problems.append("context policy_version differs from the designation it names")
            if policy_hash and _hash(policy) != policy_hash:
                problems.append("context policy_hash is not the hash of the policy it names")
    elif policy_hash:
        problems.append("policy_hash stated without policy_event_id: it identifies nothing")
    elif (
        required is not None
        and isinstance(context.get("required_signed_event_types"), list)
        and not _same_set(context["required_signed_event_types"], required)
    ):
        problems.append("context designation differs from the signed designation")
    return problems


def check_swarm_decision(bundle: Mapping[str, Any], required: list[Any] | None) -> StepResult:
    """Step ``swarm_decision`` of chain-checked events; ``required``: the signed designation."""
    events: Sequence[Mapping[str, Any]] = bundle["events"]
    records = []
    problems = 0
    for index, event in enumerate(events):
        if event["event_type"] != "CONSEQUENCE_AUTHORIZED":
            continue
        if "swarm_decision" not in event["payload"]:
            continue
        raw = event["payload"]["swarm_decision"]
        context: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        found = _shape(raw, context) + _coherence(context)
        found += _correlation(event, context, events, required)
        problems += len(found)
        records.append(
            {
                "event_id": event["event_id"],
                "event_index": index,
                "decision": event["payload"].get("decision"),
                "valid": not found,
                "errors": found,
            }
        )
    if not records:
        return StepResult.not_checked(
            STEP, "no CONSEQUENCE_AUTHORIZED event records a swarm_decision"
        )
    if problems:
        first = next(r for r in records if r["errors"])
        invalid = errors.BundleError(
            "bundle.swarm_decision_invalid",
            f"{problems} problem(s); event {first['event_id']!r}: {first['errors'][0]}",
        )
        return StepResult.failed(STEP, invalid, records=records)
    return StepResult.ok(STEP, records=records)
