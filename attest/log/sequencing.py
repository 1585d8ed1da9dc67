"""Sequence, then integrate: entries get their index durably first and join the tree in batches
(private to :mod:`affidavit.attest.log.transparency`; docs/transparency.md "Writing to the log").

:func:`sequence_entries` gives each entry the next index in ``log_sequenced``, durable at COMMIT
(an entry whose leaf hash is in the log already gets its first index: deduplication);
:func:`integrate_pending` moves them, in index order, into the tree, never past a gap
(``log.integrity``). Both run under the store's one writer (docs/adr/0018).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.storage import insert_nodes
from affidavit.attest.log.tree import extend, frontier, stored_size
from affidavit.attest.stores.store import Connection, numbered
from affidavit.verify.crypto.merkle import leaf_hash

__all__ = [
    "MAX_INTEGRATE",
    "STATUS_SQL",
    "LogStatus",
    "Sequenced",
    "find_leaves",
    "integrate_all",
    "integrate_pending",
    "next_index",
    "sequence_entries",
    "status_of",
]

MAX_INTEGRATE: Final = 4096  # entries per integration: a bounded transaction (the writer's lease)
_CHUNK: Final = 400  # hashes per lookup statement


@dataclass(frozen=True, slots=True)
class Sequenced:
    """An entry's index, its RFC 9162 §2.1.1 leaf hash, and whether this call sequenced it
    (``False``: it was in the log already, at this first index)."""

    index: int
    leaf_hash: bytes
    created: bool


@dataclass(frozen=True, slots=True)
class LogStatus:
    """The tree's size, the next index to sequence, and the largest checkpoint size (0: none)."""

    tree_size: int
    next_index: int
    signed_size: int

    @property
    def pending(self) -> int:
        """Sequenced entries not integrated yet."""
        return self.next_index - self.tree_size


STATUS_SQL: Final = (
    "SELECT (SELECT max(idx) FROM log_nodes WHERE level = 0), "
    "(SELECT max(idx) FROM log_sequenced), "
    "(SELECT max(tree_size) FROM log_heads WHERE kind = 'checkpoint')"
)


def status_of(row: Sequence[object] | None) -> LogStatus:
    """The :class:`LogStatus` of a :data:`STATUS_SQL` row (one statement, all indexed)."""
    leaf, sequenced, signed = (None, None, None) if row is None else row
    size = int(str(leaf)) + 1 if leaf is not None else 0
    following = max(size, int(str(sequenced)) + 1) if sequenced is not None else size
    return LogStatus(size, following, int(str(signed)) if signed is not None else 0)


def next_index(db: Connection) -> int:
    """The index the next sequenced entry gets: past the tree and every sequenced entry."""
    return status_of(db.execute(STATUS_SQL).fetchone()).next_index


def find_leaves(db: Connection, hashes: Sequence[bytes]) -> dict[bytes, int]:
    """The first index of each of ``hashes`` in the log, as a leaf or a sequenced entry."""
    found: dict[bytes, int] = {}
    unique = list(dict.fromkeys(hashes))
    for offset in range(0, len(unique), _CHUNK):
        chunk = unique[offset : offset + _CHUNK]
        marks = numbered(1, len(chunk))
        sql = (
            "SELECT hash, min(idx) FROM log_nodes "  # noqa: S608 - marks only
            f"WHERE level = 0 AND hash IN ({marks}) GROUP BY hash UNION ALL "
            f"SELECT hash, min(idx) FROM log_sequenced WHERE hash IN ({marks}) GROUP BY hash"
        )
        for value, index in db.execute(sql, chunk):
            key = bytes(value)
            found[key] = min(int(index), found.get(key, int(index)))
    return found


def sequence_entries(
    db: Connection, entries: Sequence[bytes], following: int | None = None
) -> list[Sequenced]:
    """Give each entry its index in the caller's write transaction (module docstring), in
    order. ``following`` is :func:`next_index` when the caller knows it already."""
    hashes = [leaf_hash(bytes(data)) for data in entries]
    known = find_leaves(db, hashes)
    if following is None:
        following = next_index(db)
    placed: list[Sequenced] = []
    rows: list[tuple[int, bytes, bytes]] = []
    for data, value in zip(entries, hashes, strict=True):
        first = known.get(value)
        if first is not None:
            placed.append(Sequenced(first, value, False))
            continue
        known[value] = following
        rows.append((following, value, bytes(data)))
        placed.append(Sequenced(following, value, True))
        following += 1
    if rows:
        db.insert_rows("log_sequenced", ("idx", "hash", "data"), rows)
    return placed


def integrate_pending(
    db: Connection, path: Path | str, limit: int = MAX_INTEGRATE
) -> tuple[int, int]:
    """Move up to ``limit`` sequenced entries into the tree, in the caller's write transaction;
    returns ``(old size, new size)``.

    Raises:
        ``log.integrity``: the sequenced entries leave a gap (nothing is integrated).
    """
    size = stored_size(db)
    rows = db.execute(
        "SELECT idx, hash FROM log_sequenced WHERE idx >= $1 ORDER BY idx LIMIT $2",
        (size, max(1, limit)),
    ).fetchall()
    if not rows:
        return size, size
    indexes = [int(row[0]) for row in rows]
    if indexes != list(range(size, size + len(indexes))):
        raise LogError(
            "log.integrity",
            f"{path}: the sequenced entries do not continue the tree of size {size} "
            f"(next sequenced index {indexes[0]}): refusing to integrate past a gap",
            details={"tree_size": size, "next_sequenced": indexes[0]},
        )
    end = size + len(indexes)
    edge = frontier(db, path, size)
    insert_nodes(db, path, extend(edge, size, [bytes(row[1]) for row in rows]))  # RFC 9162 §2.1.1
    db.execute(
        "INSERT INTO log_entries(idx, data) SELECT idx, data FROM log_sequenced "
        "WHERE idx >= $1 AND idx < $2",
        (size, end),
    )
    db.execute("DELETE FROM log_sequenced WHERE idx < $1", (end,))
    return size, end


def integrate_all(db: Connection, path: Path | str) -> int:
    """Integrate every sequenced entry in the caller's write transaction; returns the size."""
    while True:
        old, new = integrate_pending(db, path)
        if old == new:
            return new
