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
- ``log_meta``: log ID, public key, key ID, optional key path.
"""

from __future__ import annotations

from pathlib import Path
from sqlite3 import Connection
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.types import RecordedHead
from affidavit.attest.stores.sqlite import Store

__all__ = ["COMPONENT", "MIGRATIONS", "insert_meta", "record_head", "store_for"]

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
)


def record_head(db: Connection, head: RecordedHead) -> None:
    """Record a head handed out (``log_heads``), in the caller's write transaction."""
    db.execute(
        "INSERT INTO log_heads(kind, tree_size, root_hash, timestamp, document) "
        "VALUES (?, ?, ?, ?, ?)",
        (head.kind, head.tree_size, head.root_hash, head.timestamp, head.document),
    )


def insert_meta(db: Connection, path: Path, meta: dict[str, str]) -> None:
    """Write a new log's metadata, refusing a database that already holds a log."""
    if db.execute("SELECT 1 FROM log_meta WHERE key = 'log_id'").fetchone():
        raise LogError("log.exists", f"{path}: already holds a transparency log")
    db.executemany("INSERT INTO log_meta(key, value) VALUES (?, ?)", meta.items())


def store_for(path: str | Path | Store, *, create: bool) -> tuple[Store, bool]:
    """The store at ``path`` (opened here: owned) or the one given (not owned)."""
    if isinstance(path, Store):
        return path, False
    return Store.open(path, create=create), True
