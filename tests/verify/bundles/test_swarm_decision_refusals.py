"""Every refusal of step ``swarm_decision`` (profile swarm-strict), one defect at a time.

Issue 36 (mutation testing): the red team found the refusals of ``verify/bundles/swarm_decision.py``
(shape, coherence, correlation) never reached by a test. Each case here is a real stamped
swarm bundle with one ``CONSEQUENCE_AUTHORIZED`` event inserted (chain, actor signatures,
``bundle_hash`` and anchor redone, so only the recorded decision context is wrong) whose context
has exactly one defect. The step must fail with ``bundle.swarm_decision_invalid`` and list as many
problems in ``details.records[*].errors`` as aigentsy-verify 1.6.3 (the oracle) lists for the same
record; coherent contexts must pass, in both verifiers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.verify.bundles.swarm_decision import check_swarm_decision
from affidavit.verify.json.canonical import py_compact, sha256_hex

from tests.verify.bundles.test_bundle_swarm import _insert, _stamp, _strict

_ABSENT: Any = object()  # a key left out of the context
_IDENTITY = "c" * 64
_AT = 3  # after DEAL_CREATED, SWARM_POLICY_SET, PROOF_READY


@pytest.fixture(scope="module")
def swarm() -> dict[str, Any]:
    return _stamp()


def _policy_event(bundle: dict[str, Any]) -> dict[str, Any]:
    (event,) = [e for e in bundle["events"] if e["event_type"] == "SWARM_POLICY_SET"]
    return event


def _context(**changes: Any) -> dict[str, Any]:
    """A coherent ``swarm_decision/v1`` context with ``changes`` (``_ABSENT`` drops a key)."""
    context: dict[str, Any] = {
        "context_version": "swarm_decision/v1",
        "enforcement": "on",
        "evaluated": True,
        "applicable": True,
        "satisfied": True,
        "reason": "all designated events signed",
        "checks_passed": ["coverage"],
        "checks_failed": [],
        "identity_hash": _IDENTITY,
    }
    context.update(changes)
    return {k: v for k, v in context.items() if v is not _ABSENT}


def _payload(context: Any, **changes: Any) -> dict[str, Any]:
    """An authorization payload recording ``context`` with its digest (``changes`` override)."""
    digest = (
        sha256_hex(
            py_compact({k: v for k, v in context.items() if k not in ("recorded_at", "event_id")})
        )
        if isinstance(context, dict)
        else sha256_hex(py_compact({}))
    )
    payload: dict[str, Any] = {
        "identity_hash": _IDENTITY,
        "decision": "authorized",
        "swarm_decision": context,
        "swarm_decision_digest": digest,
    }
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not _ABSENT}


def _authorized(bundle: dict[str, Any], *payloads: dict[str, Any]) -> dict[str, Any]:
    """``bundle`` with one CONSEQUENCE_AUTHORIZED event per payload, before the gate decision (an
    authorization after the anchored event would be one the log never saw dispatched)."""
    out = bundle
    for number, payload in enumerate(payloads):
        out = _insert(out, _AT + number, "CONSEQUENCE_AUTHORIZED", payload)
    return out


def _peer_step(bundle: dict[str, Any]) -> tuple[bool, list[int]]:
    """The oracle's verdict and the number of errors it lists per decision record."""
    from aigentsy_verify.bundle import verify_bundle_swarm_strict

    from tests.verify.bundles.test_bundle_swarm import LOG_KEY

    result = verify_bundle_swarm_strict(copy.deepcopy(bundle), LOG_KEY.public_key.b64)
    records = result["steps"]["swarm_decision"]["records"]
    return bool(result["verified"]), [len(r["errors"]) for r in records]


def _ours(bundle: dict[str, Any]) -> tuple[str, str | None, list[int]]:
    result = _strict().verify(bundle)
    step = result.step("swarm_decision")
    assert step is not None, result.to_json()
    failed = result.failed_step
    assert failed is None or failed.name == "swarm_decision", result.to_json()
    counts = [len(r["errors"]) for r in step.details.get("records", [])]
    return result.verdict, step.code, counts


# (name, the context or a function of the stamped bundle giving the payload, errors listed)
Build = Callable[[dict[str, Any]], dict[str, Any]]


def _with(context: Any, **payload: Any) -> Build:
    return lambda bundle: _payload(context, **payload)


def _naming(**changes: Any) -> Build:
    """A context naming the bundle's own SWARM_POLICY_SET event, with ``changes``."""

    def build(bundle: dict[str, Any]) -> dict[str, Any]:
        event = _policy_event(bundle)
        policy = event["payload"]["swarm_policy"]
        context = _context(
            policy_event_id=event["event_id"],
            policy_version=policy["policy_version"],
            policy_hash=sha256_hex(py_compact(policy)),
            required_signed_event_types=list(reversed(policy["required_signed_event_types"])),
        )
        context.update(changes)
        return _payload({k: v for k, v in context.items() if v is not _ABSENT})

    return build


COHERENT: list[tuple[str, Build]] = [
    ("applicable and satisfied", _with(_context())),
    ("applicable, not satisfied", _with(_context(satisfied=False))),
    ("evaluated, not applicable", _with(_context(applicable=False, satisfied=None))),
    ("enforcement off, not evaluated",
     _with(_context(enforcement="off", evaluated=False, applicable=None, satisfied=None))),
    ("enforcement on, not evaluated",
     _with(_context(evaluated=False, applicable=None, satisfied=None))),
    ("recorded_at and event_id are outside the digest",
     lambda b: {**_payload(_context()), "swarm_decision": _context(
         recorded_at="2026-03-01T12:00:00Z", event_id="evt-x")}),
    ("correlations stated on one side only",
     _with(_context(identity_hash=_ABSENT, acceptance_id="acc-1", hash_version="v1"),
           acceptance_id=_ABSENT)),
    ("correlations equal on both sides",
     _with(_context(acceptance_id="acc-1", hash_version="v1"), acceptance_id="acc-1",
           hash_version="v1")),
    ("the signed designation, in another order",
     _with(_context(required_signed_event_types=["OUTCOME_RECORDED", "PROOF_READY"]))),
    ("a named designation that matches", _naming()),
    ("a named designation without a version or hash",
     _naming(policy_version=_ABSENT, policy_hash=_ABSENT)),
    ("a named designation, the context stating none", _naming(required_signed_event_types=_ABSENT)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "build"), COHERENT, ids=[c[0] for c in COHERENT])
def test_a_coherent_decision_context_passes(swarm: dict[str, Any], name: str, build: Build) -> None:
    bundle = _authorized(swarm, build(swarm))
    assert _ours(bundle) == ("verified", None, [0]), name
    assert _peer_step(bundle) == (True, [0]), name


DEFECTS: list[tuple[str, Build, int]] = [
    # shape
    ("context a string", _with("on"), 4),
    ("context a list", _with([]), 4),
    ("unknown context_version", _with(_context(context_version="swarm_decision/v2")), 1),
    ("no context_version", _with(_context(context_version=_ABSENT)), 1),
    ("enforcement neither on nor off", _with(_context(enforcement="yes")), 1),
    ("evaluated not a boolean", _with(_context(evaluated="true")), 1),
    ("applicable missing", _with(_context(applicable=_ABSENT)), 2),  # and evaluated: null
    ("satisfied missing", _with(_context(satisfied=_ABSENT)), 2),  # and applicable: null
    ("applicable not a boolean", _with(_context(applicable="yes")), 1),
    ("satisfied not a boolean", _with(_context(satisfied=1)), 1),
    ("reason missing", _with(_context(reason=_ABSENT)), 1),
    ("checks_passed missing", _with(_context(checks_passed=_ABSENT)), 1),
    ("checks_failed missing", _with(_context(checks_failed=_ABSENT)), 1),
    ("checks_passed not an array", _with(_context(checks_passed="coverage")), 1),
    ("checks_failed not an array", _with(_context(checks_failed={})), 1),
    # coherence
    ("enforcement off but evaluated", _with(_context(enforcement="off")), 1),
    ("not evaluated, applicable stated",
     _with(_context(evaluated=False, applicable=False, satisfied=None)), 1),
    ("not evaluated, satisfied stated",
     _with(_context(evaluated=False, applicable=None, satisfied=False)), 1),
    ("evaluated, applicable null", _with(_context(applicable=None, satisfied=None)), 1),
    ("not applicable, satisfied stated", _with(_context(applicable=False, satisfied=False)), 1),
    ("applicable, satisfied null", _with(_context(satisfied=None)), 1),
    # digest
    ("digest missing", _with(_context(), swarm_decision_digest=_ABSENT), 1),
    ("digest empty", _with(_context(), swarm_decision_digest=""), 1),
    ("digest of another context", _with(_context(),
     swarm_decision_digest=sha256_hex(py_compact(_context(reason="other")))), 1),
    ("recorded_at changed after the digest", lambda b: {**_payload(_context()),
     "swarm_decision": _context(reason="changed", recorded_at="2026-03-01T12:00:00Z")}, 1),
    # correlation with its own event
    ("identity_hash of another event", _with(_context(), identity_hash="d" * 64), 1),
    ("acceptance_id of another event", _with(_context(acceptance_id="acc-1"),
     acceptance_id="acc-2"), 1),
    ("hash_version of another event", _with(_context(hash_version="v1"), hash_version="v2"), 1),
    # correlation with the designation
    ("policy_hash naming no policy", _with(_context(policy_hash="d" * 64)), 1),
    ("signed designation differs", _with(_context(required_signed_event_types=["PROOF_READY"])), 1),
    ("named event absent", _naming(policy_event_id="evt-none"), 1),
    ("named event without a swarm_policy",
     lambda b: _naming(policy_event_id=b["events"][0]["event_id"])(b), 1),
    ("named designation differs", _naming(required_signed_event_types=["PROOF_READY"]), 1),
    ("named policy_version differs", _naming(policy_version="swarm_enforcement/v0"), 1),
    ("named policy_hash differs", _naming(policy_hash="d" * 64), 1),
]  # fmt: skip


@pytest.mark.parametrize(("name", "build", "count"), DEFECTS, ids=[c[0] for c in DEFECTS])
def test_one_defect_fails_the_step_with_its_problems_listed(
    swarm: dict[str, Any], name: str, build: Build, count: int
) -> None:
    bundle = _authorized(swarm, build(swarm))
    assert _ours(bundle) == ("failed", "bundle.swarm_decision_invalid", [count]), name
    assert _peer_step(bundle) == (False, [count]), name


@pytest.mark.parametrize("bad_first", [True, False])
def test_each_record_is_judged_and_one_bad_record_fails_the_step(
    swarm: dict[str, Any], bad_first: bool
) -> None:
    good, bad = _payload(_context()), _payload(_context(enforcement="off"))
    bundle = _authorized(swarm, *((bad, good) if bad_first else (good, bad)))
    expected = [1, 0] if bad_first else [0, 1]
    assert _ours(bundle) == ("failed", "bundle.swarm_decision_invalid", expected)
    assert _peer_step(bundle) == (False, expected)


def test_records_name_their_event_and_decision(swarm: dict[str, Any]) -> None:
    historical = {"identity_hash": _IDENTITY, "decision": "authorized"}  # no swarm_decision
    bundle = _authorized(swarm, historical, _payload(_context()), historical)
    step = _strict().verify(bundle).step("swarm_decision")
    assert step is not None
    index = _AT + 1
    assert step.status == "ok"
    assert step.details["records"] == [
        {
            "event_id": bundle["events"][index]["event_id"],
            "event_index": index,
            "decision": "authorized",
            "valid": True,
            "errors": [],
        }
    ]


def test_a_swarm_decision_outside_an_authorization_is_not_checked(swarm: dict[str, Any]) -> None:
    bundle = _insert(swarm, _AT, "CONSEQUENCE_RECORDED", _payload("on"))
    result = _strict().verify(bundle)
    step = result.step("swarm_decision")
    assert step is not None
    assert (result.verdict, step.status) == ("verified", "not_checked")


def test_a_policy_event_id_naming_two_events_identifies_none(swarm: dict[str, Any]) -> None:
    # The event chain refuses a repeated event_id (event.duplicate_id) before this step runs, so
    # this is the step's own rule, called directly on chain-shaped events.
    bundle = _authorized(swarm, _naming()(swarm))
    twice = copy.deepcopy(bundle)
    twice["events"].insert(2, copy.deepcopy(_policy_event(swarm)))
    required = _policy_event(swarm)["payload"]["swarm_policy"]["required_signed_event_types"]
    assert check_swarm_decision(bundle, required).status == "ok"
    step = check_swarm_decision(twice, required)
    assert (step.status, step.code) == ("failed", "bundle.swarm_decision_invalid")
    assert [len(r["errors"]) for r in step.details["records"]] == [1]
