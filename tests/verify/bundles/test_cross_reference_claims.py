"""Step ``cross_reference`` (verify/bundles/binding.py): what the signed log covers (issue 36).

docs/formats.md §4 cross-reference, ADR 0008: ``merkle_inclusion.{merkle_root, tree_size,
log_id}`` must equal the signed tree head's (``bundle.root_not_signed``, ``expected`` the head's,
``actual`` the claim; an absent ``log_id`` claims no log), the proven leaf must recompute from
exactly one finality event, the last one, and consequence identities must be authorized ones
(the first of ``consequence_identity_hash``, ``identity_hash`` present and non-empty is the
reference). Each case is a real stamped bundle with one change; the tree heads are signed by the
TEST-ONLY log key the verifier trusts, so only the claim under test is wrong.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.binding import bind_leaf
from affidavit.verify.bundles.events import FINALITY_EVENT_TYPES
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.inclusion import read_inclusion
from affidavit.verify.bundles.views import Event
from affidavit.verify.crypto.treehead import sth_message

from tests.verify.bundles.test_bundle_binding import _authorize, _insert
from tests.verify.bundles.test_bundle_support import LOG_KEY, OUTPUTS, reseal, stamp, verifier

AUTHORIZED, OTHER = "a" * 64, "b" * 64


@pytest.fixture(scope="module")
def four() -> dict[str, Any]:
    return stamp(OUTPUTS)["accepted"]  # leaf 0 of a tree of 4


def _head(bundle: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``bundle`` with its tree head changed and signed again by the trusted log key."""
    out = copy.deepcopy(bundle)
    head = out["signed_tree_head"]
    head.update(changes)
    message = sth_message(head["log_id"], head["tree_size"], head["root_hash"], head["timestamp"])
    head["signature"] = LOG_KEY.sign_b64(message)
    out["bundle_hash"] = bundle_hash(out)
    return out


def _claim(bundle: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(bundle)
    for name, value in changes.items():
        if value is _DROP:
            del out["merkle_inclusion"][name]
        else:
            out["merkle_inclusion"][name] = value
    out["bundle_hash"] = bundle_hash(out)
    return out


_DROP: Any = object()


def _cross(bundle: dict[str, Any]) -> Any:
    result = verifier().verify(bundle)
    step = result.step("cross_reference")
    assert step is not None, result.to_json()
    return result, step


def test_the_logged_bundle_is_bound_to_its_finality_event(four: dict[str, Any]) -> None:
    result, step = _cross(four)
    last = four["events"][-1]
    assert (result.verdict, step.status) == ("verified", "ok")
    assert step.details == {
        "leaf_binding": "bound",
        "consequence_binding": "no_consequence_authorization_claimed",
        "covered_events": len(four["events"]),
        "events_after_finality": 0,
        "event_id": last["event_id"],
        "event_type": last["event_type"],
    }


def test_a_head_of_another_root_is_not_the_claimed_one(four: dict[str, Any]) -> None:
    other = "cd" * 32
    result, step = _cross(_head(four, root_hash=other))
    assert (result.verdict, step.code) == ("failed", "bundle.root_not_signed")
    assert (step.expected, step.actual) == (other, four["merkle_inclusion"]["merkle_root"])
    assert "merkle_root" in step.message
    assert step.details["leaf_binding"] == "bound"  # what was found is still reported


def test_a_head_of_the_same_root_and_another_size_is_not_the_claimed_one(
    four: dict[str, Any],
) -> None:
    result, step = _cross(_head(four, tree_size=5))
    assert (result.verdict, step.code) == ("failed", "bundle.root_not_signed")
    assert (step.expected, step.actual) == (5, 4)
    assert "tree_size" in step.message


@pytest.mark.parametrize("log_id", ["another-log", None, ""])
def test_a_claimed_log_id_must_be_the_heads(four: dict[str, Any], log_id: Any) -> None:
    result, step = _cross(_claim(four, log_id=log_id))
    assert (result.verdict, step.code) == ("failed", "bundle.root_not_signed")
    assert (step.expected, step.actual) == (four["signed_tree_head"]["log_id"], log_id)
    assert "log_id" in step.message
    assert step.details["consequence_binding"] == "no_consequence_authorization_claimed"


def test_an_absent_log_id_claims_no_log(four: dict[str, Any]) -> None:
    result, step = _cross(_claim(four, log_id=_DROP))
    assert (result.verdict, step.status) == ("verified", "ok")


def test_a_head_under_another_key_leaves_the_root_unchecked(four: dict[str, Any]) -> None:
    bundle = copy.deepcopy(four)
    bundle["signed_tree_head"]["signature"] = LOG_KEY.sign_b64(b"something else")
    result, step = _cross(bundle)
    assert result.failed_step is not None
    assert (result.verdict, result.failed_step.name) == ("failed", "sth_signature")
    assert step.status == "not_checked"
    assert step.details["leaf_binding"] == "bound"
    assert step.message


def test_a_leaf_claimed_in_another_form_binds_no_event(four: dict[str, Any]) -> None:
    bundle = _claim(four, leaf_hash=four["merkle_inclusion"]["leaf_hash"].upper())
    result, step = _cross(bundle)
    assert step.details["leaf_binding"] == "anchor_unbound"
    assert result.verdict == "failed"


def test_the_leaf_of_a_non_finality_event_is_unbound(four: dict[str, Any]) -> None:
    # The log proves a leaf recomputed from the first event, the only one left: not finality.
    bundle = reseal({**four, "events": four["events"][:1]}, anchor=True)
    result, step = _cross(bundle)
    assert bundle["events"][-1]["event_type"] not in FINALITY_EVENT_TYPES
    assert (result.verdict, step.code) == ("failed", "bundle.leaf_unbound")
    assert step.details["leaf_binding"] == "bound"
    assert bundle["events"][-1]["event_type"] in step.message
    assert step.actual == bundle["merkle_inclusion"]["leaf_hash"]  # the leaf it recomputes from


def test_an_event_after_the_logged_one_is_named(four: dict[str, Any]) -> None:
    from tests.verify.bundles.test_bundle_binding import _append

    logged = four["events"][-1]
    result, step = _cross(_append(four, "DEAL_NOTE", {}))
    assert (result.verdict, step.code) == ("failed", "bundle.events_after_finality")
    assert step.message.startswith("1 event(s)"), step.message
    assert repr(logged["event_id"]) in step.message


def _events(bundle: dict[str, Any]) -> list[Event]:
    from affidavit.verify.bundles.views import parse_events

    return list(parse_events(bundle["events"]).items)


def test_a_leaf_two_events_recompute_is_ambiguous(four: dict[str, Any]) -> None:
    # The event chain refuses a repeated event before this step runs: the rule, called directly.
    events = _events(four)
    inclusion = read_inclusion(four["merkle_inclusion"])
    assert bind_leaf(events, inclusion) == ("bound", len(events) - 1)
    assert bind_leaf([*events, events[-1]], inclusion) == ("anchor_ambiguous", None)
    assert bind_leaf(events[:-1], inclusion) == ("anchor_unbound", None)
    # and the step refuses such a bundle, whatever else holds
    from affidavit.verify.bundles.binding import cross_reference
    from affidavit.verify.bundles.inclusion import inclusion_step
    from affidavit.verify.bundles.views import BundleView, TreeHead, parse_events
    from affidavit.verify.crypto.treehead import parse_sth

    twice = [*four["events"], four["events"][-1]]
    view = BundleView(four, four["deal_id"], parse_events(twice), inclusion, TreeHead())
    sth = parse_sth(four["signed_tree_head"])
    step = cross_reference(view, inclusion_step(inclusion), sth)
    assert (step.name, step.status, step.code) == (
        "cross_reference",
        "failed",
        "bundle.leaf_ambiguous",
    )
    assert step.details["leaf_binding"] == "anchor_ambiguous"
    assert step.message


@pytest.mark.parametrize(
    ("reference", "status"),
    [
        ({"consequence_identity_hash": AUTHORIZED, "identity_hash": OTHER}, "consequence_bound"),
        ({"consequence_identity_hash": OTHER, "identity_hash": AUTHORIZED},
         "consequence_identity_mismatch"),
        ({"consequence_identity_hash": "", "identity_hash": OTHER},
         "consequence_identity_mismatch"),
        ({"consequence_identity_hash": 7, "identity_hash": AUTHORIZED}, "consequence_bound"),
        ({"identity_hash": ""}, "consequence_authorized_not_dispatched"),
        ({"identity_hash": None}, "consequence_authorized_not_dispatched"),
    ],
)  # fmt: skip
def test_the_first_stated_consequence_identity_is_the_reference(
    four: dict[str, Any], reference: dict[str, Any], status: str
) -> None:
    bundle = _insert(four, 3, "CONSEQUENCE_AUTHORIZED", _authorize(AUTHORIZED))
    bundle = _insert(bundle, 4, "CONSEQUENCE_DISPATCHED", reference)
    result, step = _cross(bundle)
    assert step.details["consequence_binding"] == status
    if status == "consequence_identity_mismatch":
        assert (result.verdict, step.code) == ("failed", "bundle.consequence_identity_mismatch")
        assert step.message
    else:
        assert result.verdict == "verified", result.to_json()


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        ({"identity_hash": "", "decision": "authorized"}, "no_consequence_authorization_claimed"),
        ({"identity_hash": 7, "decision": "authorized"}, "no_consequence_authorization_claimed"),
        ({"identity_hash": AUTHORIZED}, "no_consequence_authorization_claimed"),
        ({"identity_hash": AUTHORIZED, "decision": "authorized"}, "consequence_bound"),
    ],
)  # fmt: skip
def test_only_an_authorized_identity_authorizes(
    four: dict[str, Any], authorization: dict[str, Any], status: str
) -> None:
    bundle = _insert(four, 3, "CONSEQUENCE_AUTHORIZED", authorization)
    bundle = _insert(bundle, 4, "CONSEQUENCE_DISPATCHED", {"identity_hash": AUTHORIZED})
    result, step = _cross(bundle)
    assert (result.verdict, step.details["consequence_binding"]) == ("verified", status)
