"""The SQLite fact store: facts filed under their FactHash, a derivation edge table, WAL.

>>> import os, tempfile
>>> from affidavit.attest.factstore import FactStore
>>> from affidavit.verify.facts import parse_fact
>>> fact = parse_fact({"entity": "urn:x:a", "relation": "memory:role",
...     "value": {"type": "boolean", "v": True}, "source": "urn:s:1", "scope": "local",
...     "confidence": 1, "ts": "2026-01-01T00:00:00Z"})
>>> with FactStore.open(os.path.join(tempfile.mkdtemp(), "facts.db"), create=True) as store:
...     store.add_batch([fact]).added == (fact.hash,)
True

Rules enforced on insert (seed 002 §20.6.1), atomically per batch: a batch with one bad fact
stores nothing, and the error names the fact and the rule.

* rule 2, no cycles: checked fact by fact against the store *and* the earlier facts of the batch
  (``provenance_cycle_detected``);
* rule 4, derived_from immutable: a FactHash already stored (or earlier in the batch) with another
  derived_from is refused (``derived_from_immutable``); the same fact again is a no-op;
* rule 3, dangling references are stored as they are.

Layout: ``facts(hash BLOB PK, scope, body)`` with ``body`` the RFC 8785 bytes of the document as
received, and ``edges(source, derived)`` keyed by the source hash, so "who names this fact" is one
index range. One writer at a time (``BEGIN IMMEDIATE``), readers never block (WAL).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO, Final, Self

from affidavit.verify import errors
from affidavit.verify.canonical import jcs
from affidavit.verify.facts import Fact, FactHash, parse_fact
from affidavit.verify.jsonio import loads
from affidavit.verify.lineage import StoredRecord
from affidavit.verify.lineage_graph import closing_parent

__all__ = ["SQLITE_MAGIC", "AddResult", "FactStore", "is_sqlite_file"]

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
FORMAT: Final = "affidavit-facts/1"
_CHUNK: Final = 500

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS facts ("
    " hash BLOB PRIMARY KEY, scope TEXT NOT NULL, body BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS edges ("
    " source BLOB NOT NULL, derived BLOB NOT NULL, PRIMARY KEY (source, derived)) WITHOUT ROWID",
)


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
    """A :class:`~affidavit.verify.lineage.FactSource` backed by SQLite, and the one that writes."""

    def __init__(self, connection: sqlite3.Connection, path: str) -> None:
        self._db = connection
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> Self:
        """Open the store at ``path``; with ``create=True`` make it when missing.

        Raises:
            FileReadError: the file is missing (and ``create`` is false) or unreadable.
            LineageStoreInvalid: the file is not an Affidavit fact store.
        """
        name = os.fspath(path)
        exists = os.path.exists(name)
        if not exists and not create:
            raise errors.FileReadError(f"{name}: no such file")
        if exists and not is_sqlite_file(name) and os.path.getsize(name) > 0:
            raise errors.LineageStoreInvalid(f"{name}: not a SQLite fact store")
        try:
            db = sqlite3.connect(name, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA busy_timeout = 5000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if not tables:
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
            elif _format(db) != FORMAT:
                db.close()
                raise errors.LineageStoreInvalid(f"{name}: a SQLite file, but not a fact store")
        except sqlite3.DatabaseError as e:
            raise errors.LineageStoreInvalid(f"{name}: {e}") from None
        return cls(db, name)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

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
            LineageStoreInvalid: the stored body is not a fact.
        """
        return self.get_many([fact_hash]).get(fact_hash)

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        """The stored facts among ``fact_hashes``, by key, in one query per 500 keys.

        Raises:
            LineageStoreInvalid: a stored body is not a fact.
        """
        found: dict[FactHash, Fact] = {}
        for offset in range(0, len(fact_hashes), _CHUNK):
            chunk = [bytes.fromhex(h) for h in fact_hashes[offset : offset + _CHUNK]]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT hash, body FROM facts WHERE hash IN ({marks})"  # noqa: S608 - marks only
            for key, body in self._db.execute(query, chunk):
                fact_hash = FactHash(key.hex())
                found[fact_hash] = _parse_stored(fact_hash, body)
        return found

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        """Hashes of the stored facts whose derived_from names ``fact_hash``."""
        rows = self._db.execute(
            "SELECT derived FROM edges WHERE source = ?", (bytes.fromhex(fact_hash),)
        )
        return tuple(FactHash(row[0].hex()) for row in rows)

    def records(self) -> Iterator[StoredRecord]:
        """Every stored fact, raw, in FactHash order."""
        for key, body in self._db.execute("SELECT hash, body FROM facts ORDER BY hash"):
            hex_key = key.hex() if isinstance(key, bytes) else str(key)
            raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body)
            yield StoredRecord(key=hex_key, body=raw, where=f"fact {hex_key}")

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM facts").fetchone()[0])

    # Writing ------------------------------------------------------------------------------

    def add_batch(self, facts: Sequence[Fact], *, labels: Sequence[str] | None = None) -> AddResult:
        """Store ``facts`` in one transaction, or none of them.

        ``labels`` name the facts in errors (e.g. "line 3"); by default "fact #1", "fact #2"...

        Raises:
            DerivedFromImmutable: a fact is stored already with another derived_from.
            ProvenanceCycleDetected: a fact would close a derived_from cycle.
        """
        names = (
            list(labels) if labels is not None else [f"fact #{i + 1}" for i in range(len(facts))]
        )
        added: list[FactHash] = []
        existing: list[FactHash] = []
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for fact, name in zip(facts, names, strict=True):
                key = bytes.fromhex(fact.hash)
                row = db.execute("SELECT body FROM facts WHERE hash = ?", (key,)).fetchone()
                if row is not None:
                    _check_unchanged(fact, row[0], name)
                    existing.append(fact.hash)
                    continue
                _check_acyclic(fact, name, self.children)
                db.execute(
                    "INSERT INTO facts (hash, scope, body) VALUES (?, ?, ?)",
                    (key, fact.scope, jcs(dict(fact.document))),
                )
                db.executemany(
                    "INSERT INTO edges (source, derived) VALUES (?, ?)",
                    [(bytes.fromhex(parent), key) for parent in fact.derived_from],
                )
                added.append(fact.hash)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return AddResult(added=tuple(added), existing=tuple(existing))

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
    except (errors.JsonError, errors.FactInvalid, errors.CanonicalError) as e:
        raise errors.LineageStoreInvalid(e.message, details={"cause": e.code}) from e


def _format(db: sqlite3.Connection) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None else str(row[0])


def _check_acyclic(
    fact: Fact, name: str, children: Callable[[FactHash], Iterable[FactHash]]
) -> None:
    # seed 002 §20.6.1 rule 2: verify acyclicity before persisting.
    via = closing_parent(fact.hash, fact.derived_from, children)
    if via is not None:
        raise errors.ProvenanceCycleDetected(
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
        raise errors.DerivedFromImmutable(
            f"{name} ({fact.hash}) is stored already with a different derived_from",
            details={"fact": fact.hash, "at": name},
        )
