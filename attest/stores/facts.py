"""The SQLite fact store: facts filed under their FactHash, a derivation edge table, WAL.

>>> import os, tempfile
>>> from affidavit.attest.stores.facts import FactStore
>>> from affidavit.verify.lineage.facts import parse_fact
>>> fact = parse_fact({"entity": "urn:x:a", "relation": "memory:role",
...     "value": {"type": "boolean", "v": True}, "source": "urn:s:1", "scope": "local",
...     "confidence": 1, "ts": "2026-01-01T00:00:00Z"})
>>> with FactStore.open(os.path.join(tempfile.mkdtemp(), "facts.db"), create=True) as store:
...     store.add_batch([fact]).added == (fact.hash,)
True

Rules enforced on insert (seed 002 §20.6.1 rules 2, 3 and 4), atomically per batch: a batch with
one bad fact stores nothing, and the error names the fact and the rule
(:mod:`affidavit.attest.stores.fact_plan`).

Layout: ``facts(hash PK, scope, body)`` with ``body`` the RFC 8785 bytes as received, and
``edges(source, derived)`` keyed by the source hash. A store created here is private
(:func:`affidavit.attest.files.private_database`): it holds facts of every scope. Readers look at
the stored scope before any body is parsed, so a fact the caller may not read costs what an
absent one costs (docs/adr/0009-hidden-equals-absent.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, BinaryIO, Final, Self

from affidavit.attest.errors import StoreError
from affidavit.attest.files import private_database
from affidavit.attest.stores.fact_audit import audit_store
from affidavit.attest.stores.fact_plan import FactPlan, PlanContext, batch_error
from affidavit.attest.stores.fact_rows import BATCH, by_hash, raw_rows, row_body, row_key
from affidavit.attest.stores.postgres import PgUnavailable, connect
from affidavit.attest.stores.sqlite import SqliteConnection
from affidavit.attest.stores.store import Connection, Migrations, Store, is_postgres_url, numbered
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.audit import AuditReport
from affidavit.verify.lineage.facts import Fact, FactHash, parse_fact
from affidavit.verify.lineage.walk import StoredRecord

__all__ = [
    "SQLITE_MAGIC",
    "AddResult",
    "FactPlan",
    "FactStore",
    "PlanContext",
    "batch_error",
    "is_sqlite_file",
]

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
FORMAT: Final = "affidavit-facts/1"
_BUSY_S: Final = 5.0  # the busy timeout of a fact store's own SQLite connection

# The store's tables, in each database's own DDL (one step: the fact store has no versions).
_SCHEMA: Final = Migrations(
    sqlite=(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS facts ("
        " hash BLOB PRIMARY KEY, scope TEXT NOT NULL, body BLOB NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS edges ("
        " source BLOB NOT NULL, derived BLOB NOT NULL, PRIMARY KEY (source, derived))"
        " WITHOUT ROWID",
    ),
    postgresql=(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS facts ("
        " hash BYTEA PRIMARY KEY, scope TEXT NOT NULL, body BYTEA NOT NULL);"
        "CREATE TABLE IF NOT EXISTS edges ("
        " source BYTEA NOT NULL, derived BYTEA NOT NULL, PRIMARY KEY (source, derived))",
    ),
)


def _create(db: Connection) -> None:
    """The store's tables and its format mark, where absent (inside the caller's write)."""
    for statement in _SCHEMA.steps(db.dialect)[0].split(";"):
        db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('format', $1) ON CONFLICT DO NOTHING", (FORMAT,))


def is_sqlite_file(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the SQLite header (False when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class AddResult:
    """What a batch did: hashes newly stored, and hashes already stored identically."""

    added: tuple[FactHash, ...]
    existing: tuple[FactHash, ...]


class FactStore:
    """A :class:`~affidavit.verify.lineage.walk.FactSource` backed by a store, and the one that
    writes."""

    def __init__(self, store: Store, *, owned: bool = True) -> None:
        self._store = store
        self._owned = owned  # False: the caller's store (sharing), which the caller closes
        self.path = str(store.path)  # the file, or the redacted URL of a PostgreSQL database

    @property
    def _db(self) -> Any:
        return self._store.conn

    @classmethod
    def sharing(cls, store: Store) -> Self:
        """The fact store on ``store``'s connection: a batch joins the caller's
        :meth:`Store.write`, so rows written beside it commit together. The tables must exist
        (:meth:`at` first); :meth:`close` leaves the connection to ``store``.
        """
        return cls(store, owned=False)

    @classmethod
    def at(cls, location: str | os.PathLike[str], *, create: bool = False) -> Self:
        """:meth:`connect` for a ``postgresql://`` URL, else :meth:`open` (a file path)."""
        if is_postgres_url(location):
            return cls.connect(str(location))
        return cls.open(location, create=create)

    @classmethod
    def connect(cls, url: str) -> Self:
        """Open the fact store in a PostgreSQL database (its tables made when absent), which it
        may share with the log and the registry (docs/adr/0013-postgresql.md).

        Raises:
            ``store.unreadable``: the server cannot be reached (or psycopg is missing), or the
                connection was lost while the tables were being made.
            ``store.busy``: another writer held the writer lock past the lock timeout.
            ``lineage.store_invalid``: the database holds tables named like the store's that are not
                an Affidavit fact store.
        """
        db = connect(url)
        store = Store(db.label, db)
        try:
            with store.write():  # one creator at a time across instances
                _create(db)
            stored_format = _format(db)
        except StoreError as e:
            db.close()
            if e.code == "store.busy" or isinstance(e, PgUnavailable):
                raise  # the database is busy or gone: its fault, not a store that is not ours
            raise errors.LineageError("lineage.store_invalid", f"{db.label}: {e}") from None
        except BaseException:
            db.close()
            raise
        if stored_format != FORMAT:
            db.close()
            raise errors.LineageError(
                "lineage.store_invalid", f"{db.label}: a database, but not a fact store"
            )
        return cls(store)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> Self:
        """Open the store at ``path``; with ``create=True`` make it when missing.

        Raises:
            ``io.unreadable``: the file is missing (and ``create`` is false) or unreadable.
            ``lineage.store_invalid``: the file is not an Affidavit fact store.
        """
        name = os.fspath(path)
        exists = os.path.exists(name)
        if not exists and not create:
            raise errors.ParseError("io.unreadable", f"{name}: no such file")
        if exists and not is_sqlite_file(name) and os.path.getsize(name) > 0:
            raise errors.LineageError("lineage.store_invalid", f"{name}: not a SQLite fact store")
        if not exists:
            try:  # 0600 from the first byte, in a 0700 folder when the folder is made here
                private_database(name)
            except OSError as e:
                raise errors.ParseError("io.unreadable", f"{name}: {e.strerror or e}") from None
        try:
            db = SqliteConnection.open(
                name,
                mode="rwc",
                timeout=_BUSY_S,
                pragmas={"journal_mode": "WAL", "synchronous": "NORMAL"},
            )
            if not db.tables():
                _create(db)
            elif _format(db) != FORMAT:
                db.close()
                raise errors.LineageError(
                    "lineage.store_invalid", f"{name}: a SQLite file, but not a fact store"
                )
        except StoreError as e:
            raise errors.LineageError("lineage.store_invalid", f"{name}: {e}") from None
        return cls(Store(name, db))

    @classmethod
    def open_reader(cls, path: str | os.PathLike[str]) -> Self:
        """Open an existing store read-only, on a connection of its own for one thread at a time
        (WAL: it never blocks the writer).

        Raises:
            ``io.unreadable``: the file is missing.
            ``lineage.store_invalid``: the file is not an Affidavit fact store.
        """
        name = os.fspath(path)
        if not os.path.exists(name):
            raise errors.ParseError("io.unreadable", f"{name}: no such file")
        try:
            db = SqliteConnection.open(name, mode="ro", timeout=_BUSY_S)
            if _format(db) != FORMAT:
                db.close()
                raise errors.LineageError("lineage.store_invalid", f"{name}: not a fact store")
        except StoreError as e:
            raise errors.LineageError("lineage.store_invalid", f"{name}: {e}") from None
        return cls(Store(name, db))

    def close(self) -> None:
        """Close the connection (not a shared store's: its owner closes it)."""
        if self._owned:
            self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # FactSource ---------------------------------------------------------------------------

    def get(self, fact_hash: FactHash) -> Fact | None:
        """The fact filed under ``fact_hash`` (hash recomputed from the body), or None.

        Raises:
            ``lineage.store_invalid``: the stored body is not a fact.
        """
        return self.get_many([fact_hash]).get(fact_hash)

    def get_many(
        self, fact_hashes: Sequence[FactHash], *, scopes: frozenset[str] | None = None
    ) -> Mapping[FactHash, Fact]:
        """The stored facts among ``fact_hashes``, by key, in one query per 500 keys; with
        ``scopes``, others are left out before their body is read.

        Raises:
            ``lineage.store_invalid``: a stored body is not a fact.
        """
        found: dict[FactHash, Fact] = {}
        allowed: list[str] = sorted(scopes) if scopes is not None else []
        where = ""
        if scopes is not None:
            nothing = " AND 1 = 0"  # no scope allowed: no row (portable: no bare 0)
            where = f" AND scope IN ({numbered(1, len(allowed))})" if allowed else nothing
        select = "hash, body FROM facts WHERE hash"
        for key, body in by_hash(self._db, select, fact_hashes, where, allowed):
            fact_hash = FactHash(key.hex())
            found[fact_hash] = _parse_stored(fact_hash, body)
        return found

    def raw(self, fact_hash: str) -> bytes | None:
        """The stored body of ``fact_hash`` (hex) as bytes, unparsed, or None."""
        row = self._db.execute(
            "SELECT body FROM facts WHERE hash = $1", (bytes.fromhex(fact_hash),)
        ).fetchone()
        return None if row is None else row_body(row[0])

    def scope_of(self, fact_hash: FactHash) -> str | None:
        """The stored scope of ``fact_hash`` (the index column; no body is read), or None."""
        row = self._db.execute(
            "SELECT scope FROM facts WHERE hash = $1", (bytes.fromhex(fact_hash),)
        ).fetchone()
        return None if row is None else str(row[0])

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        """Hashes of the stored facts whose derived_from names ``fact_hash``."""
        rows = self._db.execute(
            "SELECT derived FROM edges WHERE source = $1", (bytes.fromhex(fact_hash),)
        )
        return tuple(FactHash(row[0].hex()) for row in rows)

    def derivation_edges(self) -> Iterator[tuple[str, str]]:
        """Every ``(source, derived)`` pair of the edge index, as stored (hex), in no order.

        Raises:
            ``lineage.store_invalid``: the table cannot be read.
        """
        try:
            for source, derived in self._db.execute("SELECT source, derived FROM edges"):
                yield row_key(source), row_key(derived)
        except StoreError as e:
            raise errors.LineageError("lineage.store_invalid", f"{self.path}: {e}") from None

    def records(self) -> Iterator[StoredRecord]:
        """Every stored fact, raw, in FactHash order."""
        for key, body, where in raw_rows(self._db, None):
            yield StoredRecord(key=key, body=body, where=where)

    def pages(self, *, bodies: bool = True, size: int = BATCH) -> Iterator[list[StoredRecord]]:
        """Every stored fact in FactHash order, ``size`` a page, each page one query after the
        last key (bounded memory on PostgreSQL too). Without ``bodies`` ``body`` is empty."""
        column = "body" if bodies else "''"
        after = b""
        while True:
            rows = self._db.execute(
                f"SELECT hash, {column} FROM facts WHERE hash > $1 ORDER BY hash LIMIT $2",  # noqa: S608 - a fixed column
                (after, size),
            ).fetchall()
            if not rows:
                return
            yield [
                StoredRecord(key=row_key(key), body=row_body(body), where=f"fact {row_key(key)}")
                for key, body in rows
            ]
            after = bytes(rows[-1][0])

    def audit(self, *, jobs: int = 1, ranges: int | None = None) -> AuditReport:
        """Audit every stored fact (as :func:`~affidavit.verify.lineage.audit.audit`, no
        signatures) with ``jobs`` worker processes over ``ranges`` key ranges
        (:func:`~affidavit.attest.stores.fact_audit.audit_store`).

        Raises:
            ``lineage.store_invalid``: the file cannot be read as a store.
        """
        return audit_store(self._db, self.path, self, self.__len__, jobs, ranges)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM facts").fetchone()[0])

    # Writing ------------------------------------------------------------------------------

    def add_batch(
        self,
        facts: Sequence[Fact],
        *,
        labels: Sequence[str] | None = None,
        every_error: bool = False,
    ) -> AddResult:
        """Store ``facts`` in one transaction (the caller's for a shared store), or none.

        ``labels`` name the facts in errors (default "fact #1"...). With ``every_error``, every
        fact is checked and two or more refusals are raised together as ``fact.batch_invalid``.

        Raises:
            ``derived_from_immutable``: a fact is stored already with another derived_from.
            ``provenance_cycle_detected``: a fact would close a derived_from cycle.
            ``fact.batch_invalid``: with ``every_error``, several facts were refused.
        """
        with self._store.write():
            return self.write_plan(self.plan(facts, labels=labels, every_error=every_error))

    def plan(
        self,
        facts: Sequence[Fact],
        *,
        labels: Sequence[str] | None = None,
        every_error: bool = False,
        context: PlanContext | None = None,
    ) -> FactPlan:
        """Check ``facts`` against the store and each other inside the caller's write, without
        writing (seed 002 §20.6.1 rules 2 and 4): which are new, which stored identically. With
        ``context`` (:meth:`context`) several plans of one transaction share their reads and see
        what the earlier ones planned (:mod:`~affidavit.attest.stores.fact_plan`).

        Raises:
            as :meth:`add_batch`.
        """
        shared = context if context is not None else self.context()
        return shared.plan(facts, labels=labels, every_error=every_error)

    def context(self) -> PlanContext:
        """A :class:`PlanContext` on this store's connection (inside the caller's transaction)."""
        return PlanContext(self._db)

    def write_plan(self, plan: FactPlan) -> AddResult:
        """Store the new facts of ``plan`` and their edges, inside :meth:`plan`'s transaction."""
        db = self._db
        if plan.added:
            db.insert_rows(
                "facts",
                ("hash", "scope", "body"),
                [(bytes.fromhex(f.hash), f.scope, jcs(dict(f.document))) for f in plan.added],
            )
            edges = [
                (bytes.fromhex(parent), bytes.fromhex(f.hash))
                for f in plan.added
                for parent in f.derived_from
            ]
            if edges:
                db.insert_rows("edges", ("source", "derived"), edges)
        return AddResult(added=tuple(f.hash for f in plan.added), existing=plan.existing)

    def export_jsonl(self, out: BinaryIO) -> int:
        """Write every fact as ``{"fact", "fact_hash"}`` JSON Lines (RFC 8785); return the count."""
        count = 0
        for record in self.records():
            out.write(b'{"fact":' + record.body + b',"fact_hash":"' + record.key.encode() + b'"}\n')  # type: ignore[union-attr]
            count += 1
        return count


def _parse_stored(fact_hash: str, body: bytes | str) -> Fact:
    try:
        return parse_fact(loads(body), what=f"stored fact {fact_hash}")
    except (errors.ParseError, errors.LineageError, errors.CanonicalError) as e:
        raise errors.LineageError(
            "lineage.store_invalid", e.message, details={"cause": e.code}
        ) from e


def _format(db: Connection) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except StoreError:
        return None
    return None if row is None else str(row[0])
