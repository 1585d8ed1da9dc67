"""AcceptancePolicy: strict parsing, deterministic first-match evaluation, snapshot replay.

>>> policy = AcceptancePolicy.from_json({
...     "rules": [{"conditions": [{"field": "tests_passed", "op": "==", "value": True}],
...                "action": "auto_accept"}],
...     "default": "require_review"})
>>> decision = policy.evaluate({"tests_passed": True})
>>> decision.action, decision.rule_index
('auto_accept', 0)
>>> policy.evaluate({}).action          # a missing field fails its condition
'require_review'
>>> replay_snapshot(decision.snapshot()).action
'auto_accept'

docs/formats.md §4: the first rule whose conditions all hold wins. Values compare only within one
JSON type (where the spec is silent): ordering needs two numbers (booleans are not numbers) or two
strings, ``==``/``!=`` one type, ``in``/``not_in`` an array; a condition whose types do not fit, or
whose field is missing or ``null``, does not hold. So a rule that fires here fires for the peer.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.contracts.lifecycle import lifecycle_state
from affidavit.verify.json.canonical import py_compact, sha256_hex

__all__ = [
    "ACTIONS",
    "DEFAULT_ACTION",
    "OPERATORS",
    "AcceptancePolicy",
    "Condition",
    "Decision",
    "Lifecycle",
    "Rule",
    "condition_holds",
    "lifecycle_of",
    "replay_snapshot",
    "rule_fires",
]

ACTIONS: Final[tuple[str, ...]] = ("auto_accept", "require_review", "auto_reject")
OPERATORS: Final[tuple[str, ...]] = (">=", "<=", ">", "<", "==", "!=", "in", "not_in")
DEFAULT_ACTION: Final = "require_review"  # docs/formats.md §4; seed 003 "falls through to default"
NO_RULE: Final = -1  # rule_index of a default-action decision

_ORDER: Final = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_RULE_KEYS: Final = frozenset({"conditions", "action"})
_CONDITION_KEYS: Final = frozenset({"field", "op", "value"})
_SNAPSHOT_KEYS: Final = frozenset({"matched_rule", "evaluated_inputs", "rule_index"})


class Condition(NamedTuple):
    """One ``{field, op, value}`` test."""

    field: str
    op: str
    value: Any

    def to_json(self) -> dict[str, Any]:
        """The wire form."""
        return {"field": self.field, "op": self.op, "value": self.value}


class Rule(NamedTuple):
    """Conditions that must all hold, and the action taken when they do."""

    conditions: tuple[Condition, ...]
    action: str

    def to_json(self) -> dict[str, Any]:
        """The wire form (what ``matched_rule`` records)."""
        return {"conditions": [c.to_json() for c in self.conditions], "action": self.action}


class Decision(NamedTuple):
    """The outcome of one evaluation: the action and what justifies it."""

    action: str
    rule_index: int
    matched_rule: dict[str, Any] | None
    evaluated_inputs: dict[str, Any]

    @property
    def matched(self) -> bool:
        """True when a rule fired (False: the default action)."""
        return self.rule_index != NO_RULE

    def snapshot(self) -> dict[str, Any]:
        """``policy_snapshot`` for a decision event (docs/formats.md §4)."""
        return {
            "matched_rule": self.matched_rule,
            "evaluated_inputs": dict(self.evaluated_inputs),
            "rule_index": self.rule_index,
        }


class AcceptancePolicy(NamedTuple):
    """A parsed, validated AcceptancePolicy. Build it with :meth:`from_json`."""

    rules: tuple[Rule, ...]
    default: str = DEFAULT_ACTION

    @classmethod
    def from_json(cls, unverified_policy: Any) -> AcceptancePolicy:
        """Parse a policy document strictly: ``rules``, ``default`` and ``_``-comment keys at the
        top, exactly ``conditions`` and ``action`` in a rule, ``field``, ``op``, ``value`` in a
        condition.

        Raises:
            ``policy.malformed``: wrong structure or types.
            ``policy.unknown_operator``: an ``op`` outside :data:`OPERATORS`.
            ``policy.unknown_action``: an action outside :data:`ACTIONS`.
        """
        if not isinstance(unverified_policy, dict):
            raise _malformed("an AcceptancePolicy must be a JSON object")
        extra = sorted(
            k for k in unverified_policy if k not in ("rules", "default") and not k.startswith("_")
        )
        if extra:
            raise errors.PolicyError(
                "policy.malformed",
                f"unknown policy field(s): {', '.join(extra)}",
                details={"fields": extra},
            )
        raw_rules = unverified_policy.get("rules")
        if not isinstance(raw_rules, list):
            raise _malformed("policy.rules must be an array")
        default = unverified_policy.get("default", DEFAULT_ACTION)
        _check_action(default, "policy.default")
        rules = tuple(_parse_rule(raw, i) for i, raw in enumerate(raw_rules))
        return cls(rules=rules, default=default)

    def to_json(self) -> dict[str, Any]:
        """``{rules, default}``: the object ``policy_hash`` covers."""
        return {"rules": [r.to_json() for r in self.rules], "default": self.default}

    @property
    def policy_hash(self) -> str:
        """``H(py-compact({rules, default}))`` (docs/formats.md §4)."""
        return sha256_hex(py_compact(self.to_json()))

    def evaluate(
        self, inputs: Mapping[str, Any], *, validation_result: str | None = None
    ) -> Decision:
        """Evaluate against ``inputs`` (normalized policy inputs): the first firing rule wins; a
        ``validation_result`` of ``rejected`` or ``unknown_adapter`` gives the default (seed 003).
        """
        evaluated = dict(inputs)
        if validation_result not in ("rejected", "unknown_adapter"):
            for index, rule in enumerate(self.rules):
                if rule_fires(rule, evaluated):
                    return Decision(rule.action, index, rule.to_json(), evaluated)
        return Decision(self.default, NO_RULE, None, evaluated)


def _malformed(message: str) -> errors.PolicyError:
    return errors.PolicyError("policy.malformed", message)


def _snapshot_malformed(message: str) -> errors.PolicyError:
    return errors.PolicyError("policy.snapshot_malformed", message)


def _check_action(action: Any, where: str) -> None:
    if not isinstance(action, str) or action not in ACTIONS:
        raise errors.PolicyError(
            "policy.unknown_action",
            f"{where} {action!r} is not one of {', '.join(ACTIONS)}",
            details={"action": action},
        )


def _parse_rule(raw: Any, index: int) -> Rule:
    where = f"policy.rules[{index}]"
    if not isinstance(raw, dict) or set(raw) != _RULE_KEYS:
        raise _malformed(f"{where} must be an object with exactly conditions and action")
    conditions = raw["conditions"]
    if not isinstance(conditions, list):
        raise _malformed(f"{where}.conditions must be an array")
    _check_action(raw["action"], f"{where}.action")
    parsed = tuple(
        _parse_condition(c, f"{where}.conditions[{j}]") for j, c in enumerate(conditions)
    )
    return Rule(parsed, raw["action"])


def _parse_condition(raw: Any, where: str) -> Condition:
    if not isinstance(raw, dict) or set(raw) != _CONDITION_KEYS:
        raise _malformed(f"{where} must be an object with exactly field, op and value")
    field, op, value = raw["field"], raw["op"], raw["value"]
    if not isinstance(field, str) or not field:
        raise _malformed(f"{where}.field must be a non-empty string")
    if not isinstance(op, str) or op not in OPERATORS:
        raise errors.PolicyError(
            "policy.unknown_operator",
            f"{where}.op {op!r} is not one of {' '.join(OPERATORS)}",
            details={"op": op},
        )
    if op in ("in", "not_in") and not isinstance(value, list):
        raise _malformed(f"{where}: the value of {op!r} must be an array")
    return Condition(field, op, value)


# Evaluation (pure functions; also used on untrusted snapshots, so never raise on odd values)


def _kind(value: Any) -> str:
    """The JSON type of a parsed value; booleans are not numbers."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _json_equal(a: Any, b: Any) -> bool:
    """Equality within JSON types: ``true`` is not ``1``, ``1`` is ``1.0``."""
    ka = _kind(a)
    if ka != _kind(b):
        return False
    if ka == "array":
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "object":
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def condition_holds(op: str, actual: Any, expected: Any) -> bool:
    """Whether ``actual <op> expected`` holds under the typed rules of the module docstring
    (never for a missing or null ``actual`` or an unknown operator)."""
    if actual is None:
        return False
    ka, ke = _kind(actual), _kind(expected)
    if op == "in":
        return ke == "array" and any(_json_equal(actual, item) for item in expected)
    if op == "not_in":
        return ke == "array" and not any(_json_equal(actual, item) for item in expected)
    if ka != ke:
        return False
    if op == "==":
        return _json_equal(actual, expected)
    if op == "!=":
        return not _json_equal(actual, expected)
    if ka not in ("number", "string") or op not in _ORDER:
        return False
    return bool(_ORDER[op](actual, expected))


def rule_fires(rule: Rule, inputs: Mapping[str, Any]) -> bool:
    """True when every condition of ``rule`` holds against ``inputs``."""
    return all(condition_holds(c.op, inputs.get(c.field), c.value) for c in rule.conditions)


def replay_snapshot(unverified_snapshot: Any, policy: AcceptancePolicy | None = None) -> Decision:
    """Replay a decision event's ``policy_snapshot`` and return the decision it proves.

    The matched rule is parsed with the same strict rules as a policy, and it must fire against
    ``evaluated_inputs``. With ``policy`` (when the verifier holds the policy), the whole
    evaluation is re-run and must give the same rule index and rule. A default decision
    (``rule_index`` -1, ``matched_rule`` null) has no action in the snapshot: the returned
    decision carries the policy's default (or ``require_review``).

    Raises:
        ``policy.snapshot_malformed``: not ``{matched_rule, evaluated_inputs, rule_index}`` of the
            right types, or a matched rule that is not a well-formed rule.
        ``policy.replay_mismatch``: the matched rule does not fire, or the full replay differs.
    """
    snap = unverified_snapshot
    if not isinstance(snap, dict) or not snap.keys() >= _SNAPSHOT_KEYS:
        raise _snapshot_malformed(
            "policy_snapshot must hold matched_rule, evaluated_inputs and rule_index"
        )
    inputs, index, matched = snap["evaluated_inputs"], snap["rule_index"], snap["matched_rule"]
    if not isinstance(inputs, dict):
        raise _snapshot_malformed("policy_snapshot.evaluated_inputs must be an object")
    if not isinstance(index, int) or isinstance(index, bool) or index < NO_RULE:
        raise _snapshot_malformed("policy_snapshot.rule_index must be an integer >= -1")
    if (index == NO_RULE) != (matched is None):
        raise _snapshot_malformed(
            "policy_snapshot: matched_rule must be null exactly when rule_index is -1"
        )
    decision = _snapshot_decision(matched, index, inputs, policy)
    if policy is not None:
        full = policy.evaluate(inputs)
        if (full.rule_index, full.matched_rule) != (decision.rule_index, decision.matched_rule):
            raise errors.PolicyError(
                "policy.replay_mismatch",
                f"the policy selects rule {full.rule_index}, the snapshot records rule {index}",
                details={"expected": full.rule_index, "actual": index},
            )
    return decision


def _snapshot_decision(
    matched: Any, index: int, inputs: dict[str, Any], policy: AcceptancePolicy | None
) -> Decision:
    if matched is None:
        return Decision(policy.default if policy else DEFAULT_ACTION, NO_RULE, None, inputs)
    try:
        rule = _parse_rule(matched, index)
    except errors.PolicyError as e:
        raise _snapshot_malformed(f"policy_snapshot.matched_rule: {e.message}") from None
    if not rule_fires(rule, inputs):
        raise errors.PolicyError(
            "policy.replay_mismatch",
            f"matched rule {index} does not fire against the evaluated inputs",
            details={"rule_index": index},
        )
    return Decision(rule.action, index, rule.to_json(), inputs)


# Lifecycle (seed 003, table "Deprecated, superseded, and revoked")


class Lifecycle(NamedTuple):
    """What a contract's lifecycle status means for a new evaluation."""

    revoked: bool
    warnings: tuple[dict[str, Any], ...]

    def warnings_json(self) -> list[dict[str, Any]]:
        """``lifecycle_warnings`` as carried in ``adapter_evaluation``."""
        return [dict(w) for w in self.warnings]


def lifecycle_of(contract: Mapping[str, Any]) -> Lifecycle:
    """What a declaration's lifecycle (seed 003) means for a new evaluation.

    The state is :func:`~affidavit.verify.contracts.lifecycle.lifecycle_state`'s (an unknown
    status is revoked): revoked routes to ``unknown_adapter``; every state but active adds one
    warning ``{kind, replaced_by}`` (null when no replacement is named).
    """
    replaced_by = contract.get("replaced_by")
    pointer = replaced_by if isinstance(replaced_by, str) and replaced_by else None
    kind = lifecycle_state(contract)
    if kind == "active":
        return Lifecycle(revoked=False, warnings=())
    warning = {"kind": kind, "replaced_by": pointer}
    return Lifecycle(revoked=kind == "revoked", warnings=(warning,))
