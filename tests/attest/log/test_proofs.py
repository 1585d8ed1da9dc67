"""affidavit.attest.log.proofs: tlog-proofs from the SQLite log, and bundles that carry one."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.log.proofs import TLOG_PROOF_FIELD, attach_proof, build_proof, bundle_leaf
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, stamp_bundles
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.tlog.policy import parse_policy
from affidavit.verify.tlog.proof import parse_proof, verify_proof

from tests.conftest import raises_code
from tests.verify.bundles.test_bundle_support import LOG_ID, LOG_KEY, OUTPUTS, POLICY, WHEN
from tests.verify.bundles.test_bundle_support import contract as example
from tests.verify.tlog.proof_fixtures import cosign_recorded, witness_policy


@pytest.fixture
def log(tmp_path: Path) -> Iterator[TransparencyLog]:
    with TransparencyLog.create(tmp_path / "log.db", LOG_KEY, LOG_ID) as created:
        yield created


def _policy(quorum: str = "both") -> Any:
    return parse_policy(
        witness_policy(verifier_key_string(LOG_ID, LOG_KEY.public_key), quorum=quorum)
    )


def test_no_checkpoint_means_no_proof(log: TransparencyLog) -> None:
    log.append([b"a", b"b"])
    with raises_code("log.no_checkpoint", match="log head DB --checkpoint") as caught:
        build_proof(log, 0)
    assert caught.value.details == {"index": 0, "checkpoint_size": None}


def test_a_checkpoint_older_than_the_leaf_is_refused(log: TransparencyLog) -> None:
    log.append([b"a"])
    log.checkpoint()
    log.append([b"b"])
    assert build_proof(log, 0).index == 0
    with raises_code("log.no_checkpoint") as caught:
        build_proof(log, 1)
    assert caught.value.details["checkpoint_size"] == 1


@pytest.mark.parametrize("index", [2, -1])
def test_no_such_leaf(log: TransparencyLog, index: int) -> None:
    log.append([b"a", b"b"])
    log.checkpoint()
    with raises_code("log.index_out_of_range"):
        build_proof(log, index)


def test_the_proof_is_at_the_checkpoint_size_and_verifies(log: TransparencyLog) -> None:
    entries = [f"e{i}".encode() for i in range(6)]
    log.append(entries[:5])
    note = log.checkpoint()
    log.append(entries[5:])  # the log grew since: the proof stays at the checkpoint's size
    proof = build_proof(log, 4, extra=b"ctx")
    assert proof.checkpoint == note
    assert proof.extra == b"ctx"
    assert list(proof.path) == merkle.inclusion_proof([merkle.leaf_hash(e) for e in entries], 4, 5)
    assert parse_proof(proof.to_text()) == proof
    verified = verify_proof(proof, _policy("none"), entry=entries[4])
    assert verified.checkpoint.tree_size == 5
    with raises_code("tlog.quorum_not_met"):
        verify_proof(proof, _policy(), entry=entries[4])


def test_the_proof_carries_the_witness_cosignatures(log: TransparencyLog) -> None:
    log.append([b"x", b"y", b"z"])
    cosigned = cosign_recorded(log, log.checkpoint())
    proof = build_proof(log, 2)
    assert proof.checkpoint == cosigned
    assert verify_proof(proof, _policy(), entry=b"z").verified.witnesses == ("ed", "pq")


def test_the_latest_checkpoint_wins_even_uncosigned(log: TransparencyLog) -> None:
    log.append([b"x"])
    cosign_recorded(log, log.checkpoint())
    log.append([b"y"])
    fresh = log.checkpoint()  # not cosigned yet: the proof says so (quorum not met)
    proof = build_proof(log, 0)
    assert proof.checkpoint == fresh
    with raises_code("tlog.quorum_not_met"):
        verify_proof(proof, _policy(), entry=b"x")


def test_a_damaged_checkpoint_record_is_an_integrity_error(log: TransparencyLog) -> None:
    log.append([b"x", b"y"])
    log.checkpoint()
    with log.store.write() as db:
        db.execute("UPDATE log_heads SET root_hash = $1 WHERE kind = 'checkpoint'", ("00" * 32,))
    with raises_code("log.integrity"):
        build_proof(log, 0)


# -- bundles --------------------------------------------------------------------------------------


def _stamped(log: TransparencyLog, deals: tuple[str, ...] = ("accepted", "review")) -> list[Any]:
    items = [StampItem(deal, example(), OUTPUTS[deal]) for deal in deals]
    return stamp_bundles(log, items, POLICY, when=WHEN)


def test_attaching_keeps_the_bundle_hash_and_the_verdict(log: TransparencyLog) -> None:
    bundles = _stamped(log)
    cosign_recorded(log, log.checkpoint())
    verifier = BundleVerifier([LOG_KEY.public_key])
    for bundle in bundles:
        before = verifier.verify(bundle)
        carried = attach_proof(log, bundle)
        assert carried[TLOG_PROOF_FIELD].startswith("c2sp.org/tlog-proof@v1\n")
        assert bundle_hash(carried) == bundle["bundle_hash"] == carried["bundle_hash"]
        assert TLOG_PROOF_FIELD not in bundle  # a copy
        # without a policy: same verdict, the proof shown as not checked
        after = verifier.verify(carried)
        assert after.verdict == before.verdict == "verified"
        assert [s.name for s in after.steps] == [*(s.name for s in before.steps), "tlog_proof"]
        assert after.step("tlog_proof").status == "not_checked"  # type: ignore[union-attr]
        # with the policy: verified, the step ok
        policed = BundleVerifier([LOG_KEY.public_key], tlog_policy=_policy()).verify(carried)
        assert policed.verdict == "verified"
        step = policed.step("tlog_proof")
        assert step is not None
        assert step.status == "ok"
        assert step.details["index"] == bundle["merkle_inclusion"]["leaf_index"]


def test_the_field_goes_after_the_signed_tree_head(log: TransparencyLog) -> None:
    (bundle,) = _stamped(log, ("accepted",))
    log.checkpoint()
    keys = list(attach_proof(log, bundle))
    assert keys[keys.index("signed_tree_head") + 1] == TLOG_PROOF_FIELD
    # attaching again replaces the proof, in place
    again = attach_proof(log, attach_proof(log, bundle))
    assert list(again) == keys
    bare = {k: v for k, v in bundle.items() if k not in ("signed_tree_head", "exported_at")}
    assert list(attach_proof(log, bare))[-1] == TLOG_PROOF_FIELD


def test_a_bundle_of_another_leaf_or_log_is_refused(log: TransparencyLog) -> None:
    (bundle,) = _stamped(log, ("accepted",))
    log.checkpoint()
    other_leaf = copy.deepcopy(bundle)
    other_leaf["merkle_inclusion"]["leaf_hash"] = "00" * 32
    with raises_code("log.leaf_mismatch", match="holds another leaf"):
        attach_proof(log, other_leaf)
    beyond = copy.deepcopy(bundle)
    beyond["merkle_inclusion"]["leaf_index"] = 5
    with raises_code("log.leaf_mismatch", match="has only 1 leaves"):
        attach_proof(log, beyond)
    other_log = copy.deepcopy(bundle)
    other_log["merkle_inclusion"]["log_id"] = "someone-else"
    with raises_code("log.leaf_mismatch", match="someone-else"):
        attach_proof(log, other_log)


@pytest.mark.parametrize(
    ("bundle", "code"),
    [
        ([], "bundle.malformed"),
        ({}, "bundle.malformed"),
        ({"merkle_inclusion": None}, "bundle.malformed"),
        (
            {"merkle_inclusion": {"leaf_index": -1, "leaf_hash": "00" * 32}},
            "bundle.inclusion_malformed",
        ),
        (
            {"merkle_inclusion": {"leaf_index": True, "leaf_hash": "00" * 32}},
            "bundle.inclusion_malformed",
        ),
        (
            {"merkle_inclusion": {"leaf_index": 0, "leaf_hash": "AB" * 32}},
            "bundle.inclusion_malformed",
        ),
    ],
)
def test_bundle_leaf_reads_merkle_inclusion_strictly(bundle: Any, code: str) -> None:
    with raises_code(code):
        bundle_leaf(bundle)


def test_an_unchecked_bundle_without_a_checkpoint(log: TransparencyLog) -> None:
    (bundle,) = _stamped(log, ("accepted",))
    with raises_code("log.no_checkpoint"):
        attach_proof(log, bundle)
