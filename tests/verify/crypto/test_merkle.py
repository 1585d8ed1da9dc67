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
