"""RFC 6962/9162 Merkle proofs (verify/crypto/merkle.py): transparency-dev vectors, round trips,
tamper."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 §2.1 MTH, written out recursively from the RFC text (independent of root_of)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


def _leaves(n: int) -> list[bytes]:
    return [merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


def _cases(peer_vectors: Path, kind: str) -> list[tuple[str, dict[str, object]]]:
    folder = peer_vectors / "merkle" / kind
    return [
        (str(path.relative_to(folder)), json.loads(path.read_text()))
        for path in sorted(folder.rglob("*.json"))
    ]


def _b64(value: object) -> bytes:
    assert isinstance(value, str)
    return base64.b64decode(value)


def _proof(value: object) -> list[bytes]:
    assert value is None or isinstance(value, list)
    return [_b64(item) for item in value or []]


def test_rfc6962_empty_and_single_leaf_roots() -> None:
    # RFC 6962 §2.1 and the well-known empty-tree root e3b0c442...
    assert merkle.EMPTY_ROOT.hex() == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert merkle.leaf_hash(b"").hex() == (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert merkle.root_of([merkle.leaf_hash(b"")]) == merkle.leaf_hash(b"")


def test_inclusion_vectors(peer_vectors: Path) -> None:
    cases = _cases(peer_vectors, "inclusion")
    assert len(cases) == 98
    wrong = []
    for name, case in cases:
        try:
            merkle.verify_inclusion(
                _b64(case["leafHash"]),
                int(case["leafIdx"]),  # type: ignore[call-overload]
                int(case["treeSize"]),  # type: ignore[call-overload]
                _proof(case["proof"]),
                _b64(case["root"]),
            )
            failed = False
        except errors.ProofError:
            failed = True
        if failed != case["wantErr"]:
            wrong.append(name)
    assert wrong == []


def test_consistency_vectors(peer_vectors: Path) -> None:
    cases = _cases(peer_vectors, "consistency")
    assert len(cases) == 98
    wrong = []
    for name, case in cases:
        try:
            merkle.verify_consistency(
                int(case["size1"]),  # type: ignore[call-overload]
                int(case["size2"]),  # type: ignore[call-overload]
                _proof(case["proof"]),
                _b64(case["root1"]),
                _b64(case["root2"]),
            )
            failed = False
        except errors.ProofError:
            failed = True
        if failed != case["wantErr"]:
            wrong.append(name)
    assert wrong == []


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=1, max_value=70), data=st.data())
def test_inclusion_round_trip(n: int, data: st.DataObject) -> None:
    leaves = _leaves(n)
    root = merkle.root_of(leaves)
    assert root == _mth(leaves)
    index = data.draw(st.integers(min_value=0, max_value=n - 1))
    proof = merkle.inclusion_proof(leaves, index)
    assert len(proof) == merkle.inclusion_proof_length(index, n)
    merkle.verify_inclusion(leaves[index], index, n, proof, root)
    other = (index + 1) % n
    if other != index:
        with pytest.raises(errors.ProofError):
            merkle.verify_inclusion(leaves[index], other, n, proof, root)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=1, max_value=70), data=st.data())
def test_consistency_round_trip(n: int, data: st.DataObject) -> None:
    leaves = _leaves(n)
    m = data.draw(st.integers(min_value=1, max_value=n))
    proof = merkle.consistency_proof(leaves, m, n)
    if m < n:
        assert len(proof) == merkle.consistency_proof_length(m, n)
    merkle.verify_consistency(m, n, proof, _mth(leaves[:m]), _mth(leaves))
    if proof:
        with raises_code("merkle.root_mismatch"):
            merkle.verify_consistency(
                m, n, proof, _mth(leaves[:m]), _mth([*leaves[:-1], b"x" * 32])
            )


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=2, max_value=40), data=st.data())
def test_any_flipped_proof_bit_fails_with_root_mismatch(n: int, data: st.DataObject) -> None:
    leaves = _leaves(n)
    index = data.draw(st.integers(min_value=0, max_value=n - 1))
    proof = merkle.inclusion_proof(leaves, index)
    which = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
    bit = data.draw(st.integers(min_value=0, max_value=255))
    tampered = bytearray(proof[which])
    tampered[bit // 8] ^= 1 << (bit % 8)
    proof[which] = bytes(tampered)
    with raises_code("merkle.root_mismatch") as caught:
        merkle.verify_inclusion(leaves[index], index, n, proof, merkle.root_of(leaves))
    assert caught.value.code == "merkle.root_mismatch"


def test_error_codes() -> None:
    leaves = _leaves(5)
    root = merkle.root_of(leaves)
    proof = merkle.inclusion_proof(leaves, 2)
    cases: list[tuple[str, object]] = [
        (
            "merkle.index_out_of_range",
            lambda: merkle.verify_inclusion(leaves[2], 5, 5, proof, root),
        ),
        (
            "merkle.index_out_of_range",
            lambda: merkle.verify_inclusion(leaves[2], -1, 5, proof, root),
        ),
        (
            "merkle.bad_proof_length",
            lambda: merkle.verify_inclusion(leaves[2], 2, 5, proof[:-1], root),
        ),
        (
            "merkle.bad_proof_length",
            lambda: merkle.verify_inclusion(leaves[2], 2, 5, [*proof, root], root),
        ),
        (
            "merkle.bad_hash_length",
            lambda: merkle.verify_inclusion(b"\x00" * 31, 2, 5, proof, root),
        ),
        (
            "merkle.bad_hash_length",
            lambda: merkle.verify_inclusion(leaves[2], 2, 5, [proof[0][:31], *proof[1:]], root),
        ),
        ("merkle.root_mismatch", lambda: merkle.verify_inclusion(leaves[3], 2, 5, proof, root)),
        ("merkle.consistency_from_zero", lambda: merkle.verify_consistency(0, 5, [], root, root)),
        ("merkle.consistency_from_zero", lambda: merkle.verify_consistency(0, 0, [], root, root)),
        ("merkle.size_order", lambda: merkle.verify_consistency(5, 4, [], root, root)),
        ("merkle.bad_proof_length", lambda: merkle.verify_consistency(3, 3, [root], root, root)),
        ("merkle.bad_proof_length", lambda: merkle.verify_consistency(3, 5, [], root, root)),
        ("merkle.root_mismatch", lambda: merkle.verify_consistency(5, 5, [], root, leaves[0])),
        ("merkle.consistency_from_zero", lambda: merkle.consistency_proof(leaves, 0, 5)),
        ("merkle.size_order", lambda: merkle.consistency_proof(leaves, 3, 9)),
        ("merkle.index_out_of_range", lambda: merkle.inclusion_proof(leaves, 5)),
    ]
    for code, call in cases:
        assert callable(call)
        with pytest.raises(errors.AffidavitError) as caught:
            call()
        assert caught.value.code == code, (code, caught.value)


def test_bad_hash_length_is_input_error() -> None:
    assert errors.ProofError.codes["merkle.bad_hash_length"].exit_code == 2
    assert errors.ProofError.codes["merkle.root_mismatch"].exit_code == 1


# --- issue 36: what a caller reads off a result or an error ------------------------------------


def _raised(call: object) -> errors.AffidavitError:
    assert callable(call)
    with pytest.raises(errors.AffidavitError) as caught:
        call()
    return caught.value


def test_every_error_says_what_went_wrong() -> None:
    # The CLI prints ``error: <code>: <message>`` and the registry ``{code, message, details}``:
    # every refusal carries a sentence, whichever check raised it.
    leaves = _leaves(5)
    root = merkle.root_of(leaves)
    proof = merkle.consistency_proof(leaves, 3, 5)
    root3 = merkle.root_of(leaves[:3])
    calls = {
        "merkle.size_order": lambda: merkle.verify_consistency(5, 4, [], root, root),
        "merkle.consistency_from_zero": lambda: merkle.verify_consistency(0, 5, [], root, root),
        "merkle.root_mismatch equal sizes": lambda: merkle.verify_consistency(
            5, 5, [], root, leaves[0]
        ),
        "merkle.root_mismatch first root": lambda: merkle.verify_consistency(
            3, 5, proof, leaves[0], root
        ),
        "merkle.root_mismatch second root": lambda: merkle.verify_consistency(
            3, 5, proof, root3, leaves[0]
        ),
        "merkle.index_out_of_range": lambda: merkle.inclusion_proof(leaves, 5),
        "merkle.size_order builder": lambda: merkle.consistency_proof(leaves, 3, 9),
        "merkle.consistency_from_zero builder": lambda: merkle.consistency_proof(leaves, 0, 5),
        "merkle.index_out_of_range verify": lambda: merkle.verify_inclusion(
            leaves[0], 5, 5, [], root
        ),
        "merkle.bad_hash_length": lambda: merkle.verify_inclusion(leaves[0][:31], 0, 5, [], root),
        "merkle.bad_proof_length": lambda: merkle.verify_inclusion(leaves[0], 0, 5, [], root),
        "merkle.root_mismatch inclusion": lambda: merkle.verify_inclusion(
            leaves[0], 0, 5, merkle.inclusion_proof(leaves, 0), leaves[0]
        ),
    }
    for what, call in calls.items():
        error = _raised(call)
        assert error.code == what.split()[0], what
        assert isinstance(error.message, str), what
        assert error.message, what
        assert error.to_json()["message"] == error.message


def test_size_order_details_name_both_sizes() -> None:
    root = merkle.root_of(_leaves(5))
    error = _raised(lambda: merkle.verify_consistency(5, 4, [], root, root))
    assert error.to_json() == {
        "code": "merkle.size_order",
        "message": error.message,
        "details": {"size1": 5, "size2": 4},
    }


def test_index_out_of_range_details_name_index_and_size() -> None:
    leaves = _leaves(5)
    for index in (5, -1):
        error = _raised(
            lambda i=index: merkle.verify_inclusion(leaves[0], i, 5, [], merkle.root_of(leaves))
        )
        assert (error.code, error.details) == (
            "merkle.index_out_of_range",
            {"index": index, "size": 5},
        )


def test_length_errors_give_the_lengths() -> None:
    leaves = _leaves(5)
    root, proof = merkle.root_of(leaves), merkle.inclusion_proof(leaves, 2)
    short_leaf = _raised(lambda: merkle.verify_inclusion(leaves[2][:31], 2, 5, proof, root))
    assert (short_leaf.code, short_leaf.details) == ("merkle.bad_hash_length", {"length": 31})
    long_hash = _raised(
        lambda: merkle.verify_inclusion(leaves[2], 2, 5, [proof[0] + b"x", *proof[1:]], root)
    )
    assert (long_hash.code, long_hash.details) == ("merkle.bad_hash_length", {"length": 33})
    missing = _raised(lambda: merkle.verify_inclusion(leaves[2], 2, 5, proof[:-1], root))
    assert (missing.code, missing.details) == (
        "merkle.bad_proof_length",
        {"expected": 3, "actual": 2},
    )
    extra = _raised(lambda: merkle.verify_consistency(3, 3, [root], root, root))
    assert (extra.code, extra.details) == ("merkle.bad_proof_length", {"expected": 0, "actual": 1})


def test_root_mismatch_details_give_the_expected_and_the_computed_root() -> None:
    leaves = _leaves(5)
    root5, root3 = merkle.root_of(leaves), merkle.root_of(leaves[:3])
    proof = merkle.consistency_proof(leaves, 3, 5)
    wrong = leaves[0]
    # the second root: the proof computes the real root of size 5
    second = _raised(lambda: merkle.verify_consistency(3, 5, proof, root3, wrong))
    assert second.details == {"expected": wrong.hex(), "computed": root5.hex()}
    # the first root: the proof computes the real root of size 3
    first = _raised(lambda: merkle.verify_consistency(3, 5, proof, wrong, root5))
    assert first.details == {"expected": wrong.hex(), "computed": root3.hex()}
    # equal sizes: the two roots given
    equal = _raised(lambda: merkle.verify_consistency(5, 5, [], root5, wrong))
    assert equal.details == {"expected": wrong.hex(), "computed": root5.hex()}
    # inclusion: the root the proof leads to
    inclusion = _raised(
        lambda: merkle.verify_inclusion(leaves[1], 1, 5, merkle.inclusion_proof(leaves, 1), wrong)
    )
    assert inclusion.details == {"expected": wrong.hex(), "computed": root5.hex()}


def test_check_inclusion_result_document() -> None:
    leaves = _leaves(5)
    root, proof = merkle.root_of(leaves), merkle.inclusion_proof(leaves, 3)
    fields = {
        "leaf_hash": leaves[3].hex(),
        "index": 3,
        "size": 5,
        "root_hash": root.hex(),
        "proof_length": 3,
    }
    assert merkle.check_inclusion(leaves[3], 3, 5, proof, root).to_json() == {
        "kind": "inclusion",
        "source": None,
        "verdict": "verified",
        "verified": True,
        **fields,
        "steps": [{"name": "inclusion", "status": "ok"}],
    }
    wrong = merkle.check_inclusion(leaves[3], 3, 5, proof, leaves[0]).to_json()
    assert (wrong["kind"], wrong["verdict"], wrong["code"]) == (
        "inclusion",
        "failed",
        "merkle.root_mismatch",
    )
    assert {k: wrong[k] for k in fields} == {**fields, "root_hash": leaves[0].hex()}
    assert wrong["steps"][0]["details"] == {"expected": leaves[0].hex(), "computed": root.hex()}


def test_consistency_proof_defaults_to_every_leaf() -> None:
    leaves = _leaves(7)
    assert merkle.consistency_proof(leaves, 3) == merkle.consistency_proof(leaves, 3, 7)
    assert merkle.inclusion_proof(leaves, 3) == merkle.inclusion_proof(leaves, 3, 7)
    merkle.verify_consistency(
        3, 7, merkle.consistency_proof(leaves, 3), _mth(leaves[:3]), _mth(leaves)
    )


def test_root_of_every_small_tree() -> None:
    # RFC 6962 §2.1 MTH, sizes 0 to 17: every shape of the last, odd-carrying levels
    for n in range(18):
        assert merkle.root_of(_leaves(n)) == _mth(_leaves(n)), n


def test_subtree_hash_folds_stored_complete_subtrees() -> None:
    # node(level, index): the stored hash of leaves [index·2^level, (index+1)·2^level)
    leaves = _leaves(13)

    def node(level: int, index: int) -> bytes:
        return _mth(leaves[index << level : (index + 1) << level])

    for start, end in [(0, 0), (0, 1), (0, 3), (0, 7), (0, 13), (8, 13), (8, 11), (12, 13)]:
        assert merkle.subtree_hash(start, end, node) == _mth(leaves[start:end]), (start, end)


def test_every_small_tree_proves_every_leaf_and_every_older_size() -> None:
    # Exhaustive for sizes up to 20 (the random round trips above may miss a shape, e.g. a
    # consistency proof from 10 to 12, where the path meets the right border mid-way).
    leaves = _leaves(20)
    for n in range(1, 21):
        root = _mth(leaves[:n])
        for index in range(n):
            proof = merkle.inclusion_proof(leaves, index, n)
            merkle.verify_inclusion(leaves[index], index, n, proof, root)
        for m in range(1, n + 1):
            proof = merkle.consistency_proof(leaves, m, n)
            assert len(proof) == (merkle.consistency_proof_length(m, n) if m < n else 0)
            merkle.verify_consistency(m, n, proof, _mth(leaves[:m]), root)


def test_decompose_names_the_aligned_complete_subtrees_of_any_range() -> None:
    """RFC 9162 §2.1: ``decompose(start, end)`` covers ``[start, end)`` left to right with complete
    subtrees, each aligned (a subtree of level L starts at a multiple of 2**L) and the largest
    aligned one that fits where it starts. The log's node table and the tiles read these nodes, so
    a misaligned one would hash leaves of another range; every range up to 65 leaves is checked."""
    for start in range(65):
        for end in range(start, 66):
            position = start
            for level, index in merkle.decompose(start, end):
                width = 1 << level
                assert index * width == position, (start, end, level, index)  # aligned, no gap
                assert position + width <= end, (start, end)
                bigger = width * 2
                assert position % bigger or position + bigger > end, (start, end, level)  # largest
                position += width
            assert position == end, (start, end)  # covers the range exactly
