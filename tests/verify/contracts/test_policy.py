"""AcceptancePolicy (docs/formats.md §4): strict parsing, first match, typed ops, replay,
lifecycle."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.contracts.policy import (
    DEFAULT_ACTION,
    AcceptancePolicy,
    condition_holds,
    lifecycle_of,
    replay_snapshot,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

POLICY: dict[str, Any] = {
    "rules": [
        {
            "conditions": [
                {"field": "tests_passed", "op": "==", "value": True},
                {"field": "coverage_met", "op": "==", "value": True},
            ],
            "action": "auto_accept",
        },
        {
            "conditions": [{"field": "tests_passed", "op": "==", "value": False}],
            "action": "auto_reject",
        },
    ],
    "default": "require_review",
}

# The peer's programmable-mandate vectors use other action words; the engine is the same.
_PEER_ACTIONS = {
    "auto_approve": "auto_accept",
    "require_human": "require_review",
    "reject": "auto_reject",
}


def test_first_match_wins_and_default() -> None:
    policy = AcceptancePolicy.from_json(POLICY)
    accept = policy.evaluate({"tests_passed": True, "coverage_met": True})
    assert (accept.action, accept.rule_index) == ("auto_accept", 0)
    assert accept.matched_rule == POLICY["rules"][0]
    reject = policy.evaluate({"tests_passed": False, "coverage_met": True})
    assert (reject.action, reject.rule_index) == ("auto_reject", 1)
    review = policy.evaluate({"tests_passed": True, "coverage_met": False})
    assert (review.action, review.rule_index, review.matched_rule) == ("require_review", -1, None)


def test_policy_hash_is_py_compact_of_rules_and_default() -> None:
    # Independent recomputation with the standard library (docs/formats.md §4).
    expected = hashlib.sha256(
        json.dumps(
            {"rules": POLICY["rules"], "default": POLICY["default"]},
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
    ).hexdigest()
    assert AcceptancePolicy.from_json(POLICY).policy_hash == expected
    other = dict(POLICY, default="auto_reject")
    assert AcceptancePolicy.from_json(other).policy_hash != expected


def test_default_defaults_to_require_review() -> None:
    policy = AcceptancePolicy.from_json({"rules": []})
    assert policy.default == DEFAULT_ACTION == "require_review"
    assert policy.evaluate({"x": 1}).action == "require_review"


def test_peer_mandate_vectors(peer_vectors: Path) -> None:
    data = json.loads((peer_vectors / "aigentsy" / "conformance_vectors.json").read_text())
    checked = 0
    for vector in data["programmable_mandate_vectors"]["vectors"]:
        if "max_amount_per_deal_usd" in vector:
            continue  # hard caps are not part of AcceptancePolicy
        document = {
            "rules": [
                {"conditions": r["conditions"], "action": _PEER_ACTIONS[r["action"]]}
                for r in vector["rules"]
            ],
            "default": _PEER_ACTIONS[vector["default_action"]],
        }
        decision = AcceptancePolicy.from_json(document).evaluate(vector["context"])
        assert decision.action == _PEER_ACTIONS[vector["expected_action"]], vector["name"]
        if "expected_rule_index" in vector:
            assert decision.rule_index == vector["expected_rule_index"]
        if vector.get("expected_matched") is False:
            assert not decision.matched
        checked += 1
    assert checked == 5


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ([], "policy.malformed"),
        ({"rules": {}}, "policy.malformed"),
        ({"rules": [], "extra": 1}, "policy.malformed"),
        ({"rules": [], "default": "approve"}, "policy.unknown_action"),
        ({"rules": [{"conditions": [], "action": "yes"}]}, "policy.unknown_action"),
        ({"rules": [{"conditions": [], "action": "auto_accept", "x": 1}]}, "policy.malformed"),
        ({"rules": [{"conditions": {}, "action": "auto_accept"}]}, "policy.malformed"),
        (
            {
                "rules": [
                    {
                        "conditions": [{"field": "a", "op": "=~", "value": 1}],
                        "action": "auto_accept",
                    }
                ]
            },
            "policy.unknown_operator",
        ),
        (
            {
                "rules": [
                    {
                        "conditions": [{"field": "a", "op": "in", "value": 1}],
                        "action": "auto_accept",
                    }
                ]
            },
            "policy.malformed",
        ),
        (
            {
                "rules": [
                    {
                        "conditions": [{"field": "a", "op": "not_in", "value": "a"}],
                        "action": "auto_accept",
                    }
                ]
            },
            "policy.malformed",
        ),
        (
            {
                "rules": [
                    {"conditions": [{"field": "", "op": "==", "value": 1}], "action": "auto_accept"}
                ]
            },
            "policy.malformed",
        ),
        (
            {"rules": [{"conditions": [{"field": "a", "op": "=="}], "action": "auto_accept"}]},
            "policy.malformed",
        ),
    ],
)
def test_strict_parse(document: Any, code: str) -> None:
    with pytest.raises(errors.PolicyError) as caught:
        AcceptancePolicy.from_json(document)
    assert caught.value.code == code
    assert caught.value.exit_code == 2


def test_comment_keys_allowed_and_outside_hash() -> None:
    with_note = dict(POLICY, _note="reviewed by QA")
    assert AcceptancePolicy.from_json(with_note).policy_hash == (
        AcceptancePolicy.from_json(POLICY).policy_hash
    )


@pytest.mark.parametrize(
    ("op", "actual", "expected", "holds"),
    [
        (">=", 2, 2, True),
        (">=", 1.5, 2, False),
        ("<", 1, 2.5, True),
        (">", "b", "a", True),
        ("==", 1, 1.0, True),
        ("==", True, 1, False),  # booleans are not numbers
        ("!=", True, 1, False),  # incomparable types never hold, whatever the operator
        ("!=", 1, 2, True),
        (">=", True, False, False),  # no ordering on booleans
        (">", "2", 1, False),
        ("in", "saas", ["saas", "web"], True),
        ("in", True, [1], False),
        ("in", 1, [1.0], True),
        ("not_in", "saas", ["gambling"], True),  # the peer's mandate vectors list not_in
        ("not_in", "saas", ["saas", "web"], False),
        ("not_in", True, [1], True),  # typed: true is not the number 1
        ("not_in", None, ["x"], False),  # a missing field never holds
        ("not_in", "x", "x", False),  # needs an array
        ("==", [1, {"a": True}], [1, {"a": True}], True),
        ("==", {"a": 1}, {"a": True}, False),
        ("==", None, None, False),  # null counts as missing
        ("~", 1, 1, False),
    ],
)
def test_condition_semantics(op: str, actual: Any, expected: Any, holds: bool) -> None:
    assert condition_holds(op, actual, expected) is holds


_scalars = st.one_of(
    st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False), st.sampled_from("abc")
)


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from([">=", "<=", ">", "<", "==", "!="]), a=_scalars, b=_scalars)
def test_firing_implies_python_agrees(op: str, a: Any, b: Any) -> None:
    """Whenever a condition holds here, it also holds under Python's (the peer's) comparison."""
    if condition_holds(op, a, b):
        python = {
            ">=": a >= b,
            "<=": a <= b,
            ">": a > b,
            "<": a < b,
            "==": a == b,
            "!=": a != b,
        }[op]
        assert python


def test_replay_round_trip_and_mismatch() -> None:
    policy = AcceptancePolicy.from_json(POLICY)
    decision = policy.evaluate({"tests_passed": True, "coverage_met": True})
    assert replay_snapshot(decision.snapshot(), policy) == decision
    assert replay_snapshot(decision.snapshot()).action == "auto_accept"
    default = policy.evaluate({"tests_passed": True, "coverage_met": False})
    assert replay_snapshot(default.snapshot(), policy).action == "require_review"

    forged = decision.snapshot()
    forged["evaluated_inputs"]["coverage_met"] = False
    with raises_code("policy.replay_mismatch"):
        replay_snapshot(forged)

    # A default decision whose inputs would have fired rule 0: only the full replay catches it.
    hidden = default.snapshot()
    hidden["evaluated_inputs"]["coverage_met"] = True
    assert replay_snapshot(hidden).rule_index == -1
    with raises_code("policy.replay_mismatch"):
        replay_snapshot(hidden, policy)


@pytest.mark.parametrize(
    "snapshot",
    [
        None,
        {"matched_rule": None, "evaluated_inputs": {}},
        {"matched_rule": None, "evaluated_inputs": [], "rule_index": -1},
        {"matched_rule": None, "evaluated_inputs": {}, "rule_index": 0},
        {
            "matched_rule": {"conditions": [], "action": "auto_accept"},
            "evaluated_inputs": {},
            "rule_index": -1,
        },
        {
            "matched_rule": {"conditions": [], "action": "ok"},
            "evaluated_inputs": {},
            "rule_index": 0,
        },
        {"matched_rule": None, "evaluated_inputs": {}, "rule_index": True},
        {"matched_rule": None, "evaluated_inputs": {}, "rule_index": -2},
    ],
)
def test_replay_malformed(snapshot: Any) -> None:
    with raises_code("policy.snapshot_malformed"):
        replay_snapshot(snapshot)


def test_rejected_and_unknown_adapter_fall_through_to_default() -> None:
    catch_all = AcceptancePolicy.from_json(
        {"rules": [{"conditions": [], "action": "auto_accept"}], "default": "auto_reject"}
    )
    assert catch_all.evaluate({}).action == "auto_accept"
    assert catch_all.evaluate({}, validation_result="unknown_adapter").action == "auto_reject"
    assert catch_all.evaluate({}, validation_result="rejected").rule_index == -1


@pytest.mark.parametrize(
    ("contract", "revoked", "warnings"),
    [
        ({}, False, []),
        ({"status": "active"}, False, []),
        (
            {"status": "active", "replaced_by": "a.b@1.0.0"},
            False,
            [{"kind": "superseded", "replaced_by": "a.b@1.0.0"}],
        ),
        ({"status": "deprecated"}, False, [{"kind": "deprecated", "replaced_by": None}]),
        (
            {"status": "revoked", "replaced_by": "a.b@2.0.0"},
            True,
            [{"kind": "revoked", "replaced_by": "a.b@2.0.0"}],
        ),
        # One rule with pins check (verify.lifecycle): an unknown status is revoked, fail closed.
        ({"status": "retired"}, True, [{"kind": "revoked", "replaced_by": None}]),
        ({"status": 7}, True, [{"kind": "revoked", "replaced_by": None}]),
    ],
)
def test_lifecycle(contract: dict[str, Any], revoked: bool, warnings: list[Any]) -> None:
    lifecycle = lifecycle_of(contract)
    assert lifecycle.revoked is revoked
    assert lifecycle.warnings_json() == warnings
