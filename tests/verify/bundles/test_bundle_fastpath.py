"""The bundle verifier's fast paths (docs/adr/0003) give the plain paths' bytes and verdicts.

Memos are checked against tampered second bundles. (The one-pass marked encoding is gone:
docs/adr/0021-plain-encoders.md; every hash now encodes what it covers.)
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles import adapter_replay, views
from affidavit.verify.bundles import verifier as verifier_module
from affidavit.verify.bundles.hashing import proof_hash
from affidavit.verify.bundles.views import EVENT_FIELDS, parse_events
from affidavit.verify.json.canonical import py_compact
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.verify.bundles.test_bundle_support import (
    OUTPUTS,
    edit,
    failed_step,
    reseal,
    stamp,
    verifier,
)


def test_unencodable_bundle_fails_its_bundle_hash_step() -> None:
    document = {"deal_id": "d", "proofs": [float("nan")], "events": [], "bundle_hash": "0" * 64}
    result = verifier().verify(document)
    assert result.failed_step is not None
    assert (result.failed_step.name, result.failed_step.code) == (
        "bundle_hash",
        "canonical.non_finite",
    )


# -- the events view: its plain-type fast path keeps the exact shape rule -----------------------


class _Text(str):
    """A str subclass: not a plain JSON type, still a string to the shape rule."""


class _Object(dict[str, Any]):
    """A dict subclass: not a plain JSON type, still an object to the shape rule."""


_FIELD_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    ["s", _Text("t"), {}, _Object(), 1, None, [], "MISSING"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(*(_FIELD_VALUES for _ in EVENT_FIELDS), st.booleans()), max_size=3))
def test_events_view_follows_the_shape_rule(drafts: list[tuple[Any, ...]]) -> None:
    raw: list[Any] = []
    for *values, subclass in drafts:
        event = {k: v for k, v in zip(EVENT_FIELDS, values, strict=True) if v != "MISSING"}
        raw.append(_Object(event) if subclass else event)
    parsed = parse_events(raw)
    first_bad = next(
        ((i, p) for i, e in enumerate(raw) if (p := views._shape_problem(e, i)) is not None), None
    )
    if first_bad is None:
        assert parsed.problem is None
    else:
        assert parsed.problem is not None
        assert (len(parsed.items), parsed.problem.message) == first_bad
    for view, event in zip(parsed.items, raw, strict=False):
        assert view.raw is event
        assert tuple(view[: len(EVENT_FIELDS)]) == tuple(event[k] for k in EVENT_FIELDS)


# -- memos ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    return stamp({"accepted": OUTPUTS["accepted"]})["accepted"]


def _decision(document: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in document["events"] if "policy" in e["payload"])


def test_policy_memo_does_not_pass_a_tampered_second_bundle(good: dict[str, Any]) -> None:
    checker = verifier()
    assert checker.verify(good).verified

    def loosen(document: dict[str, Any]) -> None:  # same policy_hash claimed, other policy
        _decision(document)["payload"]["policy"]["rules"][0]["conditions"].pop()

    tampered = reseal(edit(good, loosen), anchor=True)
    result = checker.verify(tampered)
    assert result.failed_step is not None
    assert result.failed_step.code == "adapter.matched_rule_does_not_fire"
    assert "policy_hash does not recompute" in result.failed_step.message
    assert checker.verify(good).verified  # and the memo still serves the honest one


def test_policy_memo_is_keyed_on_exact_types() -> None:
    def policy(value: Any) -> dict[str, Any]:
        condition = {"field": "f", "op": "==", "value": value}
        return {"rules": [{"conditions": [condition], "action": "auto_accept"}]}

    hashes = {adapter_replay._policy_and_hash(policy(v))[1] for v in (True, 1, 1.0, "1")}
    assert len(hashes) == 4
    raw = policy(["a"])
    raw["rules"][0]["conditions"][0]["op"] = "in"
    parsed, first = adapter_replay._policy_and_hash(raw)
    raw["rules"][0]["conditions"][0]["value"].append("b")  # the caller mutates its document
    assert parsed.rules[0].conditions[0].value == ["a"]  # the memo shares nothing with it
    assert adapter_replay._policy_and_hash(raw)[1] != first


def test_contract_memo_does_not_pass_a_tampered_second_bundle(good: dict[str, Any]) -> None:
    checker = verifier()
    assert checker.verify(good).verified

    def widen(document: dict[str, Any]) -> None:  # contract_hash kept, contract changed
        contract = document["proofs"][0]["evidence"]["adapter_evaluation"]["adapter_contract"]
        contract["adapter_version"] = "0.1.1"
        for event in document["events"]:  # the proofs stay bound: only the contract is wrong
            if "proof_hashes" in event["payload"]:
                event["payload"]["proof_hashes"] = [proof_hash(p) for p in document["proofs"]]

    result = checker.verify(reseal(edit(good, widen), anchor=True))
    assert result.failed_step is not None
    assert result.failed_step.code == "adapter.contract_hash_mismatch"


def test_tree_head_memo_serves_only_the_same_fields(good: dict[str, Any]) -> None:
    checker = verifier()
    assert checker.verify(good).verified
    assert checker.verify(copy.deepcopy(good)).verified
    assert len(checker._heads) == 1  # one head: parsed once, then served
    served = checker._tree_head(good["signed_tree_head"])
    assert checker._tree_head(dict(good["signed_tree_head"])) is served  # not parsed again
    size = good["signed_tree_head"]["tree_size"]

    def head(**fields: Any) -> dict[str, Any]:
        return edit(good, lambda d: d["signed_tree_head"].update(fields))

    assert failed_step(checker.verify(head(tree_size=size + 1))) == (
        "sth_signature",
        "treehead.signature_bad",
    )
    assert checker._tree_head(head(tree_size=1)["signed_tree_head"]).head is not None
    for value in (True, 1.0, "1"):  # True == 1 and 1.0 == 1 in Python, not the same JSON
        assert failed_step(checker.verify(head(tree_size=value))) == (
            "sth_signature",
            "treehead.malformed",
        )
    assert checker.verify(good).verified  # and the memo still serves the honest head
    assert failed_step(checker.verify(head(root_hash="0" * 63))) == (
        "sth_signature",
        "treehead.malformed",
    )


def test_tree_head_memo_keys_only_json_fields_and_is_bounded(good: dict[str, Any]) -> None:
    checker = verifier()
    raw = good["signed_tree_head"]
    assert checker._tree_head({**raw, "key_id": None}).head is not None
    assert len(checker._heads) == 1  # a null is a JSON value: memoized
    for odd in ({**raw, 1: "x"}, {**raw, "extra": [1]}, _Object(raw)):
        assert checker._tree_head(odd).head == checker._tree_head(raw).head
    assert len(checker._heads) == 2  # the odd ones were parsed, never kept
    for size in range(1000, 998 + verifier_module._HEAD_MEMO_SIZE):
        assert checker._tree_head({**raw, "tree_size": size}).head is not None
    assert len(checker._heads) == verifier_module._HEAD_MEMO_SIZE
    checker._tree_head({**raw, "tree_size": -1})  # one more: the memo starts again
    assert len(checker._heads) == 1
    assert checker._tree_head({**raw, "tree_size": -1}).error is not None  # kept, same verdict


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"x": True}, {"x": True}, True),
        ({"x": True}, {"x": 1}, False),
        ({"x": 1}, {"x": 1.0}, False),
        ({"x": 0.0}, {"x": -0.0}, False),
        ([1, [2]], [1, [2]], True),
        ({"x": None}, {}, False),
    ],
)
def test_strict_equality_never_claims_more_than_the_bytes(a: Any, b: Any, same: bool) -> None:
    assert adapter_replay._strictly_equal(a, b) is same
    assert adapter_replay._same_bytes(a, b) is (py_compact(a) == py_compact(b))


def test_nan_inputs_still_reach_the_encoder() -> None:
    assert adapter_replay._strictly_equal({"x": float("nan")}, {"x": float("nan")}) is False
