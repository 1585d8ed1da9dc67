"""What step ``swarm_decision`` (profile swarm-strict) tells its reader (issue 36).

verify/results.py: a failed step carries a code and a message, a step not checked says why; the
module's contract (verify/bundles/swarm_decision.py): ``details.records[*].errors`` lists each
problem found. Here every listed problem is a line of text (never null), a record's problems are
told apart, and the step's message counts them and names the first. Each case is a real stamped
swarm bundle with one defective decision context (test_swarm_decision_refusals.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.verify.bundles.swarm_decision import check_swarm_decision

from tests.verify.bundles.test_bundle_swarm import _insert, _stamp, _strict
from tests.verify.bundles.test_swarm_decision_refusals import (
    _AT,
    DEFECTS,
    Build,
    _authorized,
    _context,
    _payload,
    _with,
)


@pytest.fixture(scope="module")
def swarm() -> dict[str, Any]:
    return _stamp()


@pytest.mark.parametrize(("name", "build", "count"), DEFECTS, ids=[c[0] for c in DEFECTS])
def test_each_problem_is_listed_as_text_and_the_message_names_the_first(
    swarm: dict[str, Any], name: str, build: Build, count: int
) -> None:
    bundle = _authorized(swarm, build(swarm))
    step = _strict().verify(bundle).step("swarm_decision")
    assert step is not None
    (record,) = step.details["records"]
    problems = record["errors"]
    assert (record["valid"], len(problems)) == (False, count), name
    assert all(isinstance(p, str) and p for p in problems), (name, problems)
    assert len(set(problems)) == len(problems), (name, problems)  # each problem told apart
    assert step.message.startswith(f"{count} problem"), (name, step.message)
    assert record["event_id"] in step.message, (name, step.message)
    assert problems[0] in step.message, (name, step.message)


def test_two_defective_records_are_counted_together(swarm: dict[str, Any]) -> None:
    off = _payload(_context(enforcement="off"))  # one problem
    version = _payload(_context(context_version="swarm_decision/v2", enforcement="yes"))  # two
    step = _strict().verify(_authorized(swarm, off, version)).step("swarm_decision")
    assert step is not None
    assert [len(r["errors"]) for r in step.details["records"]] == [1, 2]
    assert step.message.startswith("3 problem"), step.message


def test_an_unsupported_context_version_is_named(swarm: dict[str, Any]) -> None:
    build = _with(_context(context_version="swarm_decision/v9"))
    step = _strict().verify(_authorized(swarm, build(swarm))).step("swarm_decision")
    assert step is not None
    (problem,) = step.details["records"][0]["errors"]
    assert "'swarm_decision/v9'" in problem, problem


def test_no_recorded_decision_says_why_it_was_not_checked(swarm: dict[str, Any]) -> None:
    historical = {"decision": "authorized"}  # an authorization without a swarm_decision
    for bundle in (swarm, _insert(swarm, _AT, "CONSEQUENCE_AUTHORIZED", historical)):
        step = _strict().verify(bundle).step("swarm_decision")
        assert step is not None
        assert step.status == "not_checked"
        assert "swarm_decision" in step.message, step.message


def test_a_designation_of_objects_compares_by_value_not_key_order(swarm: dict[str, Any]) -> None:
    # The designation is compared as a set of JSON values (docs: "designation must equal the
    # bundle's signed one"): objects listed with their keys in another order are the same value.
    # Called on the step directly: the swarm policy itself designates event types (text).
    stated = [{"c": 1, "a": 2, "b": 3}, "PROOF_READY"]
    signed = ["PROOF_READY", {"b": 3, "c": 1, "a": 2}]
    bundle = _authorized(swarm, _payload(_context(required_signed_event_types=stated)))
    assert check_swarm_decision(bundle, signed).status == "ok"
    other = ["PROOF_READY", {"b": 3, "c": 1, "a": 4}]
    step = check_swarm_decision(bundle, other)
    assert (step.status, step.code) == ("failed", "bundle.swarm_decision_invalid")
