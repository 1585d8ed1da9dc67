"""RFC 6962 / RFC 9162 Merkle trees: hashing, inclusion and consistency proofs.

>>> leaves = [leaf_hash(bytes([i])) for i in range(5)]
>>> root = root_of(leaves)
>>> verify_inclusion(leaves[3], 3, 5, inclusion_proof(leaves, 3), root)
>>> verify_consistency(2, 5, consistency_proof(leaves, 2, 5), root_of(leaves[:2]), root)

Verification (RFC 9162 §2.1.3.2, §2.1.4.2) is strict (docs/formats.md §4 "Merkle log"): every
hash 32 bytes (``merkle.bad_hash_length``), a proof exactly as long as its sizes imply
(``merkle.bad_proof_length``), no consistency proof from size 0 (``merkle.consistency_from_zero``:
it checks nothing); roots are compared as given.

Each hash of a proof, and each part of a root, is the hash of one aligned range of leaves (RFC
9162 §2.1). The planners name those ranges; a store (:mod:`affidavit.attest.log.tree`) or tiles
(:mod:`affidavit.verify.tlog.tiles`) supplies the hashes. The proof builders here work in memory
and are the reference those O(log n) reads are tested against.

>>> decompose(0, 6)
[(2, 0), (1, 2)]
>>> inclusion_ranges(2, 5)
[(3, 4), (0, 2), (4, 5)]
>>> consistency_ranges(3, 7)
[(2, 3), (3, 4), (0, 2), (4, 7)]
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

from affidavit.verify import errors
from affidavit.verify.results import Result, StepRun

__all__ = [
    "EMPTY_ROOT",
    "HASH_BYTES",
    "check_inclusion",
    "consistency_proof",
    "consistency_proof_length",
    "consistency_ranges",
    "decompose",
    "inclusion_proof",
    "inclusion_proof_length",
    "inclusion_ranges",
    "leaf_hash",
    "node_hash",
    "root_from_inclusion_proof",
    "root_of",
    "subtree_hash",
    "verify_consistency",
    "verify_inclusion",
]


# RFC 9162 §2.1: the layout, which aligned subtrees a root or a proof is made of.


def decompose(start: int, end: int) -> list[tuple[int, int]]:
    """The complete subtrees ``(level, index)`` covering ``[start, end)``, left to right."""
    nodes: list[tuple[int, int]] = []
    position = start
    while position < end:
        width = 1 << ((end - position).bit_length() - 1)  # largest power of two that fits
        if position:
            width = min(width, position & -position)  # and keeps the subtree aligned
        level = width.bit_length() - 1
        nodes.append((level, position >> level))
        position += width
    return nodes


def split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2), RFC 9162 §2.1.1."""
    return 1 << ((n - 1).bit_length() - 1)


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The subtrees of PATH(index, D[size]) (RFC 9162 §2.1.3.1), leaf end first."""
    ranges: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = split(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    ranges.reverse()
    return ranges


def consistency_ranges(first: int, size: int) -> list[tuple[int, int]]:
    """The subtrees of PROOF(m, D[n]) = SUBPROOF(m, D[n], true) (RFC 9162 §2.1.4.1)."""
    ranges: list[tuple[int, int]] = []
    start, end, whole = 0, size, True
    m = first
    while m != end - start:
        k = split(end - start)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
            m -= k
            whole = False
    if not whole:
        ranges.append((start, end))
    ranges.reverse()
    return ranges


HASH_BYTES = 32
_sha256 = hashlib.sha256

# RFC 6962 §2.1: the hash of an empty list is the hash of an empty string.
EMPTY_ROOT = _sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """``SHA-256(0x00 || data)`` (RFC 6962 §2.1)."""
    return _sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)`` (RFC 6962 §2.1)."""
    return _sha256(b"\x01" + left + right).digest()


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """The Merkle tree hash of ``leaf_hashes`` (RFC 6962 §2.1; empty list -> :data:`EMPTY_ROOT`).

    Level by level, an odd last node carried up: the recursive definition's hash, in O(n) hashes.
    """
    if not leaf_hashes:
        return EMPTY_ROOT
    level = list(leaf_hashes)
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def subtree_hash(start: int, end: int, node: Callable[[int, int], bytes]) -> bytes:
    """The Merkle tree hash of leaves ``[start, end)``, aligned as in :func:`decompose`, folded in
    O(log n) from ``node(level, index)``, the stored hash of leaves ``[index·2^level,
    (index+1)·2^level)``: the one fold for the log's node table and for tiles.
    """
    if start == end:
        return EMPTY_ROOT
    parts = [node(level, index) for level, index in decompose(start, end)]
    result = parts.pop()
    while parts:  # RFC 9162 §2.1.1: MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))
        result = node_hash(parts.pop(), result)
    return result


def inclusion_proof_length(index: int, size: int) -> int:
    """How many hashes the inclusion proof of leaf ``index`` in a tree of ``size`` has: one per
    level where ``index`` and ``size - 1`` differ, plus one per left sibling on the border above.
    """
    inner = (index ^ (size - 1)).bit_length()
    return inner + (index >> inner).bit_count()


def consistency_proof_length(size1: int, size2: int) -> int:
    """How many hashes the consistency proof from ``size1`` to ``size2`` (0 < size1 < size2) has."""
    level = (size1 & -size1).bit_length() - 1  # trailing zero bits of size1
    index = (size1 - 1) >> level
    seed = 0 if index == 0 else 1  # size1 a power of two: its root is the seed, not sent
    return seed + inclusion_proof_length(index, ((size2 - 1) >> level) + 1)


def root_from_inclusion_proof(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> bytes:
    """The root implied by an inclusion proof (RFC 9162 §2.1.3.2 steps 1-5, without the compare).

    Raises:
        ``merkle.bad_hash_length``: ``leaf`` or a proof hash is not 32 bytes.
        ``merkle.index_out_of_range``: ``index`` is negative or not below ``size``.
        ``merkle.bad_proof_length``: the proof length does not fit ``index`` and ``size``.
    """
    _check_hash(leaf, "leaf hash")
    if index < 0 or index >= size:
        raise errors.ProofError(
            "merkle.index_out_of_range",
            f"leaf index {index} is not in a tree of size {size}",
            details={"index": index, "size": size},
        )
    _check_proof(proof, inclusion_proof_length(index, size))
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:  # RFC 9162 §2.1.3.2 step 5.2
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r  # the length check guarantees sn == 0 here


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that ``leaf`` is at ``index`` in the tree of ``size`` whose hash is ``root``.

    Raises:
        ``merkle.bad_hash_length``, ``merkle.index_out_of_range``, ``merkle.bad_proof_length``: as
            for :func:`root_from_inclusion_proof`.
        ``merkle.root_mismatch``: the proof leads to another root.
    """
    computed = root_from_inclusion_proof(leaf, index, size, proof)
    if not hmac.compare_digest(computed, root):
        raise errors.ProofError(
            "merkle.root_mismatch",
            "inclusion proof leads to another root",
            details={"expected": root.hex(), "computed": computed.hex()},
        )


def check_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> Result:
    """:func:`verify_inclusion` as the one :class:`~affidavit.verify.results.Result` (kind
    ``inclusion``, its one step ``inclusion``; the proof's fields beside it)."""
    run = StepRun(("inclusion",))
    try:
        verify_inclusion(leaf, index, size, proof, root)
        run.passed("inclusion")
    except errors.ProofError as e:
        run.fail(e)
    return run.result(
        "inclusion",
        None,
        leaf_hash=leaf.hex(),
        index=index,
        size=size,
        root_hash=root.hex(),
        proof_length=len(proof),
    )


def verify_consistency(
    size1: int, size2: int, proof: Sequence[bytes], root1: bytes, root2: bytes
) -> None:
    """Check that tree ``size2``/``root2`` extends tree ``size1``/``root1`` (RFC 9162 §2.1.4.2).

    Raises:
        ``merkle.consistency_from_zero``: ``size1`` is 0.
        ``merkle.size_order``: ``size1 > size2`` (or a negative size).
        ``merkle.bad_proof_length``: the wrong number of proof hashes (for equal sizes: none).
        ``merkle.bad_hash_length``: a proof hash is not 32 bytes.
        ``merkle.root_mismatch``: the proof does not lead to ``root1`` and ``root2``.
    """
    if size1 < 0 or size2 < size1:
        raise errors.ProofError(
            "merkle.size_order",
            f"consistency from size {size1} to size {size2}: the first size must be at most "
            "the second",
            details={"size1": size1, "size2": size2},
        )
    if size1 == 0:
        raise errors.ProofError(
            "merkle.consistency_from_zero", "a consistency proof from size 0 proves nothing"
        )
    if size1 == size2:
        _check_proof(proof, 0)
        _compare_root(root1, root2, "the two roots of equal-size trees differ")
        return
    _check_proof(proof, consistency_proof_length(size1, size2))
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # size1 a power of two: prepend root1 (step 2)
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:  # step 4
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:  # step 6
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    _compare_root(fr, root1, "consistency proof does not lead to the first root")
    _compare_root(sr, root2, "consistency proof does not lead to the second root")


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int | None = None) -> list[bytes]:
    """The RFC 9162 §2.1.3.1 inclusion proof (PATH) of leaf ``index`` in the tree of the first
    ``size`` leaves (default: all); the O(n) reference.

    Raises:
        ``merkle.index_out_of_range``: ``index`` not below ``size``, or ``size`` beyond the leaves.
    """
    n = len(leaves) if size is None else size
    if not 0 <= index < n <= len(leaves):
        raise errors.ProofError(
            "merkle.index_out_of_range",
            f"no leaf {index} in a tree of size {n} ({len(leaves)} leaves known)",
        )
    return [root_of(leaves[start:end]) for start, end in inclusion_ranges(index, n)]


def consistency_proof(leaves: Sequence[bytes], size1: int, size2: int | None = None) -> list[bytes]:
    """The RFC 9162 §2.1.4.1 consistency proof (PROOF) from the first ``size1`` leaves to the
    first ``size2`` (default: all); empty for equal sizes; the O(n) reference.

    Raises:
        ``merkle.consistency_from_zero``: ``size1`` is 0.
        ``merkle.size_order``: ``size1 > size2`` or ``size2`` beyond the leaves.
    """
    n = len(leaves) if size2 is None else size2
    if size1 == 0:
        raise errors.ProofError(
            "merkle.consistency_from_zero", "a consistency proof from size 0 proves nothing"
        )
    if not 0 < size1 <= n <= len(leaves):
        raise errors.ProofError(
            "merkle.size_order", f"no consistency proof from size {size1} to size {n}"
        )
    if size1 == n:
        return []
    return [root_of(leaves[start:end]) for start, end in consistency_ranges(size1, n)]


def _check_hash(value: bytes, what: str) -> None:
    if len(value) != HASH_BYTES:
        raise errors.ProofError(
            "merkle.bad_hash_length",
            f"{what} is {len(value)} bytes, not 32",
            details={"length": len(value)},
        )


def _check_proof(proof: Sequence[bytes], expected: int) -> None:
    if len(proof) != expected:
        raise errors.ProofError(
            "merkle.bad_proof_length",
            f"proof has {len(proof)} hashes, expected {expected}",
            details={"expected": expected, "actual": len(proof)},
        )
    for position, value in enumerate(proof):
        _check_hash(value, f"proof hash {position}")


def _compare_root(computed: bytes, expected: bytes, message: str) -> None:
    if not hmac.compare_digest(computed, expected):
        raise errors.ProofError(
            "merkle.root_mismatch",
            message,
            details={"expected": expected.hex(), "computed": computed.hex()},
        )
