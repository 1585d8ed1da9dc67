"""Tree layout of the transparency log over its node table (private to
:mod:`affidavit.attest.log.transparency`).

A node ``(level, index)`` is the hash of the complete subtree over leaves
``[index·2^level, (index+1)·2^level)``. Every subtree hash that an RFC 9162 root or proof needs
covers ``[start, end)`` with ``start`` a multiple of a power of two at least ``end - start``; such a
range is a left-to-right run of at most log2(n) complete subtrees (:func:`decompose`), folded right
to left. The range planners below list, for a proof, which subtrees it is made of, in proof order.
"""

from __future__ import annotations

from pathlib import Path
from sqlite3 import Connection
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.verify.crypto.merkle import node_hash

__all__ = [
    "EMPTY_ROOT",
    "NodeReader",
    "check_index",
    "check_size",
    "consistency_ranges",
    "decompose",
    "extend",
    "frontier",
    "inclusion_ranges",
    "split",
    "stored_size",
]

EMPTY_ROOT: Final = bytes.fromhex(
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)  # RFC 9162 §2.1.1: MTH({}) = SHA-256("")


class NodeReader:
    """Point reads of stored nodes inside one read transaction, with subtree folding."""

    def __init__(self, db: Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def node(self, level: int, index: int) -> bytes:
        """The stored hash of complete subtree ``(level, index)``.

        Raises:
            LogIntegrity: it is not stored (the database was damaged or edited).
        """
        row = self._db.execute(
            "SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index)
        ).fetchone()
        if row is None:
            raise LogError(
                "log.integrity",
                f"{self._path}: stored node ({level}, {index}) is missing",
                details={"level": level, "index": index},
            )
        return bytes(row[0])

    def range_hash(self, start: int, end: int) -> bytes:
        """MTH of leaves ``[start, end)``, where ``start`` is a multiple of a power of two >= the
        range's length (every range an RFC 9162 proof or root asks for). O(log n) reads."""
        if start == end:
            return EMPTY_ROOT
        parts = [self.node(level, index) for level, index in decompose(start, end)]
        result = parts.pop()
        while parts:  # RFC 9162 §2.1.1: MTH(D[n]) = H(0x01 || MTH(D[0:k]) || MTH(D[k:n]))
            result = node_hash(parts.pop(), result)
        return result


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


def frontier(db: Connection, path: Path, size: int) -> list[bytes]:
    """The right edge of the tree of ``size`` leaves: a complete subtree per set bit, left first."""
    reader = NodeReader(db, path)
    return [reader.node(level, index) for level, index in decompose(0, size)]


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


def stored_size(db: Connection) -> int:
    """The number of committed leaves (the highest level-0 index plus one)."""
    row = db.execute("SELECT max(idx) FROM log_nodes WHERE level = 0").fetchone()
    return 0 if row is None or row[0] is None else int(row[0]) + 1


def check_size(db: Connection, size: int | None) -> int:
    current = stored_size(db)
    if size is None:
        return current
    if not 0 <= size <= current:
        raise LogError(
            "log.size_out_of_range",
            f"tree size {size} is beyond the log (size {current})",
            details={"size": size, "log_size": current},
        )
    return size


def check_index(index: int, size: int) -> None:
    """Raises LogIndexOutOfRange unless ``0 <= index < size``."""
    if not 0 <= index < size:
        raise LogError(
            "log.index_out_of_range",
            f"leaf index {index} is not below tree size {size}",
            details={"index": index, "size": size},
        )


def extend(edge: list[bytes], first: int, hashes: list[bytes]) -> list[tuple[int, int, bytes]]:
    """Append ``hashes`` as leaves ``first, first+1, ...`` to a tree whose right edge is ``edge``
    (updated in place); returns the new node rows ``(level, index, hash)``, leaves included.

    Each leaf that is a right child folds with the subtree on its left (RFC 9162 §2.1.1), and so
    on up while the new node is itself a right child: about two rows per leaf.
    """
    rows: list[tuple[int, int, bytes]] = []
    for index, leaf in enumerate(hashes, start=first):
        rows.append((0, index, leaf))
        current, level = leaf, 0
        while (index >> level) & 1:
            current = node_hash(edge.pop(), current)
            level += 1
            rows.append((level, index >> level, current))
        edge.append(current)
    return rows
