"""The SQLite store: the store interface (:mod:`affidavit.attest.stores.store`) on SQLite, and
the only module of Affidavit that imports :mod:`sqlite3` (docs/adr/0020-each-store-its-dialect.md).

>>> import tempfile, pathlib
>>> from affidavit.attest.stores.store import Migrations, Store
>>> store = Store.open(pathlib.Path(tempfile.mkdtemp()) / "a.db", create=True)
>>> store.migrate("demo", Migrations.same("CREATE TABLE demo_items (id INTEGER, name TEXT)"))
1
>>> with store.write() as db:
...     _ = db.execute("INSERT INTO demo_items(name) VALUES ($1)", ("x",))
>>> with store.read() as db:
...     db.execute("SELECT count(*) FROM demo_items").fetchone()[0]
1
>>> store.close()

Statements are SQLite SQL as written: ``$1, $2, ...`` are named parameters (``$1`` is
``parameters[0]``). WAL mode (readers see one snapshot and never block the writer);
``synchronous=FULL``, so an acknowledged write survives power loss (a lost leaf of the
transparency log would be a fork); every write is ``BEGIN IMMEDIATE`` inside the store's lock; a
database created here is private (:func:`affidavit.attest.files.private_database`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import quote

from affidavit.attest.errors import StoreError, StoreIntegrityError
from affidavit.attest.files import private_database

__all__ = ["DEFAULT_BUSY_TIMEOUT_S", "SqliteConnection", "fault"]

DEFAULT_BUSY_TIMEOUT_S: Final = 30.0

# "$1" ... "$N" bind by name: the name sqlite3 looks up is the text after "$"
_NAMES: Final = tuple(str(i) for i in range(1, 1001))


def _named(parameters: Sequence[Any]) -> dict[str, Any]:
    """``{"1": parameters[0], ...}``: what ``$1, $2, ...`` bind to."""
    if len(parameters) > len(_NAMES):
        return {str(i): value for i, value in enumerate(parameters, 1)}
    return dict(zip(_NAMES, parameters, strict=False))


def fault(path: Path | str, error: sqlite3.Error) -> StoreError:
    """The project's error for an :mod:`sqlite3` error: a broken constraint is
    :class:`~affidavit.attest.errors.StoreIntegrityError`, a damaged file ``store.corrupt``, a
    lock held past the busy timeout ``store.busy``, anything else ``store.unreadable``."""
    text = str(error)
    if isinstance(error, sqlite3.IntegrityError):
        return StoreIntegrityError("store.unreadable", f"{path}: {text}")
    if "malformed" in text or "corrupt" in text:
        return StoreError("store.corrupt", f"{path}: the database is damaged: {text}")
    if isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreError("store.busy", f"{path}: {text}")
    return StoreError("store.unreadable", f"{path}: {text}")


@contextmanager
def _translated(path: Path | str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as e:
        raise fault(path, e) from e


class _Rows:
    """A cursor's rows, with the driver's errors raised as the project's."""

    __slots__ = ("_cursor", "_path")

    def __init__(self, cursor: sqlite3.Cursor, path: Path | str) -> None:
        self._cursor = cursor
        self._path = path

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        with _translated(self._path):
            row: tuple[Any, ...] | None = self._cursor.fetchone()
        return row

    def fetchall(self) -> list[tuple[Any, ...]]:
        with _translated(self._path):
            return self._cursor.fetchall()

    def __iter__(self) -> _Rows:
        return self

    def __next__(self) -> tuple[Any, ...]:
        # a plain iterator, not a generator: closing a half-read generator would close the
        # cursor (PEP 380), which raises once the connection is closed
        with _translated(self._path):
            row: tuple[Any, ...] = next(self._cursor)
        return row


class SqliteConnection:
    """An :mod:`sqlite3` connection as a :class:`~affidavit.attest.stores.store.Connection`."""

    dialect: Final[Literal["sqlite"]] = "sqlite"

    def __init__(self, raw: sqlite3.Connection, path: Path | str) -> None:
        self._raw = raw
        self.path = path

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        mode: str = "rw",
        timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        pragmas: Mapping[str, str] | None = None,
    ) -> SqliteConnection:
        """A connection to the file at ``path`` (``mode``: ``ro``, ``rw`` or ``rwc``) in
        autocommit mode, with ``timeout`` as its busy timeout and ``pragmas`` set first, in order.

        Raises:
            ``store.unreadable``: the file cannot be opened, or is not an SQLite database.
            ``store.busy``: it stayed locked past ``timeout`` while being set up.
        """
        target = Path(path)
        uri = f"file:{quote(str(target.resolve()))}?mode={mode}"
        with _translated(target):
            raw = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=timeout, check_same_thread=False
            )
            try:
                raw.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
                for name, value in (pragmas or {}).items():
                    raw.execute(f"PRAGMA {name}={value}")
            except BaseException:
                raw.close()
                raise
        return cls(raw, target)

    @classmethod
    def open_database(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        timeout: float | None = None,
        readonly: bool = False,
    ) -> SqliteConnection:
        """The database at ``path`` with the house settings, with ``create`` made private if
        absent. ``readonly`` opens a reader that never writes (the database must already be in
        WAL mode).

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
        return cls.open(
            target,
            mode="ro" if readonly else ("rwc" if create else "rw"),
            timeout=DEFAULT_BUSY_TIMEOUT_S if timeout is None else timeout,
            pragmas=(
                {"query_only": "ON"}
                if readonly
                else {"journal_mode": "WAL", "synchronous": "FULL", "foreign_keys": "ON"}
            ),
        )

    @property
    def in_transaction(self) -> bool:
        return self._raw.in_transaction

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Rows:
        try:  # try/except, not a context manager: this is the hot path of every read
            return _Rows(self._raw.execute(sql, _named(parameters)), self.path)
        except sqlite3.Error as e:
            raise fault(self.path, e) from e

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _Rows:
        with _translated(self.path):
            return _Rows(self._raw.executemany(sql, map(_named, rows)), self.path)

    def insert_rows(
        self,
        table: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        skip_existing: bool = False,
    ) -> int:
        """One prepared ``INSERT`` run once per row; returns the rows inserted. The statement
        is this store's own, so it takes SQLite's positional ``?``: no name lookup per row."""
        marks = ", ".join("?" * len(columns))
        tail = " ON CONFLICT DO NOTHING" if skip_existing else ""
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){tail}"  # noqa: S608
        with _translated(self.path):
            return max(0, self._raw.executemany(sql, rows).rowcount)

    def begin(self, *, writing: bool) -> None:
        """``BEGIN IMMEDIATE`` (SQLite's RESERVED lock, across processes) or ``BEGIN DEFERRED``."""
        with _translated(self.path):
            self._raw.execute("BEGIN IMMEDIATE" if writing else "BEGIN DEFERRED")

    def commit(self) -> None:
        with _translated(self.path):
            self._raw.execute("COMMIT")

    def rollback(self) -> None:
        with _translated(self.path):
            self._raw.execute("ROLLBACK")

    def tables(self) -> set[str]:
        with _translated(self.path):
            return {str(row[0]) for row in self._raw.execute("SELECT name FROM sqlite_master")}

    def quick_check(self) -> None:
        """``PRAGMA quick_check``: SQLite's page-level integrity check (O(size)).

        Raises:
            ``store.corrupt``: SQLite reports damage.
        """
        rows = [str(r[0]) for r in self.execute("PRAGMA quick_check").fetchall()]
        if rows != ["ok"]:
            raise StoreError(
                "store.corrupt",
                f"{self.path}: the database is damaged: {rows[0] if rows else 'no answer'}",
                details={"problems": rows[:5]},
            )

    def close(self) -> None:
        self._raw.close()
