"""RFC 9162 §2.1 tree layout: which aligned subtrees a root or a proof is made of.

Each hash of an inclusion or consistency proof, and each part of a root, is the Merkle tree hash
of one aligned range of leaves. These planners name those ranges; a store (the SQLite log's
complete-subtree rows, :mod:`affidavit.attest.log.tree`) or tiles
(:mod:`affidavit.verify.tlog.tiles`) then supplies the hashes. Pure integer arithmetic.

>>> decompose(0, 6)
[(2, 0), (1, 2)]
>>> inclusion_ranges(2, 5)
[(3, 4), (0, 2), (4, 5)]
>>> consistency_ranges(3, 7)
[(2, 3), (3, 4), (0, 2), (4, 7)]
"""

from __future__ import annotations

__all__ = ["consistency_ranges", "decompose", "inclusion_ranges", "split"]


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
