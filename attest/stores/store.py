"""The store interface: what every caller of a database uses, whichever database it is
(docs/adr/0020-each-store-its-dialect.md).

>>> import tempfile, pathlib
>>> store = Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True)
>>> store.migrate("demo", Migrations.same("CREATE TABLE demo_items (id INTEGER PRIMARY KEY)"))
1
>>> with store.write() as db:
...     _ = db.execute("INSERT INTO demo_items(id) VALUES ($1)", (7,))
>>> store.query("SELECT id FROM demo_items")
[(7,)]
>>> store.close()

One :class:`Store` holds one :class:`Connection` (:mod:`.sqlite` or :mod:`.postgres`, each the
only importer of its driver). A caller writes one SQL text where it means the same in both
databases, gives both spellings where they differ (:class:`Migrations`, or :attr:`Store.kind`),
and catches :class:`~affidavit.attest.errors.StoreError`, never a driver's error. Nothing
rewrites a statement on its way to the database.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Protocol

from affidavit.attest.errors import StoreError
from affidavit.attest.stores.postgres import (
    LOCK_TIMEOUT_S,
    WRITER_LEASE_S,
    connect,
    is_postgres_url,
    redact,
)
from affidavit.attest.stores.sqlite import SqliteConnection
from affidavit.verify import errors

__all__ = [
    "LOCK_TIMEOUT_S",
    "WRITER_LEASE_S",
    "Connection",
    "Dialect",
    "Migrations",
    "Rows",
    "Store",
    "is_postgres_url",
    "numbered",
]

Dialect = Literal["sqlite", "postgresql"]
_LOG = logging.getLogger("affidavit.store")


class Rows(Protocol):
    """The rows of one statement."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed (-1 when the database does not say)."""

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None."""

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every row left."""

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        """The rows left, one at a time."""


class Connection(Protocol):
    """One database connection, as :meth:`Store.read` and :meth:`Store.write` hand it out. Every
    method raises :class:`~affidavit.attest.errors.StoreError`, never a driver's error."""

    @property
    def dialect(self) -> Dialect:
        """The database this connection speaks."""

    @property
    def in_transaction(self) -> bool:
        """Inside a transaction."""

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Rows:
        """Run one statement; ``$1`` is ``parameters[0]``."""

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Rows:
        """Run one statement once per parameter row (an INSERT: in as few round trips as the
        database allows); ``rowcount`` is the total."""

    def insert_rows(
        self,
        table: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        skip_existing: bool = False,
    ) -> int:
        """Insert ``rows`` into ``table`` (``table`` and ``columns``: the caller's fixed names),
        leaving out rows whose key is taken with ``skip_existing``; returns the rows inserted."""

    def begin(self, *, writing: bool) -> None:
        """Start the writer's transaction (one at a time across every process) or a snapshot."""

    def commit(self) -> None:
        """Commit the open transaction (durable on return)."""

    def rollback(self) -> None:
        """Roll the open transaction back."""

    def tables(self) -> set[str]:
        """The tables of the database (of its current schema on PostgreSQL)."""

    def quick_check(self) -> None:
        """The database's own page-level check, where it has one (SQLite's ``quick_check``).

        Raises:
            ``store.corrupt``: the database reports damage.
        """

    def close(self) -> None:
        """Close the connection."""


def numbered(first: int, count: int) -> str:
    """``$first, ..., $(first + count - 1)``: the placeholders of an ``IN (...)`` list.

    >>> numbered(2, 3)
    '$2, $3, $4'
    """
    return ", ".join(f"${i}" for i in range(first, first + count))


@dataclass(frozen=True, slots=True)
class Migrations:
    """The schema of one component in each store's own DDL: ``sqlite[i]`` and ``postgresql[i]``
    take version ``i`` to ``i + 1`` (scripts of statements separated by ``;``). Never edit a
    step once released: add one."""

    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.sqlite) != len(self.postgresql):
            raise errors.UsageError("each migration step needs both spellings")

    @classmethod
    def same(cls, *steps: str) -> Migrations:
        """Steps whose text means the same in both databases."""
        return cls(steps, steps)

    def __len__(self) -> int:
        return len(self.sqlite)

    def __getitem__(self, steps: slice) -> Migrations:
        """The first steps only (``migrations[:2]``: a database at an older version)."""
        return Migrations(self.sqlite[steps], self.postgresql[steps])

    def steps(self, dialect: Dialect) -> tuple[str, ...]:
        """The steps in ``dialect``'s spelling."""
        return self.sqlite if dialect == "sqlite" else self.postgresql


# Every component's schema version (Store.migrate), made when a database is opened for writing.
_VERSIONS: Final = Migrations(
    sqlite=(
        "CREATE TABLE IF NOT EXISTS schema_versions ("
        "component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    ),
    postgresql=(
        "CREATE TABLE IF NOT EXISTS schema_versions ("
        "component TEXT PRIMARY KEY, version BIGINT NOT NULL)",
    ),
)


def _with_versions(conn: Connection) -> Connection:
    """``conn`` with the table of schema versions made (closed if that fails)."""
    try:
        conn.execute(_VERSIONS.steps(conn.dialect)[0])
    except BaseException:
        conn.close()
        raise
    return conn


class Store:
    """One database connection with the house rules: one writer at a time (:meth:`write`), read
    snapshots (:meth:`read`), versioned migrations. Threads may share it (both hold the store's
    lock); a ``fork()``ed child opens its own."""

    def __init__(self, path: Path | str, conn: Connection) -> None:
        self.path = path  # the file, or the redacted URL of a PostgreSQL database
        self.conn: Connection = conn
        self.kind: Final[Dialect] = conn.dialect  # the database this store speaks
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
        timeout: float | None = None,
        readonly: bool = False,
    ) -> Store:
        """The SQLite store at ``path``.

        Raises:
            as :meth:`.sqlite.SqliteConnection.open_database`.
        """
        conn = SqliteConnection.open_database(
            path, create=create, timeout=timeout, readonly=readonly
        )
        return cls(Path(path), conn if readonly else _with_versions(conn))

    @classmethod
    def connect(
        cls, url: str, *, timeout: float = LOCK_TIMEOUT_S, lease: float | None = WRITER_LEASE_S
    ) -> Store:
        """The PostgreSQL store at ``url`` (``postgresql://user@host:port/db``), reconnecting
        after a fault (:mod:`.postgres`). ``timeout`` bounds every lock wait (``store.busy``);
        ``lease`` is how long a writer may stay silent inside a write before the server frees
        the lock (None for a one-off job that may pause).

        Raises:
            ``store.unreadable``: psycopg is missing, or the server cannot be reached.
        """
        return cls(redact(url), _with_versions(connect(url, lock_timeout=timeout, lease=lease)))

    @classmethod
    def at(
        cls,
        location: str | Path,
        *,
        create: bool = False,
        readonly: bool = False,
        lease: float | None = WRITER_LEASE_S,
    ) -> Store:
        """:meth:`connect` for a ``postgresql://`` URL, else :meth:`open` (a path or
        ``sqlite:///path``).

        Raises:
            as :meth:`open` and :meth:`connect`.
        """
        if is_postgres_url(location):
            return cls.connect(str(location), lease=lease)
        path = Path(str(location).removeprefix("sqlite://"))
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
    def write(self) -> Iterator[Connection]:
        """The writer's transaction ... ``COMMIT`` (durable on return); rolled back on any
        exception. Nested calls on the same thread join the outer transaction.

        Raises:
            ``store.busy``: another writer kept the lock past the busy or lock timeout.
            ``usage.invalid``: called inside :meth:`read` (a read snapshot cannot be upgraded
                safely).
        """
        with self._transaction(writing=True) as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction: every query inside sees the same committed snapshot.

        Inside :meth:`write` it joins the write transaction (and sees its own changes).
        """
        with self._transaction(writing=False) as conn:
            yield conn

    @contextmanager
    def _transaction(self, *, writing: bool) -> Iterator[Connection]:
        """One transaction, or the open one joined (a write may not join a read). A read's
        COMMIT is skipped when nothing began one (SQLite starts a deferred transaction lazily)."""
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
            self.conn.begin(writing=writing)
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
                        self.conn.commit()
                    except BaseException:
                        self._rollback()
                        raise
            finally:
                self._depth, self._writing = 0, False

    def query(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One read statement outside any transaction (one round trip on PostgreSQL, where
        :meth:`read` costs three); inside :meth:`read` or :meth:`write` it joins theirs."""
        with self._lock:
            return self.conn.execute(sql, parameters).fetchall()

    def _rollback(self) -> None:
        """End the open transaction after a failure, so that no aborted transaction is left
        on the connection; a ROLLBACK that fails too is logged, not raised over the first."""
        if not self.conn.in_transaction:
            return
        try:
            self.conn.rollback()
        except StoreError as e:
            _LOG.warning("%s: ROLLBACK failed: %s", self.path, e)

    def quick_check(self) -> None:
        """The database's own page-level check, where it has one (:meth:`Connection.quick_check`).

        Raises:
            ``store.corrupt``: the database reports damage.
        """
        with self._lock:
            self.conn.quick_check()

    def schema_version(self, component: str) -> int:
        """The stored schema version of ``component`` (0: none)."""
        rows = self.query("SELECT version FROM schema_versions WHERE component = $1", (component,))
        return int(rows[0][0]) if rows else 0

    def migrate(self, component: str, migrations: Migrations) -> int:
        """Bring ``component`` to version ``len(migrations)`` in one write transaction;
        returns that version.

        Raises:
            ``store.schema_too_new``: the database is at a version above ``len(migrations)``.
        """
        steps = migrations.steps(self.kind)
        target = len(steps)
        if self.schema_version(component) == target:
            return target  # the common case: no write lock taken just to open
        with self.write() as db:
            row = db.execute(
                "SELECT version FROM schema_versions WHERE component = $1", (component,)
            ).fetchone()
            current = 0 if row is None else int(row[0])
            if current > target:
                raise StoreError(
                    "store.schema_too_new",
                    f"{self.path}: {component} schema is version {current}; "
                    f"this Affidavit understands up to {target}",
                    details={"component": component, "found": current, "supported": target},
                )
            for script in steps[current:]:
                for statement in _statements(script):
                    db.execute(statement)
            if current != target:
                db.execute(
                    "INSERT INTO schema_versions(component, version) VALUES ($1, $2) "
                    "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                    (component, target),
                )
        return target


def _statements(script: str) -> Iterator[str]:
    """Split a migration script on ``;`` (our scripts hold no ``;`` inside literals or triggers)."""
    for part in script.split(";"):
        if part.strip():
            yield part
