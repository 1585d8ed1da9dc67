"""Adapter replay: re-derive every adapter evaluation and decision a bundle carries, offline
(seed 003 "replay independence"; docs/formats.md §4 ``adapter_evaluation`` and its statuses).

>>> replay_adapter({"proofs": [], "events": []}).status
'not_checked'

Each ``adapter_evaluation`` (in ``proof.evidence`` or an ``event.payload``) is checked in order:
shape, the embedded contract's schema, both hashes, the allowed policy fields, the validator
declaration, then the result (lifecycle, and a re-run when the validator and raw output are at
hand). Then every ``policy_snapshot`` is replayed (:func:`~affidavit.verify.contracts.policy.
replay_snapshot`). Contract validation is memoized on its canonical bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash
from affidavit.verify.contracts.policy import AcceptancePolicy, lifecycle_of, replay_snapshot
from affidavit.verify.contracts.schema import schema_issues
from affidavit.verify.contracts.validators import ValidatorRegistry, default_registry
from affidavit.verify.json.canonical import py_compact
from affidavit.verify.json.strict import loads
from affidavit.verify.results import StepResult

__all__ = ["STATUS_CODES", "Evaluation", "iter_evaluations", "replay_adapter"]

STEP: Final = "adapter_replay"
VALIDATION_RESULTS: Final = frozenset({"passed", "rejected", "unknown_adapter"})

# docs/formats.md §4 replay status -> its stable error code (one per status).
STATUS_CODES: Final[dict[str, str]] = {
    "adapter_evaluation_shape_invalid": "adapter.shape_invalid",
    "schema_fail": "adapter.schema_fail",
    "contract_hash_mismatch": "adapter.contract_hash_mismatch",
    "input_schema_hash_mismatch": "adapter.input_schema_hash_mismatch",
    "normalized_inputs_not_in_allowed_policy_fields": "adapter.normalized_inputs_not_allowed",
    "validator_declaration_missing": "adapter.validator_declaration_missing",
    "validator_result_inconsistent": "adapter.validator_result_inconsistent",
    "matched_rule_does_not_fire_against_evaluated_inputs": "adapter.matched_rule_does_not_fire",
}
_REQUIRED: Final = (
    "adapter_id",
    "adapter_contract",
    "contract_hash",
    "input_schema_hash",
    "normalized_policy_inputs",
    "validation_result",
)


class Evaluation(NamedTuple):
    """One adapter evaluation found in a bundle, with where it was and its raw output if any."""

    where: str
    evaluation: Any
    raw_output: Any  # None when the bundle does not carry it


class _Replay(Exception):
    """Internal: a replay status with a message (becomes a failed step)."""

    def __init__(self, status: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.details = status, message, details


def iter_evaluations(proofs: Sequence[Any], events: Sequence[Any]) -> Iterator[Evaluation]:
    """Every ``adapter_evaluation`` in ``proof.evidence`` and ``event.payload``, in bundle order."""
    for part, items, key in (("proofs", proofs, "evidence"), ("events", events, "payload")):
        for i, item in enumerate(items):
            found = item.get(key) if isinstance(item, dict) else None
            if isinstance(found, dict) and "adapter_evaluation" in found:
                where = f"{part}[{i}].{key}"
                yield Evaluation(where, found["adapter_evaluation"], found.get("adapter_output"))


@lru_cache(maxsize=1024)
def _contract_facts(canonical: bytes) -> tuple[tuple[str, ...], str, str]:
    """Schema issue codes and both recomputed hashes of a declaration, memoized on its bytes."""
    declaration = loads(canonical)
    issues = tuple(issue.code for issue in schema_issues(declaration))
    return issues, contract_hash(declaration), input_schema_hash(declaration)


@lru_cache(maxsize=256)
def _policy_facts(canonical: bytes) -> tuple[AcceptancePolicy, str]:
    """A policy parsed from its own py-compact bytes, and its ``policy_hash``; memoized on the
    bytes, so the cached policy shares no object with any caller's document."""
    policy = AcceptancePolicy.from_json(loads(canonical))
    return policy, policy.policy_hash


def _policy_and_hash(raw: Any) -> tuple[AcceptancePolicy, str]:
    """Parse an embedded policy and recompute ``policy_hash`` (docs/formats.md §4), memoized on the
    policy's exact py-compact bytes; anything those bytes cannot carry takes the plain path."""
    try:
        return _policy_facts(py_compact(raw))
    except (errors.CanonicalError, errors.ParseError):
        policy = AcceptancePolicy.from_json(raw)
        return policy, policy.policy_hash


def _strictly_equal(a: Any, b: Any) -> bool:
    """True only when ``a`` and ``b`` are the same JSON value of the same Python types (finite
    floats with one repr), which implies equal py-compact bytes. False proves nothing."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return a.keys() == b.keys() and all(_strictly_equal(v, b[k]) for k, v in a.items())
    if kind is list:
        return len(a) == len(b) and all(map(_strictly_equal, a, b))
    if kind is float:
        return math.isfinite(a) and float.__repr__(a) == float.__repr__(b)
    return kind in (str, int, bool, type(None)) and bool(a == b)


def _same_bytes(a: Any, b: Any) -> bool:
    """``py_compact(a) == py_compact(b)``, skipping both encodings when a strict walk proves it."""
    return _strictly_equal(a, b) or py_compact(a) == py_compact(b)


def _check_contract(ae: Mapping[str, Any]) -> dict[str, Any]:
    """Steps 2-5 for one evaluation; returns the declaration."""
    decl = ae["adapter_contract"]
    issues, recomputed_ch, recomputed_ish = _contract_facts(py_compact(decl))
    if issues:
        raise _Replay("schema_fail", f"embedded adapter_contract fails: {', '.join(issues)}")
    for name, recomputed, status in (
        ("contract_hash", recomputed_ch, "contract_hash_mismatch"),
        ("input_schema_hash", recomputed_ish, "input_schema_hash_mismatch"),
    ):
        for claimed in (decl[name], ae[name]):
            if claimed != recomputed:
                raise _Replay(
                    status, f"{name} does not recompute", expected=recomputed, actual=claimed
                )
    inputs = ae["normalized_policy_inputs"]
    leaked = sorted(set(inputs) - set(decl["allowed_policy_fields"]))
    if leaked:
        raise _Replay(
            "normalized_inputs_not_in_allowed_policy_fields",
            f"normalized_policy_inputs names fields not allowed: {', '.join(leaked)}",
            actual=leaked,
        )
    declared = (decl["validator_name"], decl["validator_version"])
    named = (ae.get("validator_name", declared[0]), ae.get("validator_version", declared[1]))
    if not all(declared) or named != declared:
        raise _Replay(
            "validator_declaration_missing",
            "the evaluation does not name the contract's validator",
            expected=list(declared),
            actual=list(named),
        )
    return decl  # type: ignore[no-any-return]


def _check_result(
    ae: Mapping[str, Any],
    decl: Mapping[str, Any],
    raw_output: Any,
    notes: list[str],
    validators: ValidatorRegistry,
) -> None:
    """Step 6: self-consistency, lifecycle, and a re-run of the validator when possible."""
    result, inputs = ae["validation_result"], ae["normalized_policy_inputs"]
    if not isinstance(result, str) or result not in VALIDATION_RESULTS:  # a list is unhashable
        raise _Replay("validator_result_inconsistent", f"unknown validation_result {result!r}")
    if result != "passed" and inputs:
        raise _Replay(
            "validator_result_inconsistent", f"a {result} evaluation carries normalized inputs"
        )
    revoked = lifecycle_of(decl).revoked
    if revoked and result != "unknown_adapter":
        raise _Replay(
            "validator_result_inconsistent",
            "a revoked contract must route to unknown_adapter (seed 003 lifecycle table)",
            expected="unknown_adapter",
            actual=result,
        )
    if raw_output is None:
        notes.append("raw adapter output not carried: validator not re-run")
        return
    validator = validators.get(decl["validator_name"], decl["validator_version"])
    if validator is None:
        notes.append(
            f"validator {decl['validator_name']} {decl['validator_version']} not installed"
        )
        return
    if revoked:
        expected_result, expected_inputs = "unknown_adapter", {}
    else:
        rerun = validator.validate(raw_output, decl)
        expected_result = rerun.validation_result
        expected_inputs = dict(rerun.normalized_policy_inputs)
    if result != expected_result or not _same_bytes(inputs, expected_inputs):
        raise _Replay(
            "validator_result_inconsistent",
            "re-running the validator on the raw output gives another result",
            expected={
                "validation_result": expected_result,
                "normalized_policy_inputs": expected_inputs,
            },
            actual={"validation_result": result, "normalized_policy_inputs": inputs},
        )


def _check_evaluation(
    item: Evaluation, notes: list[str], warnings: list[str], validators: ValidatorRegistry
) -> dict[str, Any]:
    ae = item.evaluation
    if not isinstance(ae, dict) or any(k not in ae for k in _REQUIRED):
        raise _Replay("adapter_evaluation_shape_invalid", f"{item.where}: missing fields")
    if not isinstance(ae["adapter_contract"], dict) or not isinstance(
        ae["normalized_policy_inputs"], dict
    ):
        raise _Replay("adapter_evaluation_shape_invalid", f"{item.where}: wrong field types")
    adapter_id = ae["adapter_id"]
    if not isinstance(adapter_id, str) or not adapter_id:
        raise _Replay("adapter_evaluation_shape_invalid", f"{item.where}: adapter_id is empty")
    decl = _check_contract(ae)
    if adapter_id != decl["adapter_id"]:  # the contract passed its schema: adapter_id is there
        raise _Replay(
            "adapter_evaluation_shape_invalid",
            f"{item.where}: adapter_id is not the embedded contract's",
            expected=decl["adapter_id"],
            actual=adapter_id,
        )
    # The evaluation names the version of the contract it embeds (docs/parity.md A-16), as it
    # names its adapter_id: a claimed 9.9.9 around an embedded 0.1.0 is refused.
    if "adapter_version" in ae and ae["adapter_version"] != decl["adapter_version"]:
        raise _Replay(
            "adapter_evaluation_shape_invalid",
            f"{item.where}: adapter_version is not the embedded contract's",
            expected=decl["adapter_version"],
            actual=ae["adapter_version"],
        )
    _check_result(ae, decl, item.raw_output, notes, validators)
    for warning in lifecycle_of(decl).warnings:
        pointer = f", replaced by {warning['replaced_by']}" if warning["replaced_by"] else ""
        warnings.append(
            f"{decl['adapter_id']}@{decl['adapter_version']} is {warning['kind']}{pointer}"
        )
    return ae


def _check_decision(
    index: int, payload: Mapping[str, Any], by_contract: Mapping[str, Mapping[str, Any]]
) -> None:
    """Replay one decision event's ``policy_snapshot`` (see the module docstring)."""
    status = "matched_rule_does_not_fire_against_evaluated_inputs"
    policy: AcceptancePolicy | None = None
    try:
        if "policy" in payload:
            policy, recomputed = _policy_and_hash(payload["policy"])
            if payload.get("policy_hash") != recomputed:
                raise _Replay(
                    status,
                    f"events[{index}]: policy_hash does not recompute",
                    expected=recomputed,
                    actual=payload.get("policy_hash"),
                )
        decision = replay_snapshot(payload["policy_snapshot"], policy)
    except errors.AffidavitError as e:
        raise _Replay(status, f"events[{index}]: {e.message}") from None
    if (
        "decision" in payload
        and payload["decision"] != decision.action
        and (decision.matched or policy is not None)
    ):
        raise _Replay(
            status,
            f"events[{index}]: decision differs from the replayed action",
            expected=decision.action,
            actual=payload["decision"],
        )
    named = payload.get("contract_hash", "")
    if not isinstance(named, str):  # docs/formats.md §4: a contract_hash is a hex string
        raise _Replay(
            "adapter_evaluation_shape_invalid",
            f"events[{index}].payload.contract_hash must be a string",
            actual=named,
        )
    bound = by_contract.get(named)
    if bound is not None and not _same_bytes(
        bound["normalized_policy_inputs"], decision.evaluated_inputs
    ):
        raise _Replay(
            status,
            f"events[{index}]: evaluated_inputs are not the evaluation's normalized inputs",
            expected=bound["normalized_policy_inputs"],
            actual=decision.evaluated_inputs,
        )


def replay_adapter(
    bundle: Mapping[str, Any],
    warnings: list[str] | None = None,
    *,
    validators: ValidatorRegistry = default_registry,
) -> StepResult:
    """Step ``adapter_replay`` over a chain-checked bundle; lifecycle warnings are appended to
    ``warnings``, validators re-run from ``validators`` (the built-ins unless the caller passes
    plug-ins)."""
    proofs, events = bundle.get("proofs") or [], bundle.get("events") or []
    sink: list[str] = [] if warnings is None else warnings
    notes: list[str] = []
    by_contract: dict[str, Mapping[str, Any]] = {}
    evaluations = decisions = 0
    try:
        for item in iter_evaluations(proofs, events):
            ae = _check_evaluation(item, notes, sink, validators)
            by_contract.setdefault(ae["contract_hash"], ae)
            evaluations += 1
        for index, event in enumerate(events):
            payload = event.get("payload") if isinstance(event, dict) else None
            if isinstance(payload, dict) and "policy_snapshot" in payload:
                _check_decision(index, payload, by_contract)
                decisions += 1
    except _Replay as failure:
        error = errors.ContractError(STATUS_CODES[failure.status], failure.message)
        return StepResult.failed(
            STEP,
            error,
            expected=failure.details.get("expected"),
            actual=failure.details.get("actual"),
            replay_status=failure.status,
        )
    if not evaluations and not decisions:
        return StepResult.not_checked(STEP, "legacy_no_adapter: no adapter evaluation or decision")
    details: dict[str, Any] = {"replay_status": "ok", "evaluations": evaluations}
    details["decisions"] = decisions
    if notes:
        details["notes"] = sorted(set(notes))
    return StepResult.ok(STEP, **details)
