"""Step ``tlog_proof`` (verify/bundles/tlog_step.py) says why it did not check, and what differs.

Issue 36 (mutation testing): a step that is not ``ok`` tells the reader why (verify/results.py:
``not_checked``: "reason says why"; ``failed``: a code and a message), and a leaf-index mismatch
reports both indexes (``expected``: the bundle's ``merkle_inclusion.leaf_index``, ``actual``: the
tlog-proof's). Each case is a real witnessed bundle (tests/verify/tlog/proof_fixtures.py) with one
change, verified under the policy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.tlog.policy import Policy, parse_policy
from affidavit.verify.tlog.proof import parse_proof

from tests.verify.bundles.test_bundle_support import LOG_KEY
from tests.verify.tlog.proof_fixtures import stamped_with_proofs


@pytest.fixture(scope="module")
def stamped(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Policy]:
    _, bundles, policy = stamped_with_proofs(tmp_path_factory.mktemp("tlog-reasons"))
    return bundles, parse_policy(policy)


def _tlog_step(bundle: dict[str, Any], policy: Policy) -> Any:
    result = BundleVerifier([LOG_KEY.public_key], tlog_policy=policy).verify(bundle)
    assert result.verdict == "failed", result.to_json()
    step = result.step("tlog_proof")
    assert step is not None, result.to_json()
    return step


def _broken_chain(bundle: dict[str, Any]) -> None:
    bundle["events"][1]["payload"]["edited"] = True


def _unbound_leaf(bundle: dict[str, Any]) -> None:
    bundle["merkle_inclusion"]["leaf_hash"] = "00" * 32


def _malformed_inclusion(bundle: dict[str, Any]) -> None:
    bundle["merkle_inclusion"]["tree_size"] = -1  # the chain still verifies


@pytest.mark.parametrize(
    ("change", "failed_step"),
    [
        (_broken_chain, "event_chain"),
        (_unbound_leaf, "merkle_inclusion"),
        (_malformed_inclusion, "merkle_inclusion"),
    ],
)
def test_the_step_not_checked_says_why(stamped: Any, change: Any, failed_step: str) -> None:
    bundles, policy = stamped
    bundle = copy.deepcopy(bundles[0])
    change(bundle)
    result = BundleVerifier([LOG_KEY.public_key], tlog_policy=policy).verify(bundle)
    assert result.verdict == "failed"
    assert failed_step in [s.name for s in result.steps if s.status == "failed"]
    step = result.step("tlog_proof")
    assert step is not None, [s.name for s in result.steps]
    assert step.status == "not_checked"
    assert step.to_json()["message"]  # the reason


@pytest.mark.parametrize(
    ("proof", "code"),
    [(None, "bundle.tlog_proof_missing"), (7, "tlog.proof_malformed")],
)
def test_a_missing_or_non_text_proof_fails_with_a_message(
    stamped: Any, proof: Any, code: str
) -> None:
    bundles, policy = stamped
    bundle = copy.deepcopy(bundles[0])
    if proof is None:
        del bundle["tlog_proof"]
    else:
        bundle["tlog_proof"] = proof
    step = _tlog_step(bundle, policy)
    assert (step.status, step.code) == ("failed", code)
    assert step.message


def test_a_mismatch_reports_both_leaf_indexes(stamped: Any) -> None:
    bundles, policy = stamped
    ours, theirs = bundles[0], bundles[1]
    assert ours["merkle_inclusion"]["leaf_index"] != parse_proof(theirs["tlog_proof"]).index
    step = _tlog_step({**ours, "tlog_proof": theirs["tlog_proof"]}, policy)
    assert (step.code, step.expected, step.actual) == (
        "bundle.tlog_proof_mismatch",
        ours["merkle_inclusion"]["leaf_index"],
        parse_proof(theirs["tlog_proof"]).index,
    )
    assert step.message
