"""The fact store: facts filed under their FactHash, a derivation edge table, WAL.

>>> import os, tempfile
>>> from affidavit.attest.stores.facts import FactStore
>>> from affidavit.verify.lineage.facts import parse_fact
>>> fact = parse_fact({"entity": "urn:x:a", "relation": "memory:role",
...     "value": {"type": "boolean", "v": True}, "source": "urn:s:1", "scope": "local",
...     "confidence": 1, "ts": "2026-01-01T00:00:00Z"})
>>> with FactStore.open(os.path.join(tempfile.mkdtemp(), "facts.db"), create=True) as store:
...     store.add_batch([fact]).added == (fact.hash,)
True

Rules enforced on insert (seed 002 §20.6.1), atomically per batch, planned inside the writer's
transaction before anything is written (:class:`PlanContext`): rule 2, no cycles, against the
store *and* the earlier facts of the batch (``provenance_cycle_detected``); rule 4, a FactHash
stored with another derived_from is refused (``derived_from_immutable``), the same fact again is a
no-op; rule 3, dangling references are stored as they are. A batch with one bad fact stores
nothing, and the error names the fact and the rule.

Layout (docs/formats.md §5): ``facts(hash PK, scope, body)`` with ``body`` the RFC 8785 bytes as
received, and ``edges(source, derived)``. A store created here is private: it holds facts of
every scope. Readers look at the stored scope before any body is parsed, so a fact the caller may
not read costs what an absent one costs (docs/adr/0009-hidden-equals-absent.md). A parallel
audit (:func:`audit_store`) joins its workers' key ranges in key order: the serial report, byte
for byte.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Any, BinaryIO, Final, Self

from affidavit.attest.errors import StoreError
from affidavit.attest.files import private_database
from affidavit.attest.stores.postgres import PgUnavailable, connect
from affidavit.attest.stores.sqlite import SqliteConnection
from affidavit.attest.stores.store import Connection, Migrations, Store, is_postgres_url, numbered
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.audit import (
    AuditReport,
    Checked,
    EdgeDigest,
    EdgeIndex,
    audit_checked,
    check_records,
    with_edge_index_check,
)
from affidavit.verify.lineage.facts import Fact, FactHash, parse_fact
from affidavit.verify.lineage.walk import StoredRecord, closing_parent

__all__ = [
    "SQLITE_MAGIC",
    "AddResult",
    "FactPlan",
    "FactStore",
    "PlanContext",
    "audit_store",
    "batch_error",
    "is_sqlite_file",
    "range_bounds",
]

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
FORMAT: Final = "affidavit-facts/1"
_BUSY_S: Final = 5.0  # the busy timeout of a fact store's own SQLite connection
CHUNK: Final = 500  # keys per statement
BATCH: Final = 2048  # rows per page or audit batch
Bound = tuple[bytes | None, bytes | None]

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
        (:func:`audit_store`).

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
        what the earlier ones planned.

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


# Rows as stored ---------------------------------------------------------------------------


def row_key(value: object) -> str:
    """A stored key as hex (a key that is not a blob, in a forged table, as its text)."""
    return value.hex() if isinstance(value, bytes) else str(value)


def row_body(value: bytes | str) -> bytes:
    """A stored body as bytes (PostgreSQL or a forged table may hand back text)."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)


def by_hash(
    db: Any, select: str, keys: Sequence[str], where: str = "", extra: Sequence[Any] = ()
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``SELECT <select> IN (...)<where>`` for the hex ``keys``, one statement per
    :data:`CHUNK` keys (``select``: ``"hash, body FROM facts WHERE hash"``); ``extra`` are the
    parameters of ``where``, numbered first."""
    for offset in range(0, len(keys), CHUNK):
        chunk = [bytes.fromhex(h) for h in keys[offset : offset + CHUNK]]
        marks = numbered(len(extra) + 1, len(chunk))
        yield from db.execute(
            f"SELECT {select} IN ({marks}){where}", [*extra, *chunk]
        )  # marks and fixed SQL only


def raw_rows(db: Any, bound: Bound | None) -> Iterator[tuple[str, bytes, str]]:
    """``(hex key, body bytes, where)`` for the facts in ``bound`` (all when None), key order."""
    low, high = bound if bound is not None else (None, None)
    query = "SELECT hash, body FROM facts"
    if low is not None and high is not None:
        rows = db.execute(f"{query} WHERE hash >= $1 AND hash < $2 ORDER BY hash", (low, high))
    elif low is not None:
        rows = db.execute(f"{query} WHERE hash >= $1 ORDER BY hash", (low,))
    elif high is not None:  # NULL sorts first (only in a forged table: the key is NOT NULL)
        rows = db.execute(f"{query} WHERE hash < $1 OR hash IS NULL ORDER BY hash", (high,))
    else:
        rows = db.execute(f"{query} ORDER BY hash")
    for key, body in rows:
        hex_key = row_key(key)
        yield hex_key, row_body(body), f"fact {hex_key}"


# Planning a batch --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FactPlan:
    """What :meth:`FactStore.plan` decided: the facts to store (in order, each once) and the
    hashes already stored identically."""

    added: tuple[Fact, ...]
    existing: tuple[FactHash, ...]


class _Children:
    """``children(hash)`` for cycle checks: the stored edges (prefetched for many hashes) plus
    those of the facts planned so far."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._known: dict[FactHash, list[FactHash]] = {}  # stored edges, by source
        self._planned: dict[FactHash, list[FactHash]] = {}  # edges of the facts planned so far

    def prefetch(self, fact_hashes: Sequence[FactHash]) -> None:
        unique = [h for h in dict.fromkeys(fact_hashes) if h not in self._known]
        self._known.update((h, []) for h in unique)
        for source, derived in by_hash(self._db, "source, derived FROM edges WHERE source", unique):
            self._known[FactHash(row_key(source))].append(FactHash(row_key(derived)))

    def of(self, fact_hash: FactHash) -> Iterable[FactHash]:
        if fact_hash not in self._known:
            self.prefetch([fact_hash])
        return (*self._known[fact_hash], *self._planned.get(fact_hash, ()))

    def add(self, fact: Fact) -> None:
        for parent in fact.derived_from:
            self._planned.setdefault(parent, []).append(fact.hash)

    def forget(self, fact: Fact) -> None:
        """Undo :meth:`add` (a plan that was refused writes nothing)."""
        for parent in fact.derived_from:
            self._planned[parent].remove(fact.hash)


class PlanContext:
    """What the plans of one write transaction share (:meth:`FactStore.plan`): the stored facts
    and edges, read once each, and the facts planned so far, which later plans see as stored."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._facts: dict[str, tuple[str, bytes] | None] = {}  # hex -> (scope, body) | absent
        self.children = _Children(db)

    def _read(self, fact_hashes: Sequence[str]) -> None:
        unknown = [h for h in dict.fromkeys(fact_hashes) if h not in self._facts]
        self._facts.update((h, None) for h in unknown)
        for key, scope, body in by_hash(
            self._db, "hash, scope, body FROM facts WHERE hash", unknown
        ):
            self._facts[row_key(key)] = (str(scope), row_body(body))

    def bodies(self, fact_hashes: Sequence[str]) -> dict[str, bytes]:
        """The stored (or planned) body of each of ``fact_hashes`` that has one."""
        self._read(fact_hashes)
        return {h: found[1] for h in fact_hashes if (found := self._facts[h]) is not None}

    def scopes(self, fact_hashes: Sequence[str]) -> dict[str, str]:
        """The stored (or planned) scope of each of ``fact_hashes`` that has one."""
        self._read(fact_hashes)
        return {h: found[0] for h in fact_hashes if (found := self._facts[h]) is not None}

    def planned(self, facts: Iterable[Fact]) -> None:
        """``facts`` (their edges already in :attr:`children`) will be written in this
        transaction: later plans see them as stored."""
        for fact in facts:
            self._facts[fact.hash] = (fact.scope, jcs(dict(fact.document)))

    def plan(
        self, facts: Sequence[Fact], *, labels: Sequence[str] | None, every_error: bool
    ) -> FactPlan:
        """:meth:`affidavit.attest.stores.facts.FactStore.plan` in this context.

        Raises:
            as :meth:`~affidavit.attest.stores.facts.FactStore.add_batch`.
        """
        names = (
            list(labels) if labels is not None else [f"fact #{i + 1}" for i in range(len(facts))]
        )
        stored = self.bodies([fact.hash for fact in facts])
        self.children.prefetch(
            [fact.hash for fact in facts if fact.derived_from and fact.hash not in stored]
        )
        added: dict[FactHash, Fact] = {}
        existing: list[FactHash] = []
        try:
            _plan_each(facts, names, stored, self.children, added, existing, every_error)
        except BaseException:  # refused: nothing of this plan is planned
            for fact in added.values():
                self.children.forget(fact)
            raise
        self.planned(added.values())
        return FactPlan(tuple(added.values()), tuple(existing))


def _plan_each(  # noqa: PLR0917 - the plan's parts
    facts: Sequence[Fact],
    names: list[str],
    stored: Mapping[str, bytes],
    children: _Children,
    added: dict[FactHash, Fact],
    existing: list[FactHash],
    every_error: bool,
) -> None:
    """Each fact against what is stored and planned (rules 2 and 4), into ``added`` and
    ``existing``.

    Raises:
        as :meth:`add_batch`.
    """
    refused: list[errors.AffidavitError] = []
    for fact, name in zip(facts, names, strict=True):
        try:
            earlier = stored.get(fact.hash)
            if earlier is None and fact.hash in added:  # earlier in this batch
                earlier = jcs(dict(added[fact.hash].document))
            if earlier is not None:
                _check_unchanged(fact, earlier, name)
                existing.append(fact.hash)
                continue
            if fact.derived_from:
                _check_acyclic(fact, name, children.of)
            added[fact.hash] = fact
            children.add(fact)
        except errors.LineageError as e:
            if not every_error or e.code not in (
                "derived_from_immutable",
                "provenance_cycle_detected",
            ):
                raise
            refused.append(e)
    if refused:
        raise refused[0] if len(refused) == 1 else batch_error(refused)


def batch_error(refused: Sequence[errors.AffidavitError]) -> errors.LineageError:
    """One ``fact.batch_invalid`` error listing every refusal (its code and message)."""
    bad = [{"code": e.code, "message": e.message} for e in refused]
    listed = "; ".join(f"{e.code}: {e.message}" for e in refused)
    return errors.LineageError(
        "fact.batch_invalid",
        f"{len(refused)} facts are bad: {listed}",
        details={"bad": bad, "count": len(bad)},
    )


def _check_acyclic(
    fact: Fact, name: str, children: Callable[[FactHash], Iterable[FactHash]]
) -> None:
    # seed 002 §20.6.1 rule 2: verify acyclicity before persisting.
    via = closing_parent(fact.hash, fact.derived_from, children)
    if via is not None:
        raise errors.LineageError(
            "provenance_cycle_detected",
            f"{name} ({fact.hash}): deriving it from {via} would close a cycle",
            details={"fact": fact.hash, "via": via, "at": name},
        )


def _check_unchanged(fact: Fact, stored_body: bytes, name: str) -> None:
    # seed 002 §20.6.1 rule 4: derived_from is immutable once stored.
    try:
        stored = parse_fact(loads(stored_body), what="stored fact")
        stored_parents = stored.derived_from
    except errors.AffidavitError:
        stored_parents = None
    if stored_parents != fact.derived_from:
        raise errors.LineageError(
            "derived_from_immutable",
            f"{name} ({fact.hash}) is stored already with a different derived_from",
            details={"fact": fact.hash, "at": name},
        )


# Auditing ----------------------------------------------------------------------------------


def audit_store(  # noqa: PLR0917 - the store's parts
    db: Any, path: str, edges: EdgeIndex, count: Callable[[], int], jobs: int, ranges: int | None
) -> AuditReport:
    """Audit every fact stored in ``db`` (the file ``path``; ``edges`` its edge index), with
    ``jobs`` worker processes over ``ranges`` key ranges (default: 8 per job, more for big
    stores). Each range is its own transaction: a concurrent write may be seen by some only.

    Raises:
        ``lineage.store_invalid``: the store cannot be read.
    """
    digest = EdgeDigest()
    if db.dialect != "sqlite":
        jobs = 1  # the worker processes open the SQLite file; PostgreSQL reads serially
    try:
        if jobs <= 1:
            rows = raw_rows(db, None)
            batches = iter(lambda: list(itertools.islice(rows, BATCH)), [])
            report = audit_checked(
                digest.add_checked(item) for batch in batches for item in check_records(batch)
            )
            return with_edge_index_check(report, edges, digest)
        bounds = range_bounds(ranges if ranges is not None else _default_ranges(count(), jobs))
    except StoreError as e:
        raise errors.LineageError("lineage.store_invalid", f"{path}: {e}") from None

    where = os.path.abspath(path)
    with ProcessPoolExecutor(jobs) as pool:  # a worker's LineageStoreInvalid is raised here
        shares = pool.map(_check_range, [where] * len(bounds), bounds)
        report = audit_checked(digest.add_checked(item) for share in shares for item in share)
    return with_edge_index_check(report, edges, digest)


def _default_ranges(count: int, jobs: int) -> int:
    # Enough ranges to keep every worker busy and this process joining as results arrive, each
    # at most ~25,000 facts (memory per result), at most 4,096 (two-byte key prefixes).
    return max(8 * jobs, min(4096, count // 25_000 + 1))


def range_bounds(count: int) -> list[Bound]:
    """``count`` contiguous key ranges cut at two-byte prefixes, the first open below (where
    keys that are not 32-byte blobs sort, in a tampered store) and the last open above."""
    count = max(1, min(count, 4096))
    cuts = [(i * 65536 // count).to_bytes(2, "big") for i in range(1, count)]
    lows: list[bytes | None] = [None, *cuts]
    highs: list[bytes | None] = [*cuts, None]
    return list(zip(lows, highs, strict=True))


def _check_range(path: str, bound: Bound) -> list[Checked]:
    """Check the records in one key range (runs in a worker process; docs/formats.md §5)."""
    try:
        db = SqliteConnection.open(path, mode="ro", timeout=_BUSY_S)
        try:
            return check_records(raw_rows(db, bound))
        finally:
            db.close()
    except StoreError as e:
        raise errors.LineageError("lineage.store_invalid", f"{path}: {e}") from None
