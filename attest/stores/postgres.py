"""The PostgreSQL store: the store interface (:mod:`affidavit.attest.stores.store`) on a psycopg 3
connection, and the only module of Affidavit that imports psycopg
(docs/adr/0013-postgresql.md, docs/adr/0020-each-store-its-dialect.md).

Statements are PostgreSQL SQL sent as written (psycopg's raw cursor: ``$1, $2, ...`` are the
server's own parameters). The connection is in autocommit mode; the writer's transaction holds
``pg_advisory_xact_lock`` on one key per database (one writer across every instance), a read is
one ``REPEATABLE READ`` snapshot. PostgreSQL checks its pages with its own checksums.

- **Errors**: a broken constraint is :class:`~affidavit.attest.errors.StoreIntegrityError`; a
  lock timeout, deadlock or serialization failure ``store.busy``; a lost connection
  :class:`PgUnavailable`; the rest ``store.unreadable``. Messages name the redacted URL.
- **Reconnect** (docs/adr/0013 §7): at the next BEGIN or statement outside a transaction, never
  inside one (the server has rolled it back; the caller's ROLLBACK ends it here); a read that
  found it lost runs once more. Attempts are spaced 50 ms doubling to :data:`BACKOFF_CAP_S`.
- **Lease**: a writer sets ``idle_in_transaction_session_timeout`` (:data:`WRITER_LEASE_S`), so
  a silent holder of the writer lock has its session ended by the server; ``lease=None`` for a
  one-off job that may pause. Every lock wait is bounded by :data:`LOCK_TIMEOUT_S`.

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
    "PgConnection",
    "PgUnavailable",
    "connect",
    "is_postgres_url",
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
        self._rows = iter(rows)
        self.rowcount = rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        return next(self._rows, None)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self._rows


class PgUnavailable(StoreError):
    """The connection is gone or cannot be made again yet (``store.unreadable``)."""

    def __init__(self, message: str) -> None:
        super().__init__("store.unreadable", message)


class PgConnection:
    """A psycopg 3 connection as a :class:`~affidavit.attest.stores.store.Connection`, made
    again after a fault (module docstring). Used by one thread at a time.
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
        self._conn: Any = None
        self._closed = False
        self._begun = False  # a transaction began (BEGIN ...) and was not ended by the caller
        self._writing = False  # ... and it holds the writer lock
        self._backoff = 0.0
        self._retry_at = 0.0

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
        """The connection, made again when lost, at most once per backoff step.

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
        return fresh

    dialect: Final[Literal["postgresql"]] = "postgresql"

    @property
    def in_transaction(self) -> bool:
        """Inside a transaction the caller began and has not ended (even on a lost
        connection: the caller still has to end it), or one the server reports."""
        if self._begun:
            return True
        if self._lost():
            return False
        from psycopg.pq import TransactionStatus  # noqa: PLC0415 - psycopg is optional

        return bool(self._conn.info.transaction_status != TransactionStatus.IDLE)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Rows:
        """Run one statement; returns its rows, read whole (our queries are bounded). A read
        outside a transaction that finds the connection lost runs once more (module docstring).
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
        """Run one statement per parameter row, one at a time: never psycopg's pipelining
        ``executemany``, since a writer paused mid-pipeline is not idle and would keep the
        writer lock past its lease (module docstring, "Lease")."""
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
        """Multi-row ``INSERT`` statements of up to :data:`_ROWS_PER_INSERT` rows (and the
        protocol's parameter limit); returns the rows inserted."""
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
        """The writer's transaction (the writer lock and the lease, one round trip), else a
        snapshot. A BEGIN that finds the connection lost runs once more, reconnected (nothing
        ran yet); one that fails leaves no transaction behind.

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
        """COMMIT. On a lost connection the server has rolled back: a read is then done, a
        write refused.

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
        """Nothing to add: PostgreSQL checks its pages with its own checksums."""

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
                raise StoreError("store.busy", message) from e
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
    """Connect to ``url``. ``timeout`` bounds each connection attempt, ``lock_timeout`` every
    lock wait (``store.busy``), ``lease`` a writer's silence (module docstring, "Lease").

    Raises:
        ``store.unreadable``: psycopg is not installed, or the server cannot be
            reached or refuses the login (the message names the redacted URL).
    """
    try:
        import psycopg  # noqa: PLC0415 - only for postgresql:// URLs (the [postgres] extra)
    except ImportError:
        raise StoreError(
            "store.unreadable", "PostgreSQL needs psycopg: pip install 'affidavit[postgres]'"
        ) from None
    conn = PgConnection(url, connect_timeout=timeout, lock_timeout=lock_timeout, lease=lease)
    try:
        conn._conn = conn._open()  # the first connection; later ones are _live()'s
    except psycopg.Error as e:
        raise StoreError(
            "store.unreadable", f"{conn.label}: cannot connect: {_first_line(e)}"
        ) from None
    return conn


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
    """``url`` as a libpq connection string with :data:`_KEEPALIVES` and an ``application_name``
    (``affidavit-<pid>``: ``pg_stat_activity`` shows who holds the writer lock) where it sets
    none."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: PLC0415 - optional

    given = conninfo_to_dict(url)
    defaults = {**_KEEPALIVES, "application_name": f"affidavit-{os.getpid()}"}
    return make_conninfo(url, **{k: v for k, v in defaults.items() if k not in given})


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0]
