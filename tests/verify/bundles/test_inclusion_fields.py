"""Step ``merkle_inclusion``: each field of a bundle's ``merkle_inclusion``, read strictly (issue
36).

docs/formats.md §4 "Merkle log" and verify/bundles/inclusion.py: ``proof`` (an array of nodes,
each 64 lowercase hex characters, bare or as ``{"hash": ...}``), ``leaf_hash``, ``leaf_index`` and
``tree_size`` (non-negative integers), ``merkle_root``; a malformed field fails the step with
``bundle.inclusion_malformed`` naming the first bad one, in that order; a well-formed proof that
does not prove the leaf fails with the RFC 9162 §2.1.3.2 ``merkle.*`` code; left or right comes
from the index, never from a node's ``position``. Each case is a real stamped bundle (four leaves
in one log: a two-node audit path) with one change, ``bundle_hash`` recomputed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.verify.bundles.hashing import bundle_hash

from tests.verify.bundles.test_bundle_support import OUTPUTS, stamp, verifier

Change = Callable[[dict[str, Any]], Any]
MALFORMED = "bundle.inclusion_malformed"


@pytest.fixture(scope="module")
def stamped() -> dict[str, dict[str, Any]]:
    return stamp(OUTPUTS)


def _verify(bundle: dict[str, Any], change: Change) -> Any:
    out = copy.deepcopy(bundle)
    change(out["merkle_inclusion"])
    out["bundle_hash"] = bundle_hash(out)
    return verifier().verify(out)


def _set(name: str, value: Any) -> Change:
    def change(inclusion: dict[str, Any]) -> None:
        if value is _DROP:
            del inclusion[name]
        else:
            inclusion[name] = value

    return change


def _node(index: int, value: Any) -> Change:
    def change(inclusion: dict[str, Any]) -> None:
        node = inclusion["proof"][index]
        if value is _DROP:
            del node["hash"]
        else:
            node["hash"] = value

    return change


_DROP: Any = object()
_HEX = "ab" * 32

# (name, change, the field the message names)
FIELDS: list[tuple[str, Change, str]] = [
    ("proof not an array", _set("proof", "ab" * 64), "proof"),
    ("proof null", _set("proof", None), "proof"),
    ("proof absent", _set("proof", _DROP), "proof"),
    ("first node uppercase", _node(0, _HEX.upper()), "proof[0]"),
    ("second node not hex", _node(1, "zz" * 32), "proof[1]"),
    ("second node 62 characters", _node(1, _HEX[:62]), "proof[1]"),
    ("second node 66 characters", _node(1, _HEX + "ab"), "proof[1]"),
    ("first node a number", _node(0, 7), "proof[0]"),
    ("second node without a hash", _node(1, _DROP), "proof[1]"),
    ("a node neither text nor object", lambda i: i["proof"].append(7), "proof[2]"),
    ("leaf_hash uppercase", lambda i: i.update(leaf_hash=i["leaf_hash"].upper()), "leaf_hash"),
    ("leaf_hash absent", _set("leaf_hash", _DROP), "leaf_hash"),
    ("leaf_index negative", _set("leaf_index", -1), "leaf_index"),
    ("leaf_index a boolean", _set("leaf_index", False), "leaf_index"),
    ("leaf_index text", _set("leaf_index", "0"), "leaf_index"),
    ("leaf_index a float", _set("leaf_index", 0.0), "leaf_index"),
    ("leaf_index absent", _set("leaf_index", _DROP), "leaf_index"),
    ("tree_size negative", _set("tree_size", -4), "tree_size"),
    ("tree_size a boolean", _set("tree_size", True), "tree_size"),
    ("tree_size absent", _set("tree_size", _DROP), "tree_size"),
    ("merkle_root uppercase", lambda i: i.update(merkle_root=i["merkle_root"].upper()),
     "merkle_root"),
    ("merkle_root absent", _set("merkle_root", _DROP), "merkle_root"),
    # the first bad field is named, in the order proof, nodes, leaf_hash, index, size, root
    ("bad node and bad leaf_hash", lambda i: (_node(1, 7)(i), _set("leaf_hash", 7)(i)),
     "proof[1]"),
    ("bad leaf_hash and bad index", lambda i: (_set("leaf_hash", 7)(i), _set("leaf_index", -1)(i)),
     "leaf_hash"),
    ("bad index and bad size", lambda i: (_set("leaf_index", -1)(i), _set("tree_size", -1)(i)),
     "leaf_index"),
    ("bad size and bad root", lambda i: (_set("tree_size", -1)(i), _set("merkle_root", 7)(i)),
     "tree_size"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "field"), FIELDS, ids=[f[0] for f in FIELDS])
def test_a_malformed_field_fails_the_step_naming_it(
    stamped: dict[str, dict[str, Any]], name: str, change: Change, field: str
) -> None:
    result = _verify(stamped["accepted"], change)
    step = result.failed_step
    assert step is not None, result.to_json()
    assert (result.verdict, step.name, step.code) == ("failed", "merkle_inclusion", MALFORMED), name
    named = step.message.split(" must ")[0]
    assert named.endswith(field), (name, step.message)


PROOFS: list[tuple[str, Change, str]] = [
    ("another index", _set("leaf_index", 1), "merkle.root_mismatch"),
    ("an index past the tree", _set("leaf_index", 4), "merkle.index_out_of_range"),
    ("a larger tree", _set("tree_size", 5), "merkle.bad_proof_length"),
    ("a node dropped", lambda i: i["proof"].pop(), "merkle.bad_proof_length"),
    ("a node added", lambda i: i["proof"].append({"hash": _HEX}), "merkle.bad_proof_length"),
    ("another root", _set("merkle_root", _HEX), "merkle.root_mismatch"),
    ("nodes swapped", lambda i: i["proof"].reverse(), "merkle.root_mismatch"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "code"), PROOFS, ids=[p[0] for p in PROOFS])
def test_a_well_formed_proof_of_another_leaf_fails_with_its_merkle_code(
    stamped: dict[str, dict[str, Any]], name: str, change: Change, code: str
) -> None:
    result = _verify(stamped["accepted"], change)
    step = result.step("merkle_inclusion")
    assert step is not None
    assert (result.verdict, step.status, step.code) == ("failed", "failed", code), name
    # an unverified proof binds nothing to the signed head: cross_reference says it did not check
    cross = result.step("cross_reference")
    assert cross is not None
    assert cross.status == "not_checked", (name, cross)
    assert cross.message, name


def _positions_lie(inclusion: dict[str, Any]) -> None:
    for node in inclusion["proof"]:
        node["position"] = "left" if node["position"] == "right" else "right"


def _bare_nodes(inclusion: dict[str, Any]) -> None:
    inclusion["proof"] = [node["hash"] for node in inclusion["proof"]]


def _no_positions(inclusion: dict[str, Any]) -> None:
    for node in inclusion["proof"]:
        del node["position"]


@pytest.mark.parametrize("deal", list(OUTPUTS))
@pytest.mark.parametrize("change", [lambda i: None, _positions_lie, _bare_nodes, _no_positions])
def test_each_leaf_verifies_whatever_its_nodes_positions_say(
    stamped: dict[str, dict[str, Any]], deal: str, change: Change
) -> None:
    bundle = stamped[deal]
    result = _verify(bundle, change)
    assert result.verdict == "verified", result.to_json()
    step = result.step("merkle_inclusion")
    assert step is not None
    claimed = bundle["merkle_inclusion"]
    assert (step.status, step.details) == (
        "ok",
        {"leaf_index": claimed["leaf_index"], "tree_size": claimed["tree_size"]},
    )


def test_no_merkle_inclusion_is_not_checked_and_says_so(
    stamped: dict[str, dict[str, Any]],
) -> None:
    for absent in ({"merkle_inclusion": None}, {}):
        bundle = {k: v for k, v in stamped["accepted"].items() if k != "merkle_inclusion"}
        bundle.update(absent)
        bundle["bundle_hash"] = bundle_hash(bundle)
        result = verifier().verify(bundle)
        step = result.step("merkle_inclusion")
        assert step is not None, result.to_json()
        assert (result.verdict, step.status) == ("unanchored", "not_checked"), result.to_json()
        assert "merkle_inclusion" in step.message
