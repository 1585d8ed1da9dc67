"""Tree layout of the transparency log over its node table (private to
:mod:`affidavit.attest.log.transparency`).

A node ``(level, index)`` is the hash of the complete subtree over leaves
``[index·2^level, (index+1)·2^level)``. Every subtree hash that an RFC 9162 root or proof needs
covers ``[start, end)`` with ``start`` a multiple of a power of two at least ``end - start``; such a
range is a left-to-right run of at most log2(n) complete subtrees (:func:`decompose`), folded right
to left. Which ranges a proof is made of is planned by :mod:`affidavit.verify.crypto.merkle`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.stores.store import Connection, numbered
from affidavit.verify.crypto.merkle import EMPTY_ROOT, decompose, node_hash, subtree_hash

__all__ = [
    "EMPTY_ROOT",
    "NodeReader",
    "check_index",
    "check_size",
    "extend",
    "frontier",
    "stored_size",
]

_PREFETCH_CHUNK: Final = 400  # keys per statement (well under SQLite's 32,766 parameters)


class NodeReader:
    """Point reads of stored nodes inside one read transaction, with subtree folding;
    :meth:`prefetch` reads a root's or proof's O(log n) nodes in one round trip."""

    def __init__(self, db: Connection, path: Path | str) -> None:
        self._db = db
        self._path = path
        self._cache: dict[tuple[int, int], bytes] = {}

    def node(self, level: int, index: int) -> bytes:
        """The stored hash of complete subtree ``(level, index)``.

        Raises:
            ``log.integrity``: it is not stored (the database was damaged or edited).
        """
        cached = self._cache.get((level, index))
        if cached is not None:
            return cached
        row = self._db.execute(
            "SELECT hash FROM log_nodes WHERE level = $1 AND idx = $2", (level, index)
        ).fetchone()
        if row is None:
            raise _missing(self._path, level, index)
        return bytes(row[0])

    def prefetch(self, keys: Iterable[tuple[int, int]]) -> None:
        """Read and keep the nodes ``keys``; a missing one is reported when read (:meth:`node`)."""
        wanted = sorted({key for key in keys if key not in self._cache})
        for offset in range(0, len(wanted), _PREFETCH_CHUNK):
            chunk = wanted[offset : offset + _PREFETCH_CHUNK]
            by_level: dict[int, list[int]] = {}
            for level, index in chunk:
                by_level.setdefault(level, []).append(index)
            clauses: list[str] = []
            params: list[int] = []
            for level, indexes in by_level.items():
                at = len(params) + 1
                clauses.append(f"(level = ${at} AND idx IN ({numbered(at + 1, len(indexes))}))")
                params += [level, *indexes]
            sql = "SELECT level, idx, hash FROM log_nodes WHERE " + " OR ".join(clauses)  # noqa: S608 - marks only
            for level, index, value in self._db.execute(sql, params):
                self._cache[int(level), int(index)] = bytes(value)

    def prefetch_ranges(self, ranges: Iterable[tuple[int, int]]) -> None:
        """:meth:`prefetch` the nodes every range ``[start, end)`` of ``ranges`` folds."""
        self.prefetch(key for start, end in ranges for key in decompose(start, end))

    def range_hash(self, start: int, end: int) -> bytes:
        """MTH of leaves ``[start, end)``, where ``start`` is a multiple of a power of two >= the
        range's length (every range an RFC 9162 proof or root asks for). O(log n) reads."""
        keys = decompose(start, end)
        if len(keys) > 1:
            self.prefetch(keys)
        return subtree_hash(start, end, self.node)


def frontier(db: Connection, path: Path | str, size: int) -> list[bytes]:
    """The right edge of the tree of ``size`` leaves: a complete subtree per set bit, left first
    (read in one statement)."""
    reader = NodeReader(db, path)
    keys = decompose(0, size)
    reader.prefetch(keys)
    return [reader.node(level, index) for level, index in keys]


def _missing(path: Path | str, level: int, index: int) -> LogError:
    return LogError(
        "log.integrity",
        f"{path}: stored node ({level}, {index}) is missing",
        details={"level": level, "index": index},
    )


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
    (updated in place); returns the new node rows ``(level, index, hash)``: each right child
    folds with its left sibling (RFC 9162 §2.1.1), about two rows per leaf.
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
