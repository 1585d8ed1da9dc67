"""The PostgreSQL store: the store interface (:mod:`affidavit.attest.stores.store`) on a psycopg 3
connection, and the only module of Affidavit that imports psycopg
(docs/adr/0013-postgresql.md, docs/adr/0020-each-store-its-dialect.md).

Statements are PostgreSQL SQL as written, sent as they are (psycopg's raw cursor: ``$1, $2, ...``
are the server's own parameters; a ``%`` is a ``%``). Nothing is translated: a component gives its
PostgreSQL schema itself (:class:`~affidavit.attest.stores.store.Migrations`), and there is no
``PRAGMA`` and no ``sqlite_master`` here.

- **Transactions**: the connection is in autocommit mode and the store begins its own. The
  writer's (:meth:`PgConnection.begin` with ``writing``) is ``BEGIN`` plus
  ``pg_advisory_xact_lock`` on one key per database: one writer at a time across every instance
  on the database, released at COMMIT or ROLLBACK, which is what keeps the log gap-free and the
  fact graph acyclic under concurrent instances. A read snapshot is
  ``BEGIN ISOLATION LEVEL REPEATABLE READ``: every query of a read sees one snapshot.
- **Many rows**: :meth:`PgConnection.insert_rows` sends multi-row ``INSERT ... VALUES``
  statements (up to :data:`_ROWS_PER_INSERT` rows each), composed from the table and its
  columns; :meth:`PgConnection.executemany` runs its statement once per row.
- **Errors** are the project's own: a broken constraint is
  :class:`~affidavit.attest.errors.StoreIntegrityError`; a lock timeout, deadlock or
  serialization failure :class:`PgBusy` (``store.busy``); a lost connection :class:`PgUnavailable`
  (``store.unreadable``); the rest ``store.unreadable``. Each carries psycopg's message and the
  redacted URL (never the password), for the operator's log and the command line; the registry
  shows clients neither.
- **Integrity**: PostgreSQL checks its pages with its own checksums; the store's
  :meth:`~affidavit.attest.stores.store.Store.quick_check` has nothing to add here.

Faults (docs/postgresql.md "Operations", docs/adr/0013 §7):

- **Reconnect**: a connection found lost (the server restarted, the backend was terminated, the
  session's lease ran out) is made again at the next BEGIN, or at the next statement outside a
  transaction; a read (BEGIN, SELECT) that finds it lost runs once more on the new one. Never
  inside a transaction: its statements would run outside it. The statement that finds the
  connection lost inside one fails, the server has rolled the transaction back, and the caller's
  ROLLBACK ends it here. While the server cannot be reached, attempts are spaced 50 ms doubling
  to 1 s (:data:`BACKOFF_CAP_S`), each bounded by the connect timeout; between them statements
  fail at once.
- **Bounded lock waits**: every session has ``lock_timeout`` (:data:`LOCK_TIMEOUT_S`); a writer
  that does not get the writer lock in time gets :class:`PgBusy` and its BEGIN is rolled back, so
  no aborted transaction is left on the connection.
- **Lease**: a writer transaction sets ``idle_in_transaction_session_timeout``
  (:data:`WRITER_LEASE_S`): a holder of the writer lock that sends nothing for that long (a
  paused or partitioned instance) has its session ended by the server, which frees the lock. It
  must therefore not pause between statements inside a write; a one-off job that may (an import
  reading its files) connects with ``lease=None``.

psycopg is imported only when a ``postgresql://`` URL is opened (the ``[postgres]`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from affidavit.attest.errors import StoreError, StoreIntegrityError

__all__ = [
    "LOCK_TIMEOUT_S",
    "WRITER_LEASE_S",
    "PgBusy",
    "PgConnection",
    "PgUnavailable",
    "connect",
    "is_postgres_url",
    "open_database",
    "redact",
]

_LOG = logging.getLogger("affidavit.store")

# One advisory lock key for "the writer" of a database (pg_advisory_xact_lock takes a bigint):
# the first eight bytes of SHA-256("affidavit.store.writer"), as a signed integer.
WRITER_LOCK: Final = -0x2A5F0D6C1B7E3A91
CONNECT_TIMEOUT_S: Final = 5.0
BACKOFF_FIRST_S: Final = 0.05
BACKOFF_CAP_S: Final = 1.0
# How long a writer may stay silent inside its transaction before the server ends its session and
# frees the writer lock (a paused or partitioned instance stops the others this long at most),
# and how long any lock wait lasts before store.busy: longer than the lease, so a writer queued
# behind a silent holder gets the lock instead of an error (docs/postgresql.md "Operations").
WRITER_LEASE_S: Final = 5.0
LOCK_TIMEOUT_S: Final = 7.0
_SCHEMES: Final = ("postgresql://", "postgres://")
# Every component's schema version (Store.migrate), in PostgreSQL's DDL.
VERSIONS_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS schema_versions ("
    "component TEXT PRIMARY KEY, version BIGINT NOT NULL)"
)


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` is a ``postgresql://`` (or ``postgres://``) URL."""
    return isinstance(location, str) and location.startswith(_SCHEMES)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class _Rows:
    """The few cursor methods the stores use, over rows already fetched (or none)."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int = -1) -> None:
        self._rows = rows
        self._next = 0  # rows before it were handed out (an index: popping the front is O(n))
        self.rowcount = rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._next = self._rows[self._next :], len(self._rows)
        return rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while self._next < len(self._rows):
            self._next += 1
            yield self._rows[self._next - 1]


class PgBusy(StoreError):
    """The writer lock (or another lock) was not granted within the lock timeout, or the server
    cancelled the transaction to break a deadlock or a serialization conflict: retry later
    (``store.busy``)."""

    def __init__(self, message: str) -> None:
        super().__init__("store.busy", message)


class PgUnavailable(StoreError):
    """The connection is gone (the server restarted, the backend was terminated, the session's
    lease ran out) or cannot be made again yet (``store.unreadable``)."""

    def __init__(self, message: str) -> None:
        super().__init__("store.unreadable", message)


class PgConnection:
    """A psycopg 3 connection behind the store interface's
    :class:`~affidavit.attest.stores.store.Connection` (module docstring), that re-establishes
    itself after a fault (module docstring, "Faults").

    Used by one thread at a time (the stores' lock, or one database thread).
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        lock_timeout: float = LOCK_TIMEOUT_S,
        lease: float | None = WRITER_LEASE_S,
    ) -> None:
        self._url = url
        self.label = redact(url)
        self.connect_timeout = connect_timeout
        self.lock_timeout = lock_timeout
        self.lease = lease
        self.reconnects = 0  # how many times a lost connection was replaced
        self._conn: Any = None
        self._closed = False
        self._begun = False  # a transaction began (BEGIN ...) and was not ended by the caller
        self._writing = False  # ... and it holds the writer lock
        self._backoff = 0.0
        self._retry_at = 0.0

    # -- the connection and its replacement -----------------------------------------------

    def _open(self) -> Any:
        """A new server connection in autocommit mode, with the session's settings.

        Raises:
            psycopg.Error: it cannot be made.
        """
        import psycopg  # noqa: PLC0415 - psycopg is optional

        conn = psycopg.connect(
            _with_keepalives(self._url),
            autocommit=True,
            connect_timeout=max(2, int(self.connect_timeout)),
            cursor_factory=psycopg.RawCursor,  # $1, $2, ...: the server's own parameters
        )
        try:
            # Every lock wait of the session is bounded (the writer lock's too, store.busy).
            conn.execute(f"SET lock_timeout = {_ms(self.lock_timeout)}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _lost(self) -> bool:
        return bool(self._conn is None or self._conn.closed or self._conn.broken)

    def _live(self) -> Any:
        """The connection, made again when the last one was lost, at most once per backoff
        step (50 ms doubling to 1 s) so a database that is down is not hammered.

        Raises:
            ``store.unreadable``: closed by the caller, or it cannot be made (yet) (PgUnavailable).
        """
        if not self._lost():
            return self._conn
        if self._closed:
            raise PgUnavailable(f"{self.label}: the connection is closed")
        now = time.monotonic()
        if now < self._retry_at:
            raise PgUnavailable(
                f"{self.label}: the connection to the database was lost; "
                f"the next attempt in {self._retry_at - now:.2f} s"
            )
        import psycopg  # noqa: PLC0415 - psycopg is optional

        try:
            fresh = self._open()
        except psycopg.Error as e:
            self._backoff = min(max(2 * self._backoff, BACKOFF_FIRST_S), BACKOFF_CAP_S)
            self._retry_at = time.monotonic() + self._backoff
            raise PgUnavailable(f"{self.label}: cannot reconnect: {_first_line(e)}") from None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        _LOG.warning("%s: reconnected after a lost connection", self.label)
        self._conn, self._backoff, self._retry_at = fresh, 0.0, 0.0
        self.reconnects += 1
        return fresh

    def connect(self) -> PgConnection:
        """Make the first connection.

        Raises:
            ``store.unreadable``: the server cannot be reached or refuses the login (the message
                names the redacted URL).
        """
        import psycopg  # noqa: PLC0415 - psycopg is optional

        try:
            self._conn = self._open()
        except psycopg.Error as e:
            raise StoreError(
                "store.unreadable", f"{self.label}: cannot connect: {_first_line(e)}"
            ) from None
        return self

    # -- the store interface ----------------------------------------------------------------

    dialect: Final[Literal["postgresql"]] = "postgresql"

    @property
    def in_transaction(self) -> bool:
        """Inside BEGIN ... COMMIT: one the caller began and has not ended (even when the
        connection under it was lost: the caller still has to end it), or the server says so."""
        if self._begun:
            return True
        if self._lost():
            return False
        from psycopg.pq import TransactionStatus  # noqa: PLC0415 - psycopg is optional

        return bool(self._conn.info.transaction_status != TransactionStatus.IDLE)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Rows:
        """Run one statement; returns its rows (read whole: our queries are bounded).

        Outside a transaction a lost connection is made again first, and a read that finds it
        lost is run once more on the new one; inside a transaction never (module docstring).
        """
        values = tuple(parameters)
        if self._begun:
            return self._run(self._conn, sql, values)
        try:
            return self._run(self._live(), sql, values)
        except PgUnavailable:
            if not sql.lstrip()[:6].upper().startswith("SELECT") or self._closed:
                raise
        return self._run(self._live(), sql, values)  # a read: once more, reconnected

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _Rows:
        """Run one statement for each parameter row, one at a time.

        Never psycopg's ``executemany``: it pipelines, and a server waiting in the middle of a
        pipeline is not idle, so a writer paused there (SIGSTOP) would keep the writer lock past
        its lease (module docstring, "Lease"). Every statement here ends with a Sync.
        """
        conn = self._conn if self._begun else self._live()
        total = 0
        with self._translated(conn):
            for row in rows:
                total += max(0, conn.execute(sql, tuple(row) or None).rowcount)
        return _Rows([], total)

    def insert_rows(
        self,
        table: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        skip_existing: bool = False,
    ) -> int:
        """``INSERT INTO table (columns) VALUES (...), (...) [ON CONFLICT DO NOTHING]``, up to
        :data:`_ROWS_PER_INSERT` rows a statement (and the protocol's parameter limit); returns
        the rows inserted. ``table`` and ``columns`` are the caller's fixed names."""
        values = [tuple(r) for r in rows]
        if not values:
            return 0
        width = len(columns)
        step = max(1, min(_ROWS_PER_INSERT, _MAX_PARAMETERS // max(1, width)))
        head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "  # noqa: S608 - fixed names
        tail = " ON CONFLICT DO NOTHING" if skip_existing else ""
        conn = self._conn if self._begun else self._live()
        total = 0
        with self._translated(conn):
            for start in range(0, len(values), step):
                chunk = values[start : start + step]
                groups = ", ".join(
                    "(" + ", ".join(f"${i * width + j + 1}" for j in range(width)) + ")"
                    for i in range(len(chunk))
                )
                cursor = conn.execute(head + groups + tail, [v for row in chunk for v in row])
                total += max(0, cursor.rowcount)
        return total

    def begin(self, *, writing: bool) -> None:
        """The writer's transaction: the writer lock, with the lease (one round trip); else a
        snapshot. A new transaction may start on a new connection: the last one is over,
        whatever became of it. When the connection is found lost at BEGIN, nothing ran yet:
        BEGIN runs once more, reconnected. A BEGIN that fails (a lock timeout) leaves no
        transaction behind.

        Raises:
            ``store.busy``: the writer lock was not granted within the lock timeout.
            ``store.unreadable``: the connection is lost and cannot be made again.
        """
        if writing:
            lease = (
                ""
                if self.lease is None
                else (f"SET LOCAL idle_in_transaction_session_timeout = {_ms(self.lease)}; ")
            )
            text = f"BEGIN; {lease}SELECT pg_advisory_xact_lock({WRITER_LOCK})"
        else:
            text = "BEGIN ISOLATION LEVEL REPEATABLE READ"
        self._begun = self._writing = False
        for attempt in (1, 2):
            conn = self._live()
            try:
                self._run(conn, text, ())
            except PgUnavailable:
                if attempt == 2 or self._closed:
                    raise
                continue
            except BaseException:
                self._rollback(conn)
                raise
            self._begun, self._writing = True, writing
            break

    def commit(self) -> None:
        """COMMIT. On a lost connection the server has rolled the transaction back: the end of
        a read is then done; COMMIT of a write is refused.

        Raises:
            ``store.unreadable``: a write's connection was lost before COMMIT.
        """
        writing = self._writing
        self._begun = self._writing = False
        if self._lost():
            if writing:
                raise PgUnavailable(
                    f"{self.label}: the connection was lost before COMMIT; "
                    "the server rolled the transaction back"
                )
            return
        self._run(self._conn, "COMMIT", ())

    def rollback(self) -> None:
        """ROLLBACK (done already when the connection was lost: the server rolled it back)."""
        self._begun = self._writing = False
        if not self._lost():
            self._rollback(self._conn)

    def tables(self) -> set[str]:
        """The tables of the connection's current schema."""
        rows = self.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {str(row[0]) for row in rows}

    def quick_check(self) -> None:
        """Nothing to add: PostgreSQL checks its pages with its own checksums (module
        docstring, "Integrity")."""

    def _rollback(self, conn: Any) -> None:
        """ROLLBACK whatever is open; a connection that cannot is closed (made again next)."""
        import psycopg  # noqa: PLC0415 - psycopg is optional

        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            with contextlib.suppress(Exception):
                conn.close()

    def _run(self, conn: Any, statement: str, parameters: tuple[Any, ...]) -> _Rows:
        if conn is None or conn.closed or conn.broken:
            raise PgUnavailable(f"{self.label}: the connection to the database was lost")
        with self._translated(conn):
            cursor = conn.execute(statement, parameters or None)
            rows = cursor.fetchall() if cursor.description is not None else []
            return _Rows([tuple(r) for r in rows], cursor.rowcount)

    @contextmanager
    def _translated(self, conn: Any) -> Iterator[None]:
        """psycopg's errors as the project's (module docstring, "Errors")."""
        import psycopg  # noqa: PLC0415 - loaded already when a connection exists

        try:
            yield
        except psycopg.Error as e:
            message = f"{self.label}: {_first_line(e)}"
            if conn.closed or conn.broken:
                raise PgUnavailable(message) from e
            if getattr(e, "sqlstate", None) in _BUSY_STATES:
                raise PgBusy(message) from e
            if isinstance(e, psycopg.IntegrityError):
                raise StoreIntegrityError("store.unreadable", message) from e
            raise StoreError("store.unreadable", message) from e

    def close(self) -> None:
        """Close the connection; it is not made again."""
        self._closed = True
        if self._conn is not None:
            self._conn.close()


def connect(
    url: str,
    *,
    timeout: float = CONNECT_TIMEOUT_S,
    lock_timeout: float = LOCK_TIMEOUT_S,
    lease: float | None = WRITER_LEASE_S,
) -> PgConnection:
    """Connect to ``url`` in autocommit mode (the stores issue BEGIN themselves).

    ``timeout`` bounds each connection attempt, ``lock_timeout`` every lock wait (the writer
    lock's: ``store.busy``), ``lease`` how long a writer may stay silent inside its transaction
    before the server ends its session and frees the writer lock (None: no lease; for a
    one-off job that may pause between statements).

    Raises:
        ``store.unreadable``: psycopg is not installed, or the server cannot be
            reached or refuses the login (the message names the redacted URL).
    """
    try:
        import psycopg  # noqa: F401, PLC0415 - only for postgresql:// URLs (the [postgres] extra)
    except ImportError:
        raise StoreError(
            "store.unreadable", "PostgreSQL needs psycopg: pip install 'affidavit[postgres]'"
        ) from None
    return PgConnection(
        url, connect_timeout=timeout, lock_timeout=lock_timeout, lease=lease
    ).connect()


_ROWS_PER_INSERT: Final = 500
_MAX_PARAMETERS: Final = 65535  # the protocol's limit per statement

# SQLSTATEs that mean "not now": lock_not_available (lock_timeout), deadlock_detected,
# serialization_failure (PostgreSQL, Appendix A "Error Codes").
_BUSY_STATES: Final = frozenset({"55P03", "40P01", "40001"})

# libpq keepalives, unless the URL sets its own: a server that vanished without a word (a host
# down, a partition) is noticed within about 20 s instead of the kernel's two hours.
_KEEPALIVES: Final = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "3",
    "keepalives_count": "3",
}


def _with_keepalives(url: str) -> str:
    """``url`` as a libpq connection string with :data:`_KEEPALIVES` where it sets none, and an
    ``application_name`` naming this process (``affidavit-<pid>``: in ``pg_stat_activity`` an
    operator sees which instance holds the writer lock) unless the URL names one."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415 - optional

    given = conninfo_to_dict(url)
    defaults = {**_KEEPALIVES, "application_name": f"affidavit-{os.getpid()}"}
    return make_conninfo(url, **{k: v for k, v in defaults.items() if k not in given})


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0]


def open_database(
    url: str, *, timeout: float = LOCK_TIMEOUT_S, lease: float | None = WRITER_LEASE_S
) -> PgConnection:
    """The database at ``url`` (``postgresql://user@host:port/db``) ready for a store: connected
    (:func:`connect`, with ``timeout`` as every lock wait's bound) and with the table of schema
    versions.

    Raises:
        ``store.unreadable``: psycopg is missing, or the server cannot be reached.
    """
    conn = connect(url, lock_timeout=timeout, lease=lease)
    try:
        conn.execute(VERSIONS_DDL)
    except BaseException:
        conn.close()
        raise
    return conn
