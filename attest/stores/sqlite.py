"""Small SQLite helpers for everything in Affidavit that keeps state: the log, facts, registry.

>>> import tempfile, pathlib
>>> store = Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True)
>>> store.migrate("demo", ["CREATE TABLE demo_items (id INTEGER PRIMARY KEY, name TEXT)"])
1
>>> with store.write() as db:
...     _ = db.execute("INSERT INTO demo_items(name) VALUES ('x')")
>>> with store.read() as db:
...     db.execute("SELECT count(*) FROM demo_items").fetchone()[0]
1
>>> store.close()

The house settings, for every database:

- ``journal_mode=WAL``: readers never block the writer and see one committed snapshot per read
  transaction.
- ``synchronous=FULL``: in WAL mode every COMMIT fsyncs the log file, so a write that was
  acknowledged survives power loss, not only a process crash. ``NORMAL`` would be faster per
  commit, but the transparency log signs tree heads over what it acknowledged; a signed head over
  leaves that a power cut took away would be a fork. Writers batch (one transaction per batch), so
  the fsync is paid once per batch, not per row.
- One writer: every write is ``BEGIN IMMEDIATE`` (SQLite's RESERVED lock, across processes) inside a
  per-connection lock (across threads), with a busy timeout; a writer that cannot get the lock in
  time gets ``store.busy``.
- Private files: a database created here is mode 0600 in a folder made 0700
  (:func:`affidavit.attest.files.private_database`); SQLite gives its ``-wal``/``-shm`` the same
  mode.
- Damage: SQLite's "database disk image is malformed" (and a failed :meth:`Store.quick_check`) is
  ``store.corrupt``, never a bare ``sqlite3`` exception.
- ``schema_versions(component, version)``: each component (``log``, ``facts``, ``registry``...) owns
  its tables and migrates them with :meth:`Store.migrate`; a database written by a newer version is
  refused with ``store.schema_too_new`` instead of being misread.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Final
from urllib.parse import quote

from affidavit.attest.errors import StoreError
from affidavit.attest.files import private_database
from affidavit.attest.stores.postgres import (
    LOCK_TIMEOUT_S,
    WRITER_LEASE_S,
    PgBusy,
    PgConnection,
    PgUnavailable,
    connect,
    is_postgres_url,
    redact,
)
from affidavit.verify import errors

__all__ = ["DEFAULT_BUSY_TIMEOUT_S", "Store", "translate_database_error"]

DEFAULT_BUSY_TIMEOUT_S: Final = 30.0
_LOG = logging.getLogger("affidavit.store")

_VERSIONS_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_versions ("
    "component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


class Store:
    """One SQLite connection with the house settings (WAL, FULL sync, one writer, versioning).

    Use :meth:`write` for every change (one transaction per batch) and :meth:`read` for reads that
    must see one snapshot. The connection may be shared between threads: both context managers
    hold the store's lock. Not shareable across ``fork()``: open a new :class:`Store` in the child.
    """

    def __init__(self, path: Path | str, conn: sqlite3.Connection | PgConnection) -> None:
        self.path = path  # the file, or the redacted URL of a PostgreSQL database
        self.conn: Any = conn
        self.kind: Final = "postgresql" if isinstance(conn, PgConnection) else "sqlite"
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False
        self.serial = 0  # bumped at each write transaction's BEGIN: what a cache may key on

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        readonly: bool = False,
    ) -> Store:
        """Open the database at ``path``; with ``create=True`` make it (and its folder) if absent,
        private (0600 file, 0700 folder). ``readonly`` opens a reader that never writes (no
        schema table, no journal-mode change; the database must already be in WAL mode).

        Raises:
            ``store.missing``: the file does not exist and ``create`` is false.
            ``store.unreadable``: the file is not an SQLite database.
            ``store.busy``: the database stayed locked for ``timeout`` seconds while being set up.
        """
        target = Path(path)
        if create and not readonly:
            try:
                private_database(target)
            except OSError as e:
                raise StoreError(
                    "store.unreadable", f"{target}: cannot create: {e.strerror}"
                ) from e
        elif not target.is_file():
            raise StoreError("store.missing", f"{target}: no such database")
        mode = "ro" if readonly else ("rwc" if create else "rw")
        uri = f"file:{quote(str(target.resolve()))}?mode={mode}"
        with _translated(target):
            conn = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=timeout, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
                if readonly:
                    conn.execute("PRAGMA query_only=ON")
                    return cls(target, conn)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute(_VERSIONS_DDL)
            except BaseException:
                conn.close()
                raise
        return cls(target, conn)

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        timeout: float = LOCK_TIMEOUT_S,
        lease: float | None = WRITER_LEASE_S,
    ) -> Store:
        """Open the PostgreSQL database at ``url`` (``postgresql://user@host:port/db``) with the
        same surface: one writer at a time across every process on the database (an advisory
        lock), read snapshots, versioned migrations, and a connection that is made again after a
        fault (:mod:`affidavit.attest.stores.postgres`). ``timeout`` bounds every lock wait (the
        writer lock's: ``store.busy``); ``lease`` how long a writer may stay silent inside a
        write before the server frees the lock (None for a one-off job that may pause).

        Raises:
            ``store.unreadable``: psycopg is missing, or the server cannot be reached.
        """
        conn = connect(url, lock_timeout=timeout, lease=lease)
        try:
            conn.execute(_VERSIONS_DDL)
        except BaseException:
            conn.close()
            raise
        return cls(redact(url), conn)

    @classmethod
    def at(
        cls,
        location: str | Path,
        *,
        create: bool = False,
        readonly: bool = False,
        lease: float | None = WRITER_LEASE_S,
    ) -> Store:
        """:meth:`connect` for a ``postgresql://`` URL (with ``lease``), else :meth:`open` (a
        file path or ``sqlite:///path``)."""
        if is_postgres_url(location):
            return cls.connect(str(location), lease=lease)
        text = str(location)
        path = Path(text.removeprefix("sqlite://")) if text.startswith("sqlite://") else Path(text)
        return cls.open(path, create=create, readonly=readonly)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (durable on return); rolled back on any exception.

        Nested calls on the same thread join the outer transaction.

        Raises:
            ``store.busy``: another writer kept the lock past the busy timeout.
            ``usage.invalid``: called inside :meth:`read` (a read snapshot cannot be upgraded
                safely).
        """
        with self._transaction(writing=True) as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same committed snapshot.

        Inside :meth:`write` it joins the write transaction (and sees its own changes).
        """
        with self._transaction(writing=False) as conn:
            yield conn

    @contextmanager
    def _transaction(self, *, writing: bool) -> Iterator[sqlite3.Connection]:
        """One transaction on this thread, or the open one joined (a write may not join a read);
        committed on return, rolled back on any exception (:meth:`_rollback`). A read's COMMIT
        is skipped when nothing began one (SQLite starts a deferred transaction lazily)."""
        with self._lock:
            if self._depth:
                if writing and not self._writing:
                    raise errors.UsageError("a write cannot start inside a read transaction")
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            with _translated(self.path):
                self.conn.execute("BEGIN IMMEDIATE" if writing else "BEGIN DEFERRED")
            self._depth, self._writing = 1, writing
            if writing:
                self.serial += 1
            try:
                yield self.conn
            except BaseException:
                self._rollback()
                raise
            else:
                if writing or self.conn.in_transaction:
                    try:
                        with _translated(self.path):
                            self.conn.execute("COMMIT")
                    except BaseException:
                        self._rollback()
                        raise
            finally:
                self._depth, self._writing = 0, False

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One read statement outside any transaction (it sees one committed snapshot of its
        own): one round trip on PostgreSQL, where :meth:`read` costs three (BEGIN, the
        statement, COMMIT). Inside :meth:`read` or :meth:`write` it joins the transaction."""
        with self._lock, _translated(self.path):
            rows: list[tuple[Any, ...]] = self.conn.execute(sql, parameters).fetchall()
        return rows

    def _rollback(self) -> None:
        """End the open transaction after a failure, whatever the failure was: a failed
        statement never leaves the connection inside an aborted transaction (the next write
        would fail too). A ROLLBACK that fails itself (the connection is gone) is logged, not
        raised over the first error."""
        if not self.conn.in_transaction:
            return
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error as e:
            _LOG.warning("%s: ROLLBACK failed: %s", self.path, e)

    def quick_check(self) -> None:
        """``PRAGMA quick_check``: SQLite's page-level integrity check (O(size), no index
        cross-check).

        Raises:
            ``store.corrupt``: SQLite reports damage.
        """
        with _translated(self.path), self._lock:
            rows = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check").fetchall()]
        if rows != ["ok"]:
            raise StoreError(
                "store.corrupt",
                f"{self.path}: the database is damaged: {rows[0] if rows else 'no answer'}",
                details={"problems": rows[:5]},
            )

    def schema_version(self, component: str) -> int:
        """The stored schema version of ``component``; 0 when it has no tables here."""
        with self.read() as db:
            row = db.execute(
                "SELECT version FROM schema_versions WHERE component = ?", (component,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def migrate(self, component: str, migrations: Sequence[str]) -> int:
        """Bring ``component`` to version ``len(migrations)``; returns that version.

        ``migrations[i]`` is the SQL script taking version ``i`` to ``i + 1`` (statements separated
        by ``;``). Everything pending runs in one write transaction: either all of it or none.

        Raises:
            ``store.schema_too_new``: the database is at a version above ``len(migrations)``.
        """
        target = len(migrations)
        if self.schema_version(component) == target:
            return target  # the common case: no write lock taken just to open
        with self.write() as db:
            row = db.execute(
                "SELECT version FROM schema_versions WHERE component = ?", (component,)
            ).fetchone()
            current = 0 if row is None else int(row[0])
            if current > target:
                raise StoreError(
                    "store.schema_too_new",
                    f"{self.path}: {component} schema is version {current}; "
                    f"this Affidavit understands up to {target}",
                    details={"component": component, "found": current, "supported": target},
                )
            for script in migrations[current:]:
                for statement in _statements(script):
                    db.execute(statement)
            if current != target:
                db.execute(
                    "INSERT INTO schema_versions(component, version) VALUES (?, ?) "
                    "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                    (component, target),
                )
        return target


def _statements(script: str) -> Iterator[str]:
    """Split a migration script on ``;`` (our scripts hold no ``;`` inside literals or triggers)."""
    for part in script.split(";"):
        if part.strip():
            yield part


@contextmanager
def _translated(path: Path | str) -> Iterator[None]:
    """Turn sqlite3's errors at the boundary into the store's stable codes."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        raise translate_database_error(path, e) from e


def translate_database_error(
    path: Path | str, error: sqlite3.DatabaseError
) -> errors.AffidavitError:
    """The stable code for an sqlite3 error: damage is ``store.corrupt``, a file that is not a
    database or a lost PostgreSQL connection ``store.unreadable``, a held lock (SQLite's busy
    timeout, PostgreSQL's lock timeout, a deadlock) ``store.busy``."""
    text = str(error).removeprefix(f"{path}: ")  # PostgreSQL's errors name it already
    if isinstance(error, PgBusy):
        return StoreError("store.busy", f"{path}: {text}")
    if isinstance(error, PgUnavailable):
        return StoreError("store.unreadable", f"{path}: {text}")
    if "malformed" in text or "corrupt" in text:
        return StoreError("store.corrupt", f"{path}: the database is damaged: {text}")
    if isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreError("store.busy", f"{path}: {text}")
    return StoreError("store.unreadable", f"{path}: {text}")
