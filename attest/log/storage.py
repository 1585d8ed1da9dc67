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
"""

from __future__ import annotations

from pathlib import Path
from sqlite3 import Connection
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
)


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
