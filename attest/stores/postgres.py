"""PostgreSQL under the stores' one SQL dialect: a psycopg 3 connection that speaks like sqlite3.

Every store of Affidavit (the log, the fact store, the registry's tables, docs/formats.md §5 and
§6) is written once, in the SQL subset SQLite and PostgreSQL share, against the small DB-API
surface of :mod:`sqlite3` (``execute``, ``executemany``, ``fetchone``, ``fetchall``, iteration,
``rowcount``, ``in_transaction``, ``BEGIN``/``COMMIT``/``ROLLBACK`` statements). This module gives
a PostgreSQL connection that surface (docs/adr/0013-postgresql.md), so the stores do not fork:

- **Parameters**: ``?`` placeholders become ``%s`` (literal ``%`` doubled); our SQL has no ``?``
  inside string literals.
- **Transactions**: the connection is in autocommit mode and the stores issue their own
  ``BEGIN``. ``BEGIN IMMEDIATE`` (SQLite: one writer across processes) becomes ``BEGIN`` plus
  ``pg_advisory_xact_lock`` on one key per database: one writer at a time across every instance
  on the database, released at COMMIT or ROLLBACK, which is what keeps the log gap-free and the
  fact graph acyclic under concurrent instances. ``BEGIN DEFERRED`` (a read snapshot) becomes
  ``BEGIN ISOLATION LEVEL REPEATABLE READ``: every query of a read sees one snapshot.
- **DDL**: ``BLOB`` is ``BYTEA``, ``INTEGER`` is ``BIGINT`` (tree sizes pass 2^31),
  ``REAL`` is ``DOUBLE PRECISION``, ``INTEGER PRIMARY KEY AUTOINCREMENT`` an identity column,
  ``WITHOUT ROWID`` is dropped; ``INSERT OR IGNORE`` is ``INSERT ... ON CONFLICT DO NOTHING``.
- **PRAGMA**: none applies; ``PRAGMA quick_check`` answers ``ok`` (PostgreSQL checks pages with
  its own checksums), the others nothing. ``sqlite_master`` names the schema's tables.
- **Errors** keep the stores' one error path: psycopg's integrity errors are raised as
  :class:`sqlite3.IntegrityError`; a lock timeout, deadlock or serialization failure as
  :class:`PgBusy` (``store.busy``); a lost connection as :class:`PgUnavailable`
  (``store.unreadable``), both :class:`sqlite3.OperationalError`; the rest as
  :class:`sqlite3.DatabaseError`. Each carries psycopg's message and the redacted URL (never the
  password), for the operator's log and the command line; the registry shows clients neither.

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
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from affidavit.attest.errors import StoreError

__all__ = [
    "LOCK_TIMEOUT_S",
    "WRITER_LEASE_S",
    "PgBusy",
    "PgConnection",
    "PgUnavailable",
    "connect",
    "is_postgres_url",
    "redact",
    "translate",
]

_LOG = logging.getLogger("affidavit.store")

# One advisory lock key for "the writer" of a database (pg_advisory_xact_lock takes a bigint):
# the first eight bytes of SHA-256("affidavit.store.writer"), as a signed integer.
WRITER_LOCK: Final = -0x2A5F0D6C1B7E3A91
# How long a writer may stay silent inside its transaction before the server ends its session and
# frees the writer lock (a paused or partitioned instance stops the others this long at most),
# and how long any lock wait lasts before store.busy: longer than the lease, so a writer queued
# behind a silent holder gets the lock instead of an error.
WRITER_LEASE_S: Final = 5.0
LOCK_TIMEOUT_S: Final = 7.0
CONNECT_TIMEOUT_S: Final = 5.0
BACKOFF_FIRST_S: Final = 0.05
BACKOFF_CAP_S: Final = 1.0
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


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """The PostgreSQL spelling of one statement of the stores' dialect (module docstring)."""
    text = sql.strip()
    upper = text.upper()
    if upper.startswith("CREATE ") or upper.startswith("ALTER "):
        text = re.sub(
            r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
            text,
            flags=re.IGNORECASE,
        )
        text = re.sub(r"\)\s*WITHOUT\s+ROWID", ")", text, flags=re.IGNORECASE)
        text = re.sub(r"\bBLOB\b", "BYTEA", text, flags=re.IGNORECASE)
        text = re.sub(r"\bINTEGER\b", "BIGINT", text, flags=re.IGNORECASE)
        text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text, flags=re.IGNORECASE)
    if re.match(r"INSERT\s+OR\s+IGNORE\s+INTO\b", text, flags=re.IGNORECASE):
        text = re.sub(r"^INSERT\s+OR\s+IGNORE\s+INTO", "INSERT INTO", text, flags=re.IGNORECASE)
        text += " ON CONFLICT DO NOTHING"
    text = text.replace(
        "sqlite_master",
        "(SELECT tablename AS name FROM pg_tables"
        " WHERE schemaname = current_schema()) AS sqlite_master",
    )
    return text.replace("%", "%%").replace("?", "%s")


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


class PgBusy(sqlite3.OperationalError):
    """The writer lock (or another lock) was not granted within the lock timeout, or the server
    cancelled the transaction to break a deadlock or a serialization conflict: retry later
    (``store.busy``)."""


class PgUnavailable(sqlite3.OperationalError):
    """The connection is gone (the server restarted, the backend was terminated, the session's
    lease ran out) or cannot be made again yet (``store.unreadable``)."""


class PgConnection:
    """A psycopg 3 connection with the sqlite3 surface the stores use (module docstring), that
    re-establishes itself after a fault (module docstring, "Faults").

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
            PgUnavailable: closed by the caller, or it cannot be made (yet).
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

    # -- the sqlite3 surface ----------------------------------------------------------------

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
        head = sql.lstrip()[:24].upper()
        if head.startswith("PRAGMA"):
            return _Rows([("ok",)] if "QUICK_CHECK" in sql.upper() else [])
        if head.startswith("BEGIN"):
            return self._begin(head)
        if head.startswith(("COMMIT", "END")):
            return self._end(commit=True)
        if head.startswith("ROLLBACK"):
            return self._end(commit=False)
        statement, values = translate(sql), tuple(parameters)
        if self._begun:
            return self._run(self._conn, statement, values)
        try:
            return self._run(self._live(), statement, values)
        except PgUnavailable:
            if not head.startswith("SELECT") or self._closed:
                raise
        return self._run(self._live(), statement, values)  # a read: once more, reconnected

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _Rows:
        """Run one statement for each parameter row: an INSERT as multi-row INSERTs (up to
        :data:`_ROWS_PER_INSERT` rows each), anything else row by row.

        Never psycopg's ``executemany``: it pipelines, and a server waiting in the middle of a
        pipeline is not idle, so a writer paused there (SIGSTOP) would keep the writer lock past
        its lease (module docstring, "Lease"). Every statement here ends with a Sync.
        """
        statement, values = translate(sql), [tuple(r) for r in rows]
        conn = self._conn if self._begun else self._live()
        total = 0
        insert = _MULTI_ROW.match(statement)
        with self._translated(conn):
            if insert is not None and values:
                head, group, tail = insert.group(1), insert.group(2), insert.group(3) or ""
                step = max(1, min(_ROWS_PER_INSERT, _MAX_PARAMETERS // max(1, len(values[0]))))
                for start in range(0, len(values), step):
                    chunk = values[start : start + step]
                    text = head + ", ".join([group] * len(chunk)) + tail
                    cursor = conn.execute(text, [v for row in chunk for v in row])
                    total += max(0, cursor.rowcount)
            else:
                for row in values:
                    cursor = conn.execute(statement, row or None)
                    total += max(0, cursor.rowcount)
        return _Rows([], total)

    def _begin(self, head: str) -> _Rows:
        """``BEGIN IMMEDIATE``: the writer lock, with the lease (one round trip); ``BEGIN
        DEFERRED``: a snapshot. A new transaction may start on a new connection: the last one is
        over, whatever became of it. When the connection is found lost at BEGIN, nothing ran
        yet: BEGIN runs once more, reconnected. A BEGIN that fails (a lock timeout) leaves no
        transaction behind."""
        writing = head.startswith("BEGIN IMMEDIATE")
        if writing:
            lease = (
                ""
                if self.lease is None
                else (f"SET LOCAL idle_in_transaction_session_timeout = {_ms(self.lease)}; ")
            )
            text = f"BEGIN; {lease}SELECT pg_advisory_xact_lock({WRITER_LOCK})"
        elif head.startswith("BEGIN DEFERRED"):
            text = "BEGIN ISOLATION LEVEL REPEATABLE READ"
        else:
            text = "BEGIN"
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
        return _Rows([])

    def _end(self, *, commit: bool) -> _Rows:
        """COMMIT or ROLLBACK. On a lost connection the server has rolled the transaction back:
        ROLLBACK (and the end of a read) is then done; COMMIT of a write is refused."""
        writing = self._writing
        self._begun = self._writing = False
        if self._lost():
            if commit and writing:
                raise PgUnavailable(
                    f"{self.label}: the connection was lost before COMMIT; "
                    "the server rolled the transaction back"
                )
            return _Rows([])
        if not commit:
            self._rollback(self._conn)
            return _Rows([])
        return self._run(self._conn, "COMMIT", ())

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
        """psycopg errors as the sqlite3 classes the stores already handle (module docstring)."""
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
                raise sqlite3.IntegrityError(message) from e
            if isinstance(e, psycopg.OperationalError):
                raise sqlite3.OperationalError(message) from e
            raise sqlite3.DatabaseError(message) from e

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


# ``INSERT ... VALUES (%s, ...)`` with no nested parentheses, optionally ``ON CONFLICT DO
# NOTHING`` (``DO UPDATE`` may not touch a row twice in one statement: those run row by row).
_MULTI_ROW: Final = re.compile(
    r"^(INSERT\s.+?\sVALUES\s*)(\([^()]*\))(\s+ON\s+CONFLICT\s+DO\s+NOTHING)?$",
    re.IGNORECASE | re.DOTALL,
)
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
