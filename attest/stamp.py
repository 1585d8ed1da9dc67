"""Stamp ProofPack bundles: validate, decide, chain events, log the finality leaf, sign the head.

>>> import datetime, pathlib, tempfile
>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.log.transparency import TransparencyLog
>>> from affidavit.verify.bundles.verifier import BundleVerifier
>>> from affidavit.verify.contracts.policy import AcceptancePolicy
>>> key = derive_test_key("stamp doctest")                     # TEST-ONLY key
>>> log = TransparencyLog.create(pathlib.Path(tempfile.mkdtemp()) / "log.db", key, "doctest-log")
>>> contract = example_contract()
>>> policy = AcceptancePolicy.from_json({"rules": [], "default": "require_review"})
>>> when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
>>> item = StampItem("deal-1", contract, {"signal_a": True, "signal_b": True})
>>> (bundle,) = stamp_bundles(log, [item], policy, when=when)
>>> BundleVerifier([key.public_key]).verify(bundle).verdict
'verified'
>>> log.close()

A bundle (docs/formats.md §4; seed 003 "Artifact binding") holds the adapter evaluation as its
proof and an event chain ending in ``OUTCOME_RECORDED``, the finality event whose leaf is logged:
through the chain the signed head covers everything. All bundles of one call share one append
transaction and one signed tree head. Time is an argument; nothing here reads the clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.plugins import installed_validators
from affidavit.verify import errors
from affidavit.verify.bundles.events import event_hash, leaf_data, signing_payload
from affidavit.verify.bundles.hashing import bundle_hash, proof_hash
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash, lint_contract
from affidavit.verify.contracts.policy import AcceptancePolicy, lifecycle_of
from affidavit.verify.contracts.schema import schema_issues
from affidavit.verify.contracts.validators import ValidatorRegistry
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.json.forms import format_utc

__all__ = [
    "DECISION_EVENT_TYPES",
    "StampItem",
    "SwarmOptions",
    "draft_bundles",
    "evaluate_adapter",
    "example_contract",
    "finality_leaf",
    "finish_bundle",
    "stamp_bundles",
]

DECISION_EVENT_TYPES: Final = {
    "auto_accept": "AUTO_GO_APPROVED",
    "require_review": "REVIEW_REQUIRED",
    "auto_reject": "REJECTED",
}
SWARM_POLICY_EVENT: Final = "SWARM_POLICY_SET"
SWARM_POLICY_VERSION: Final = "swarm_enforcement/v1"
_EVENT_TYPE: Final = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


@dataclass(frozen=True, slots=True)
class SwarmOptions:
    """What a stamped bundle designates for the swarm-strict profile (empty: nothing)."""

    designate: tuple[str, ...] = ()
    snapshot: bool = False


@dataclass(frozen=True, slots=True)
class StampItem:
    """One deal to stamp: its id, the adapter's contract and the adapter's raw output."""

    deal_id: str
    contract: Mapping[str, Any]
    adapter_output: Any


def example_contract() -> dict[str, Any]:
    """A small boolean contract (``acme.eval_suite.v0``) with correct hashes, for docs and tests."""
    declaration: dict[str, Any] = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": "acme.eval_suite.v0",
        "adapter_version": "0.1.0",
        "input_schema_version": "1.0.0",
        "output_fields": ["signal_a", "signal_b"],
        "allowed_policy_fields": ["signal_a", "signal_b"],
        "validator_name": "starter_boolean_validator",
        "validator_version": "1.0.0",
    }
    declaration["input_schema_hash"] = input_schema_hash(declaration)
    declaration["contract_hash"] = contract_hash(declaration)
    return declaration


def _check_contract(contract: Mapping[str, Any]) -> None:
    issues = schema_issues(contract)
    if issues:
        first = issues[0]
        raise errors.ContractError(
            "contract.schema_invalid",
            f"the contract does not pass the schema: {first.code}: {first.message}",
            details={"codes": sorted({i.code for i in issues})},
        )
    for name, recompute, code in (
        ("contract_hash", contract_hash, "contract.hash_mismatch"),
        ("input_schema_hash", input_schema_hash, "contract.input_schema_hash_mismatch"),
    ):
        if contract[name] != recompute(contract):
            raise errors.ContractError(code, f"the contract's {name} does not recompute")
    # Then everything else ``adapter lint`` refuses (lifecycle fields: status, pointers, ...).
    lint_contract(contract).raise_for_errors()


def evaluate_adapter(
    contract: Mapping[str, Any], adapter_output: Any, *, validators: ValidatorRegistry | None = None
) -> dict[str, Any]:
    """Run the contract's validator (from ``validators``, default every installed one) on
    ``adapter_output``: the ``adapter_evaluation`` object. A revoked contract or a validator not
    installed gives ``unknown_adapter`` with no inputs (seed 003 lifecycle table, fail closed).

    Raises:
        ``contract.schema_invalid``, ``contract.hash_mismatch``,
            ``contract.input_schema_hash_mismatch``: the contract itself is not valid.
    """
    _check_contract(contract)
    lifecycle = lifecycle_of(contract)
    validators = installed_validators() if validators is None else validators
    validator = validators.get(contract["validator_name"], contract["validator_version"])
    problems: list[str] = []
    if lifecycle.revoked or validator is None:
        result, inputs = "unknown_adapter", {}
        problems.append("contract revoked" if lifecycle.revoked else "validator not installed")
    else:
        outcome = validator.validate(adapter_output, contract)
        result, inputs = outcome.validation_result, dict(outcome.normalized_policy_inputs)
        problems.extend(outcome.errors)
    evaluation: dict[str, Any] = {
        "adapter_id": contract["adapter_id"],
        "adapter_version": contract["adapter_version"],
        "adapter_contract": dict(contract),
        "contract_hash": contract["contract_hash"],
        "input_schema_hash": contract["input_schema_hash"],
        "validator_name": contract["validator_name"],
        "validator_version": contract["validator_version"],
        "validation_result": result,
        "normalized_policy_inputs": inputs,
    }
    if problems:
        evaluation["validation_errors"] = problems
    if lifecycle.warnings:
        evaluation["lifecycle_warnings"] = lifecycle.warnings_json()
    return evaluation


class _Chain:
    """Builds one bundle's hash-chained events (docs/formats.md §4)."""

    def __init__(self, deal_id: str, actor_id: str, timestamp: str, actor_key: SigningKey | None):
        self.deal_id, self.actor_id, self.timestamp = deal_id, actor_id, timestamp
        self.actor_key = actor_key
        self.events: list[dict[str, Any]] = []

    def add(self, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        seq = len(self.events)
        event: dict[str, Any] = {
            "event_id": "evt_" + sha256_hex(f"{self.deal_id}|{seq}".encode())[:24],
            "event_type": event_type,
            "deal_id": self.deal_id,
            "actor_id": self.actor_id,
            "timestamp": self.timestamp,
            "payload": payload,
            "prev_hash": self.events[-1]["hash"] if self.events else "",
        }
        event["hash"] = event_hash(event)
        if self.actor_key is not None:
            key_id = _actor_key_id(self.actor_key)
            signature = self.actor_key.sign_b64(signing_payload(event, key_id))
            event["actor_signature"] = {"key_id": key_id, "signature": signature}
        self.events.append(event)
        return event


def _actor_key_id(key: SigningKey) -> str:
    return key.key_id or "actor-" + sha256_hex(key.public_key.raw)[:16]


def _draft(  # noqa: PLR0917 - one deal and its stamping context
    item: StampItem,
    policy: AcceptancePolicy,
    timestamp: str,
    actor_id: str,
    actor_key: SigningKey | None,
    swarm: SwarmOptions,
    validators: ValidatorRegistry,
) -> dict[str, Any]:
    """A bundle without its inclusion proof, tree head and hash."""
    evaluation = evaluate_adapter(item.contract, item.adapter_output, validators=validators)
    decision = policy.evaluate(
        evaluation["normalized_policy_inputs"], validation_result=evaluation["validation_result"]
    )
    proof = {
        "proof_id": "prf_" + sha256_hex(f"{item.deal_id}|proof|0".encode())[:24],
        "proof_type": "adapter_evaluation",
        "evidence": {"adapter_evaluation": evaluation, "adapter_output": item.adapter_output},
    }
    binding = {"adapter_id": evaluation["adapter_id"], "contract_hash": evaluation["contract_hash"]}
    chain = _Chain(item.deal_id, actor_id, timestamp, actor_key)
    chain.add("DEAL_CREATED", {**binding, "policy_hash": policy.policy_hash})
    designation_id = None
    if swarm.designate:
        swarm_policy = {
            "policy_version": SWARM_POLICY_VERSION,
            "required_signed_event_types": list(swarm.designate),
        }
        designation_id = chain.add(SWARM_POLICY_EVENT, {"swarm_policy": swarm_policy})["event_id"]
    chain.add(
        "PROOF_READY",
        {
            **binding,
            "proof_type": "adapter_evaluation",
            "proof_count": 1,
            "proof_hashes": [proof_hash(proof)],
            "validation_result": evaluation["validation_result"],
        },
    )
    decided = chain.add(
        DECISION_EVENT_TYPES[decision.action],
        {
            **binding,
            "decision": decision.action,
            "policy": policy.to_json(),
            "policy_hash": policy.policy_hash,
            "policy_snapshot": decision.snapshot(),
        },
    )
    chain.add(
        "OUTCOME_RECORDED", {"decision": decision.action, "decision_event_id": decided["event_id"]}
    )
    spec = "3.0.0" if actor_key is not None else "2.0.0"
    draft: dict[str, Any] = {
        "spec_version": spec,
        "deal_id": item.deal_id,
        "proofs": [proof],
        "events": chain.events,
    }
    if swarm.snapshot and designation_id is not None:
        snapshot = {
            "policy_version": SWARM_POLICY_VERSION,
            "designation_event_id": designation_id,
            "evaluated_at": timestamp,
            "summary": {"required_signed_event_types": list(swarm.designate)},
        }
        draft["swarm_enforcement"] = {
            "snapshot": snapshot,
            "snapshot_hash": sha256_hex(py_compact(snapshot)),
        }
    if actor_key is not None:
        draft["key_directory"] = {
            _actor_key_id(actor_key): {
                "actor_id": actor_id,
                "public_key_base64": actor_key.public_key.b64,
                "issued_at": timestamp,
                "revoked_at": None,
            }
        }
    return draft


def draft_bundles(
    items: Sequence[StampItem],
    policy: AcceptancePolicy,
    *,
    when: datetime,
    actor_key: SigningKey | None = None,
    actor_id: str = "affidavit",
    swarm: SwarmOptions = SwarmOptions(),
) -> list[dict[str, Any]]:
    """Validate, decide and chain every item: the bundles without their log proof, in ``items``
    order. :func:`finish_bundle` completes each with the proof of its :func:`finality_leaf`
    from any log, local (:func:`stamp_bundles`) or a registry's. Nothing is logged here.

    Raises:
        ``usage.invalid``: ``when`` is naive, or ``items`` is empty, or a deal id repeats, or a
            swarm designation has no actor key or a malformed event type.
        ``contract.schema_invalid``, ``contract.hash_mismatch``...: an invalid contract.
    """
    if when.tzinfo is None or when.utcoffset() is None:
        raise errors.UsageError("the stamping time must be timezone-aware")
    if not items:
        raise errors.UsageError("nothing to stamp")
    deal_ids = [item.deal_id for item in items]
    if len(set(deal_ids)) != len(deal_ids) or not all(deal_ids):
        raise errors.UsageError("deal ids must be non-empty and distinct")
    if swarm.designate and actor_key is None:
        raise errors.UsageError("a swarm designation needs an actor key (signed events)")
    if swarm.snapshot and not swarm.designate:
        raise errors.UsageError("a swarm snapshot needs a swarm designation")
    bad = [t for t in swarm.designate if not _EVENT_TYPE.fullmatch(t)]
    if bad:
        raise errors.UsageError(f"swarm designation: {bad[0]!r} is not an event type (A-Z, 0-9, _)")
    timestamp = format_utc(when)
    validators = installed_validators()  # one registry: plug-ins load once
    return [
        _draft(item, policy, timestamp, actor_id, actor_key, swarm, validators) for item in items
    ]


def finality_leaf(draft: Mapping[str, Any]) -> bytes:
    """The log leaf of a draft: its finality event's (docs/formats.md §4 "Merkle log")."""
    return leaf_data(draft["events"][-1])


def finish_bundle(
    draft: Mapping[str, Any], inclusion: Mapping[str, Any], head: Mapping[str, Any]
) -> dict[str, Any]:
    """``draft`` with ``merkle_inclusion``, ``bundle_hash``, ``signed_tree_head`` and
    ``exported_at`` (docs/formats.md §4). The caller proved ``inclusion`` under ``head``."""
    bundle: dict[str, Any] = {**draft, "merkle_inclusion": dict(inclusion)}
    bundle["bundle_hash"] = bundle_hash(bundle)
    bundle["signed_tree_head"] = dict(head)
    bundle["exported_at"] = draft["events"][-1]["timestamp"]
    return _ordered(bundle)


def stamp_bundles(
    log: TransparencyLog,
    items: Sequence[StampItem],
    policy: AcceptancePolicy,
    *,
    when: datetime,
    actor_key: SigningKey | None = None,
    actor_id: str = "affidavit",
    swarm: SwarmOptions = SwarmOptions(),
) -> list[dict[str, Any]]:
    """Stamp every item under one signed tree head, appended in one transaction; returns the
    bundles in ``items`` order.

    Raises:
        as :func:`draft_bundles` (before any append).
        ``log.no_signing_key``: the log has no signing key.
    """
    drafts = draft_bundles(
        items, policy, when=when, actor_key=actor_key, actor_id=actor_id, swarm=swarm
    )
    indexes = log.append([finality_leaf(d) for d in drafts])
    head = log.signed_tree_head(when).to_json()
    return [
        finish_bundle(
            draft, log.inclusion_proof(index, head["tree_size"]).to_json(log.log_id), head
        )
        for draft, index in zip(drafts, indexes, strict=True)
    ]


_ORDER: Final = (
    "spec_version",
    "deal_id",
    "proofs",
    "events",
    "merkle_inclusion",
    "bundle_hash",
    "signed_tree_head",
    "key_directory",
    "swarm_enforcement",
    "exported_at",
)


def _ordered(bundle: Mapping[str, Any]) -> dict[str, Any]:
    return {name: bundle[name] for name in _ORDER if name in bundle}
