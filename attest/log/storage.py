"""The transparency log's storage in SQLite: its tables, and the rows a head or a new log writes.

Storage (tables prefixed ``log_`` so the log can share a database with the fact store and the
registry; schema component ``log``):

- ``log_nodes(level, idx, hash)``: the hash of every *complete* subtree, keyed by its height and its
  position at that height: ``(0, i)`` is leaf ``i``'s leaf hash, ``(L, j)`` covers leaves
  ``[j·2^L, (j+1)·2^L)``. A complete subtree never changes in an append-only log, so a node is
  written once, when its last leaf arrives, and is valid for every later tree size. Appends keep
  the right edge (one node per set bit of the size) and write about two rows per leaf
  (:mod:`affidavit.attest.log.tree` has the tree layout).
- ``log_entries(idx, data)``: leaf data, for :meth:`leaf` and :meth:`entries` (absent for leaves
  appended by hash only).
- ``log_heads``: every signed tree head and checkpoint handed out, in order.
- ``log_meta``: log ID, the *current* public key and key ID, optional key path (of the current
  key).
- ``log_keys`` (version 2): the key history, append-only: row 0 is the key the log was created
  with (no ``valid_from``: valid from the start); row ``n`` is the key the ``n``-th rotation
  introduced, with its ``valid_from`` (the rotation time T, RFC 3339 UTC), the tree it took over
  (``tree_size``, ``root_hash``) and the rotation ``statement`` signed by the key it replaced
  (:mod:`affidavit.attest.log.keys`). A key's window ends where the next row's begins, so windows
  can neither overlap nor leave a gap. Migrating a version-1 log copies its key into row 0.
- ``log_sequenced(idx, hash, data)`` (version 4): entries sequenced and not yet integrated into
  the tree (:mod:`affidavit.attest.log.sequencing`); ``log_leaves_by_hash`` and
  ``log_sequenced_by_hash`` find an entry by its leaf hash (deduplication).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from sqlite3 import Connection, IntegrityError
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.types import RecordedHead
from affidavit.attest.stores.sqlite import Store

__all__ = ["COMPONENT", "MIGRATIONS", "insert_meta", "record_head", "store_for", "update_meta"]

COMPONENT: Final = "log"

MIGRATIONS: Final = (
    """
    CREATE TABLE log_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE log_nodes (
        level INTEGER NOT NULL,
        idx   INTEGER NOT NULL,
        hash  BLOB NOT NULL,
        PRIMARY KEY (level, idx)
    ) WITHOUT ROWID;
    CREATE TABLE log_entries (idx INTEGER PRIMARY KEY, data BLOB NOT NULL);
    CREATE TABLE log_heads (
        seq       INTEGER PRIMARY KEY AUTOINCREMENT,
        kind      TEXT NOT NULL,
        tree_size INTEGER NOT NULL,
        root_hash TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        document  TEXT NOT NULL
    )
    """,
    # Version 2: the key history (docs/adr/0011-log-key-rotation.md). Never edit a migration
    # above: add one.
    """
    CREATE TABLE log_keys (
        seq        INTEGER PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        public_key TEXT NOT NULL UNIQUE,
        valid_from TEXT,
        tree_size  INTEGER,
        root_hash  TEXT,
        statement  TEXT
    );
    INSERT INTO log_keys(seq, key_id, public_key)
        SELECT 0, k.value, p.value FROM log_meta AS k, log_meta AS p
        WHERE k.key = 'key_id' AND p.key = 'public_key'
    """,
    # 3: heads looked up by kind and size (a registry instance serves the head another signed)
    """
    CREATE INDEX IF NOT EXISTS log_heads_by_size ON log_heads (kind, tree_size, seq)
    """,
    # 4: sequence, then integrate (issue 24, attest/log/sequencing.py): entries sequenced durably
    # before they join the tree, and leaf hashes looked up for deduplication
    """
    CREATE TABLE log_sequenced (
        idx  INTEGER PRIMARY KEY,
        hash BLOB NOT NULL,
        data BLOB NOT NULL
    );
    CREATE INDEX log_sequenced_by_hash ON log_sequenced (hash);
    CREATE INDEX log_leaves_by_hash ON log_nodes (hash) WHERE level = 0
    """,
)


_HEAD_COLUMNS: Final = "seq, kind, tree_size, root_hash, timestamp, document"


def head_row(row: Sequence[object]) -> RecordedHead:
    """A ``log_heads`` row (:data:`_HEAD_COLUMNS`) as a :class:`RecordedHead`."""
    seq, kind, size, root, stamp, document = row
    return RecordedHead(
        int(str(seq)), str(kind), int(str(size)), str(root), str(stamp), str(document)
    )


def head_of_size(db: Connection, kind: str, tree_size: int) -> RecordedHead | None:
    """The head of ``kind`` and exactly ``tree_size`` leaves recorded last, or None."""
    return _one_head(db, "kind = ? AND tree_size = ? ORDER BY seq DESC", (kind, tree_size))


def latest_head(db: Connection, kind: str) -> RecordedHead | None:
    """The head of ``kind`` recorded last (a cosigned copy counts as recorded), or None."""
    return _one_head(db, "kind = ? ORDER BY seq DESC", (kind,))


def largest_head(db: Connection, kind: str) -> RecordedHead | None:
    """The head of ``kind`` of the largest size, its latest record (a cosigned copy counts), or
    None (indexed: ``log_heads_by_size``)."""
    return _one_head(db, "kind = ? ORDER BY tree_size DESC, seq DESC", (kind,))


def _one_head(db: Connection, where: str, parameters: tuple[object, ...]) -> RecordedHead | None:
    row = db.execute(
        f"SELECT {_HEAD_COLUMNS} FROM log_heads WHERE {where} LIMIT 1",  # noqa: S608 - constants
        parameters,
    ).fetchone()
    return None if row is None else head_row(row)


def heads_after(db: Connection, since_seq: int, limit: int) -> list[RecordedHead]:
    """The heads recorded with ``seq > since_seq``, oldest first, at most ``limit``."""
    rows = db.execute(
        f"SELECT {_HEAD_COLUMNS} FROM log_heads "  # noqa: S608 - a constant column list
        "WHERE seq > ? ORDER BY seq LIMIT ?",
        (since_seq, limit),
    ).fetchall()
    return [head_row(row) for row in rows]


def insert_nodes(db: Connection, path: Path | str, rows: Iterable[tuple[int, int, bytes]]) -> None:
    """Store new complete-subtree hashes ``(level, idx, hash)`` in the caller's transaction."""
    try:
        db.executemany("INSERT INTO log_nodes(level, idx, hash) VALUES (?, ?, ?)", rows)
    except IntegrityError as e:  # pragma: no cover - only if the table was edited by hand
        raise LogError("log.integrity", f"{path}: node already present: {e}") from e


def insert_entries(db: Connection, first: int, data: Sequence[bytes]) -> None:
    """Store the data of leaves ``first, first + 1, ...`` in the caller's transaction."""
    db.executemany(
        "INSERT INTO log_entries(idx, data) VALUES (?, ?)",
        zip(range(first, first + len(data)), map(bytes, data), strict=True),
    )


def entry_data(db: Connection, start: int, end: int) -> list[bytes]:
    """The data of leaves ``[start, end)`` (the caller checked the range is in the tree).

    Raises:
        ``log.no_entry_data``: a leaf of the range was appended by hash only.
    """
    rows = db.execute(
        "SELECT idx, data FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx", (start, end)
    ).fetchall()
    if len(rows) != end - start:
        present = {int(r[0]) for r in rows}
        missing = next(i for i in range(start, end) if i not in present)
        raise LogError("log.no_entry_data", f"leaf {missing} was appended by hash; no data stored")
    return [bytes(r[1]) for r in rows]


def record_head(db: Connection, head: RecordedHead) -> None:
    """Record a head handed out (``log_heads``), in the caller's write transaction."""
    db.execute(
        "INSERT INTO log_heads(kind, tree_size, root_hash, timestamp, document) "
        "VALUES (?, ?, ?, ?, ?)",
        (head.kind, head.tree_size, head.root_hash, head.timestamp, head.document),
    )


def insert_meta(db: Connection, path: Path | str, meta: dict[str, str]) -> None:
    """Write a new log's metadata, refusing a database that already holds a log."""
    if db.execute("SELECT 1 FROM log_meta WHERE key = 'log_id'").fetchone():
        raise LogError("log.exists", f"{path}: already holds a transparency log")
    db.executemany("INSERT INTO log_meta(key, value) VALUES (?, ?)", meta.items())


def read_meta(db: Connection) -> dict[str, str]:
    """The log's metadata (``log_id``, ``public_key``, ``key_id``, ``key_path``)."""
    return {str(k): str(v) for k, v in db.execute("SELECT key, value FROM log_meta")}


def update_meta(db: Connection, values: dict[str, str | None]) -> None:
    """Set (or, for None, delete) metadata values in the caller's write transaction."""
    for key, value in values.items():
        if value is None:
            db.execute("DELETE FROM log_meta WHERE key = ?", (key,))
        else:
            db.execute(
                "INSERT INTO log_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


def store_for(path: str | Path | Store, *, create: bool) -> tuple[Store, bool]:
    """The store at ``path`` (opened here: owned) or the one given (not owned)."""
    if isinstance(path, Store):
        return path, False
    return Store.open(path, create=create), True
