"""The registry's own tables in the one database: contracts, API keys, meta, the indexes.

>>> import tempfile, pathlib
>>> db = RegistryTables.open(pathlib.Path(tempfile.mkdtemp()) / "registry.db")
>>> db.get_meta("missing") is None
True

The log and the fact store keep their own tables in the same database, through their own
classes; this module never touches them. The service uses each connection from one thread
(:mod:`affidavit.registry.threads`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.files import private_database
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.store import Connection, Migrations, Store, is_postgres_url, numbered
from affidavit.registry.auth import ApiKey
from affidavit.registry.errors import RegistryError

__all__ = [
    "REGISTRY_MIGRATIONS",
    "ContractRow",
    "DegradedRecord",
    "RegistryTables",
    "index_key",
    "open_tables",
]


# Steps 2 and 3 read the same in both dialects. 2: publish keys are bound to adapter-id
# namespaces (docs/adr/0006); keys created before have none and may not write until bound.
_BIND_PUBLISHERS: Final = """
ALTER TABLE registry_api_keys ADD COLUMN publishers TEXT NOT NULL DEFAULT '[]'
"""
# 3: the fact index keys entity and relation by the SHA-256 of their UTF-8 (docs/adr/0017): any
# accepted string (U+0000, 2,048 CJK characters) fits both stores' indexes. Rows written before
# hold the text; RegistryTables.rekey_fact_index converts them in place at start.
_REKEY_FACT_INDEX: Final = """
DROP INDEX IF EXISTS registry_fact_by_entity;
DROP INDEX IF EXISTS registry_fact_by_relation;
CREATE INDEX registry_fact_by_entity ON registry_fact_index (entity, relation, scope);
CREATE INDEX registry_fact_by_relation ON registry_fact_index (relation, scope)
"""

# attest/stores/sqlite.py migrations for component "registry": index i takes version i to i + 1.
_REGISTRY_MIGRATIONS_SQLITE: Final = (
    """
CREATE TABLE IF NOT EXISTS registry_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS registry_contracts (
    adapter_id      TEXT NOT NULL,
    adapter_version TEXT NOT NULL,
    contract_hash   TEXT NOT NULL,
    declaration     TEXT NOT NULL,  -- the parsed declaration, JSON (as published)
    entry           TEXT NOT NULL,  -- the current signed entry, JSON
    leaf_index      INTEGER NOT NULL,  -- the latest log leaf recording this entry
    seq             INTEGER NOT NULL,  -- publication order
    PRIMARY KEY (adapter_id, adapter_version)
);
CREATE TABLE IF NOT EXISTS registry_api_keys (
    key_id       TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    scopes       TEXT NOT NULL,     -- JSON array
    label        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    revoked      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS registry_fact_index (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    hash       TEXT NOT NULL UNIQUE,
    entity     TEXT NOT NULL,
    relation   TEXT NOT NULL,
    scope      TEXT NOT NULL,
    confidence REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS registry_fact_by_entity ON registry_fact_index (entity, relation, scope);
CREATE INDEX IF NOT EXISTS registry_fact_by_relation ON registry_fact_index (relation, scope)
""",
    _BIND_PUBLISHERS,
    _REKEY_FACT_INDEX,
    # 4: the lookup index (issue 26, registry/index.py): each hash a log entry is about, with the
    # entry's leaf index, the field it was found in and the entry's kind; and how many leaves are
    # indexed. Derived from the log alone (registry reindex rebuilds it), so never exported: a
    # restored store starts at size 0 and indexes its log at the next start.
    """
CREATE TABLE IF NOT EXISTS registry_lookup (
    hash       BLOB NOT NULL,     -- 32 bytes: SHA-256 of what the entry is about
    leaf_index INTEGER NOT NULL,
    field      TEXT NOT NULL,     -- registry/index.py FIELDS
    kind       TEXT NOT NULL,     -- registry/index.py KINDS
    PRIMARY KEY (hash, leaf_index, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS registry_lookup_size (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    size INTEGER NOT NULL         -- leaves [0, size) are in registry_lookup
)
""",
)

# The same steps in PostgreSQL's DDL (BYTEA, BIGINT, identity columns; docs/adr/0020).
_REGISTRY_MIGRATIONS_POSTGRESQL: Final = (
    """
CREATE TABLE IF NOT EXISTS registry_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS registry_contracts (
    adapter_id      TEXT NOT NULL,
    adapter_version TEXT NOT NULL,
    contract_hash   TEXT NOT NULL,
    declaration     TEXT NOT NULL,  -- the parsed declaration, JSON (as published)
    entry           TEXT NOT NULL,  -- the current signed entry, JSON
    leaf_index      BIGINT NOT NULL,  -- the latest log leaf recording this entry
    seq             BIGINT NOT NULL,  -- publication order
    PRIMARY KEY (adapter_id, adapter_version)
);
CREATE TABLE IF NOT EXISTS registry_api_keys (
    key_id       TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    scopes       TEXT NOT NULL,     -- JSON array
    label        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    revoked      BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS registry_fact_index (
    seq        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    entity     TEXT NOT NULL,
    relation   TEXT NOT NULL,
    scope      TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS registry_fact_by_entity ON registry_fact_index (entity, relation, scope);
CREATE INDEX IF NOT EXISTS registry_fact_by_relation ON registry_fact_index (relation, scope)
""",
    _BIND_PUBLISHERS,
    _REKEY_FACT_INDEX,
    """
CREATE TABLE IF NOT EXISTS registry_lookup (
    hash       BYTEA NOT NULL,     -- 32 bytes: SHA-256 of what the entry is about
    leaf_index BIGINT NOT NULL,
    field      TEXT NOT NULL,     -- registry/index.py FIELDS
    kind       TEXT NOT NULL,     -- registry/index.py KINDS
    PRIMARY KEY (hash, leaf_index, field)
);
CREATE TABLE IF NOT EXISTS registry_lookup_size (
    id   BIGINT PRIMARY KEY CHECK (id = 1),
    size BIGINT NOT NULL         -- leaves [0, size) are in registry_lookup
)
""",
)
REGISTRY_MIGRATIONS: Final = Migrations(
    sqlite=_REGISTRY_MIGRATIONS_SQLITE, postgresql=_REGISTRY_MIGRATIONS_POSTGRESQL
)
_SELECT_CONTRACTS: Final = (
    "SELECT adapter_id, adapter_version, contract_hash, declaration, entry, leaf_index, seq "
    "FROM registry_contracts"
)
# registry_meta: set once every fact-index row is keyed by digest (schema version 3).
_INDEX_KEYS: Final = ("fact_index_keys", "sha256")


def index_key(text: str) -> str:
    """How the fact index files an entity or a relation: the hex SHA-256 of its UTF-8
    (docs/adr/0017)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_legacy_index_key(value: object) -> bool:
    """Whether a stored index column still holds an entity or relation as text (schema version
    2): every entity and relation has a ``:``, a digest never does."""
    return ":" in str(value)


@dataclass(frozen=True, slots=True)
class DegradedRecord:
    """A stored record the registry cannot index or read: reported, never fatal (docs/adr/0017).
    ``kind`` is ``fact`` (``id`` its FactHash) or ``contract`` (``id`` ``adapter_id@version``)."""

    kind: str
    id: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{kind, id, code, message}``."""
        return {"kind": self.kind, "id": self.id, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ContractRow:
    """One published (adapter_id, adapter_version)."""

    adapter_id: str
    adapter_version: str
    contract_hash: str
    declaration: dict[str, Any]
    entry: dict[str, Any]
    leaf_index: int
    seq: int


class RegistryTables:
    """The registry's tables in one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.conn
        # Records found unreadable or unindexable (start-up, catalog reads), in the order found.
        self.degraded: tuple[DegradedRecord, ...] = ()

    @classmethod
    def open(cls, path: Path, *, store: Store | None = None) -> RegistryTables:
        """Open, creating the tables when absent; with ``store``, share its connection (a log
        append and a row insert in one transaction)."""
        store = store if store is not None else Store.open(path, create=True)
        store.migrate("registry", REGISTRY_MIGRATIONS)
        return cls(store)

    def close(self) -> None:
        self.store.close()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction, durable on return; nested calls join it."""
        with self.store.write() as conn:
            yield conn

    # -- meta ---------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM registry_meta WHERE key = $1", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (inside the caller's transaction, or its own)."""
        sql = "INSERT INTO registry_meta(key, value) VALUES ($1, $2) "
        sql += "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
        self.conn.execute(sql, (key, value))

    # -- contracts ----------------------------------------------------------------------------

    def contracts(self) -> list[ContractRow]:
        """Every readable published contract, in publication order; an unreadable row goes to
        :attr:`degraded` instead."""
        rows = self.conn.execute(f"{_SELECT_CONTRACTS} ORDER BY seq").fetchall()
        good: list[ContractRow] = []
        for row in rows:
            try:
                good.append(_contract_row(row))
            except (ValueError, TypeError) as e:
                self.report(
                    DegradedRecord("contract", f"{row[0]}@{row[1]}", "store.corrupt", str(e))
                )
        return good

    def report(self, record: DegradedRecord) -> None:
        """Add ``record`` to :attr:`degraded` (once)."""
        if all((r.kind, r.id) != (record.kind, record.id) for r in self.degraded):
            self.degraded = (*self.degraded, record)

    def get_contract(self, adapter_id: str, adapter_version: str) -> ContractRow | None:
        """One published contract, or None."""
        row = self.conn.execute(
            f"{_SELECT_CONTRACTS} WHERE adapter_id = $1 AND adapter_version = $2",
            (adapter_id, adapter_version),
        ).fetchone()
        return None if row is None else _contract_row(row)

    def insert_contract(self, row: ContractRow) -> None:
        """Insert a new contract row (inside the caller's transaction)."""
        self.conn.execute(
            "INSERT INTO registry_contracts VALUES ($1, $2, $3, $4, $5, $6, $7)",
            (
                row.adapter_id,
                row.adapter_version,
                row.contract_hash,
                _dump(row.declaration),
                _dump(row.entry),
                row.leaf_index,
                row.seq,
            ),
        )

    def update_entry(
        self,
        adapter_id: str,
        adapter_version: str,
        declaration: dict[str, Any],
        entry: dict[str, Any],
        leaf: int,
    ) -> None:
        """Replace the declaration and signed entry of a contract after a lifecycle change."""
        self.conn.execute(
            "UPDATE registry_contracts SET declaration = $1, entry = $2, leaf_index = $3 "
            "WHERE adapter_id = $4 AND adapter_version = $5",
            (_dump(declaration), _dump(entry), leaf, adapter_id, adapter_version),
        )

    def next_seq(self) -> int:
        rows = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM registry_contracts")
        return int(rows.fetchall()[0][0])  # an aggregate: one row

    # -- fact index (for GET /v1/facts?entity=&relation=&scope=) -------------------------------

    def index_facts(self, rows: Sequence[tuple[str, str, str, str, float]]) -> None:
        """Index (hash, entity, relation, scope, confidence) rows by :func:`index_key`, in the
        caller's transaction; known hashes are ignored."""
        keyed = [(h, index_key(e), index_key(r), s, c) for h, e, r, s, c in rows]
        with self.transaction() as conn:
            conn.insert_rows(
                "registry_fact_index",
                ("hash", "entity", "relation", "scope", "confidence"),
                keyed,
                skip_existing=True,
            )

    def unindexed(self, fact_hashes: Sequence[str]) -> list[str]:
        """The hashes among ``fact_hashes`` (hex) that have no index row."""
        missing: list[str] = []
        for offset in range(0, len(fact_hashes), 500):
            chunk = list(fact_hashes[offset : offset + 500])
            marks = numbered(1, len(chunk))
            sql = f"SELECT hash FROM registry_fact_index WHERE hash IN ({marks})"  # noqa: S608
            known = {str(row[0]) for row in self.conn.execute(sql, chunk)}
            missing.extend(h for h in chunk if h not in known)
        return missing

    def rekey_fact_index(self) -> int:
        """Convert index rows still holding text (schema version 2) to :func:`index_key` digests
        in place, once (recorded in ``registry_meta``); returns the rows converted."""
        if self.get_meta(_INDEX_KEYS[0]) == _INDEX_KEYS[1]:
            return 0
        with self.transaction() as conn:
            rows = conn.execute(  # is_legacy_index_key, in SQL
                "SELECT seq, entity, relation FROM registry_fact_index "
                "WHERE entity LIKE '%:%' OR relation LIKE '%:%'"
            ).fetchall()
            conn.executemany(
                "UPDATE registry_fact_index SET entity = $1, relation = $2 WHERE seq = $3",
                [(index_key(str(e)), index_key(str(r)), int(seq)) for seq, e, r in rows],
            )
            self.set_meta(*_INDEX_KEYS)
        return len(rows)

    def fact_index_size(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM registry_fact_index").fetchall()[0][0])

    def query_facts(
        self,
        *,
        entity: str | None,
        relation: str | None,
        scopes: frozenset[str],
        min_confidence: float,
        limit: int,
    ) -> list[str]:
        """FactHashes matching the filters, oldest first, only in ``scopes``."""
        if not scopes:
            return []
        params: list[Any] = [*sorted(scopes), min_confidence]
        clauses = [f"scope IN ({numbered(1, len(scopes))})", f"confidence >= ${len(params)}"]
        if entity is not None:
            params.append(index_key(entity))
            clauses.append(f"entity = ${len(params)}")
        if relation is not None:
            params.append(index_key(relation))
            clauses.append(f"relation = ${len(params)}")
        params.append(limit)
        sql = "SELECT hash FROM registry_fact_index WHERE " + " AND ".join(clauses)  # noqa: S608
        sql += f" ORDER BY seq LIMIT ${len(params)}"
        return [row[0] for row in self.conn.execute(sql, params)]

    # -- lookup index (GET /v1/lookup/{hash}; registry/index.py, registry/lookup.py) ----------

    def lookup_size(self) -> int:
        """How many leaves, from index 0, the lookup index holds."""
        row = self.conn.execute("SELECT size FROM registry_lookup_size WHERE id = 1").fetchone()
        return 0 if row is None else int(row[0])

    def add_lookup_rows(self, rows: Sequence[tuple[bytes, int, str, str]], size: int) -> None:
        """File (hash, leaf_index, field, kind) rows and record that leaves [0, size) are
        indexed, in the caller's transaction; rows already filed are ignored."""
        with self.transaction() as conn:
            conn.insert_rows(
                "registry_lookup", ("hash", "leaf_index", "field", "kind"), rows, skip_existing=True
            )
            conn.execute(
                "INSERT INTO registry_lookup_size(id, size) VALUES (1, $1) "
                "ON CONFLICT(id) DO UPDATE SET size = excluded.size",
                (size,),
            )

    def clear_lookup(self) -> None:
        """Empty the lookup index (``registry reindex``), in the caller's transaction."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM registry_lookup")
            conn.execute("DELETE FROM registry_lookup_size")

    def lookup(
        self, digest: bytes, *, after: int, below: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """At most ``limit`` ``(leaf_index, kind, field)`` rows filed under ``digest`` with
        ``after < leaf_index < below``, in leaf order."""
        return [
            (int(index), str(kind), str(field))
            for index, kind, field in self.conn.execute(
                "SELECT leaf_index, kind, field FROM registry_lookup "
                "WHERE hash = $1 AND leaf_index > $2 AND leaf_index < $3 "
                "ORDER BY leaf_index, field LIMIT $4",
                (digest, after, below, limit),
            )
        ]

    # -- API keys -----------------------------------------------------------------------------

    def add_api_key(self, key: ApiKey, created_at: str) -> None:
        """Store a key's digest, scopes and publisher bindings (never the token)."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO registry_api_keys"
                "(key_id, token_sha256, scopes, label, created_at, publishers) "
                "VALUES ($1, $2, $3, $4, $5, $6)",
                (
                    key.key_id,
                    key.token_sha256,
                    json.dumps(list(key.scopes)),
                    key.label,
                    created_at,
                    json.dumps(list(key.publishers)),
                ),
            )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """A key that is not revoked, or None."""
        row = self.conn.execute(
            "SELECT key_id, token_sha256, scopes, label, publishers FROM registry_api_keys "
            "WHERE key_id = $1 AND revoked = 0",
            (key_id,),
        ).fetchone()
        if row is None:
            return None
        return ApiKey(
            key_id=row[0],
            token_sha256=row[1],
            scopes=tuple(json.loads(row[2])),
            label=row[3],
            publishers=tuple(json.loads(row[4])),
        )

    def bind_api_key(self, key_id: str, publishers: Sequence[str]) -> bool:
        """Add publisher bindings to a key that is not revoked; False when there is none."""
        with self.transaction():
            row = self.conn.execute(
                "SELECT publishers FROM registry_api_keys WHERE key_id = $1 AND revoked = 0",
                (key_id,),
            ).fetchone()
            if row is None:
                return False
            merged = list(dict.fromkeys([*json.loads(row[0]), *publishers]))
            self.conn.execute(
                "UPDATE registry_api_keys SET publishers = $1 WHERE key_id = $2",
                (json.dumps(merged), key_id),
            )
        return True

    def list_api_keys(self) -> list[dict[str, Any]]:
        """Key ids, scopes, publisher bindings, labels and dates (no digests)."""
        rows = self.conn.execute(
            "SELECT key_id, scopes, label, created_at, revoked, publishers FROM registry_api_keys "
            "ORDER BY created_at"
        ).fetchall()
        return [
            {
                "key_id": r[0],
                "scopes": json.loads(r[1]),
                "publishers": json.loads(r[5]),
                "label": r[2],
                "created_at": r[3],
                "revoked": bool(r[4]),
            }
            for r in rows
        ]

    def revoke_api_key(self, key_id: str) -> bool:
        """Revoke a key; False when there is no such key."""
        with self.transaction():
            cursor = self.conn.execute(
                "UPDATE registry_api_keys SET revoked = 1 WHERE key_id = $1", (key_id,)
            )
        return bool(cursor.rowcount > 0)


def open_tables(path: Path | str, *, key_dir: Path | None = None) -> RegistryTables:
    """Open the registry tables for CLI commands (``registry keys ...``), creating the database
    as the service does, but only while no log key in ``key_dir`` (default: ``keys`` beside the
    database) has signed heads: else the database was lost, and a new one would fork the log
    (docs/adr/0005).

    Raises:
        ``log.state_mismatch``: the database is missing or empty and a log state file exists.
    """
    if is_postgres_url(path):  # a PostgreSQL database: the log refuses a lost one itself
        FactStore.connect(str(path)).close()
        return RegistryTables.open(Path("postgresql"), store=Store.connect(str(path)))
    path = Path(path)
    folder = key_dir if key_dir is not None else path.parent / "keys"
    refuse_lost_database(path, sorted(folder.glob("*.logstate-*.json")) if folder.is_dir() else [])
    try:
        private_database(path, tighten=True)
    except OSError as e:
        raise RegistryError(
            "registry.data_dir_invalid", f"{path}: cannot create: {e.strerror}"
        ) from e
    FactStore.open(path, create=True).close()
    return RegistryTables.open(path)


def refuse_lost_database(path: Path, state_files: Sequence[Path]) -> None:
    """Refuse a missing or empty database when a log key has signed heads (its state files).

    Raises:
        ``log.state_mismatch``: naming the first state file.
    """
    if not state_files:
        return
    missing = not path.exists()
    if missing or path.stat().st_size == 0:
        what = "missing" if missing else "empty"
        raise LogError(
            "log.state_mismatch",
            f"{path} is {what}, but the log key has signed heads ({state_files[0]}): refusing to "
            "initialise a new, empty log under the same key (a fork); restore the database",
            details={"state_file": str(state_files[0])},
        )


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _contract_row(row: tuple[Any, ...]) -> ContractRow:
    declaration, entry = json.loads(row[3]), json.loads(row[4])
    return ContractRow(row[0], row[1], row[2], declaration, entry, int(row[5]), int(row[6]))
