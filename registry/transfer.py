"""Migrate, export and import a registry's store: portable, authentic, either store kind.

``affidavit registry export DIR`` writes every table the registry's store holds (the log, the
fact store, the registry's own tables) as JSON Lines, one file per table, read in one snapshot,
a ``manifest.json`` naming each file's SHA-256 and row count, the schema versions, and the log's
size, root and latest checkpoint, and ``manifest.sig``, the manifest signed by the registry's key
(the log's current key) (:mod:`affidavit.registry.dump`, docs/formats.md §9).
``affidavit registry import DIR`` proves all of that under a key the operator trusts before it
writes anything (:func:`affidavit.registry.dump.read_dump`): the signature, every file's hash and
count, the log from every leaf to the signed root, its checkpoint and every head it recorded, each
fact's hash. Then it restores every row in one write transaction into an empty store of either
kind (SQLite or PostgreSQL), and proves the result: the log's stored tree is audited node by node
and its root must be the dump's.

Rows are copied as they are, so the dump is exactly the store (heads as handed out, key history,
API-key digests, never a token); bytes are written as ``{"b64": ...}``. The key folder (private
keys and the log's signed state files, docs/adr/0005) is not in the dump: it moves with the data
folder (docs/postgresql.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import is_postgres_url
from affidavit.attest.stores.store import Store
from affidavit.registry.db import index_key, is_legacy_index_key
from affidavit.registry.dump import (
    COMPONENTS,
    FORMAT,
    MANIFEST,
    SIGNATURE,
    TABLES,
    encode_row,
    read_dump,
    signature_document,
)
from affidavit.registry.dump_log import insert_rows
from affidavit.registry.errors import RegistryError
from affidavit.registry.integrity import contract_identity_problem
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.merkle import EMPTY_ROOT

__all__ = ["FORMAT", "TABLES", "export_store", "import_store", "migrate_store"]

# Identity columns whose PostgreSQL sequence must follow explicit values after an import.
_IDENTITIES: Final = (("log_heads", "seq"), ("registry_fact_index", "seq"))
_PAGE: Final = 5000


def _open(location: str | Path) -> tuple[Store, FactStore]:
    """The store and the fact store at ``location``, created and migrated when absent."""
    facts = FactStore.at(location, create=True)
    # No writer lease (docs/postgresql.md "Limits"): the import's one transaction checks the
    # restored tree in Python between statements, for longer than a lease on a large log.
    store = Store.at(location, create=True, lease=None)
    _migrate(store)
    return store, facts


def _migrate(store: Store) -> None:
    for component, migrations in COMPONENTS.items():
        store.migrate(component, migrations)


def migrate_store(location: str | Path) -> dict[str, dict[str, int]]:
    """Bring every component at ``location`` to the schema this Affidavit knows.

    Returns ``{component: {"before": v, "after": v}}``.

    Raises:
        ``store.schema_too_new``: a component was written by a newer Affidavit (nothing is changed).
    """
    facts = FactStore.at(location, create=True)
    facts.close()
    store = Store.at(location, create=True)
    try:
        before = {c: store.schema_version(c) for c in COMPONENTS}
        _migrate(store)
        return {c: {"before": before[c], "after": store.schema_version(c)} for c in COMPONENTS}
    finally:
        store.close()


# -- export -----------------------------------------------------------------------------------


def _rows(db: Any, table: str) -> Iterator[tuple[Any, ...]]:
    columns, order = TABLES[table]
    offset = 0
    while True:
        page = db.execute(
            f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order} "  # noqa: S608 - fixed names
            f"LIMIT {_PAGE} OFFSET {offset}"
        ).fetchall()
        yield from page
        if len(page) < _PAGE:
            return
        offset += _PAGE


def _log_summary(store: Store) -> dict[str, Any]:
    """The log's id, key, size, root and latest checkpoint (an empty tree when the store holds no
    log yet: keys created before the first start)."""
    try:
        log = TransparencyLog(store, owns_store=False)
    except LogError as e:
        if e.code != "log.not_found":
            raise
        empty = {"log_id": None, "public_key": None, "tree_size": 0, "checkpoint": None}
        return {**empty, "root_hash": EMPTY_ROOT.hex()}
    size = log.size
    recorded = log.latest_checkpoint()
    return {
        "log_id": log.log_id,
        "public_key": log.public_key.b64,
        "tree_size": size,
        "root_hash": log.root(size).hex(),
        "checkpoint": recorded.document if recorded is not None else None,
    }


def _check_signer(store: Store, summary: dict[str, Any], signing_key: SigningKey) -> None:
    """The export is signed by the log's current key, the one an import will trust.

    Raises:
        ``log.key_mismatch``: the log has another current key.
    """
    log_key = summary["public_key"]
    if log_key is not None and log_key != signing_key.public_key.b64:
        raise LogError(
            "log.key_mismatch",
            f"{store.path}: the log's current key is {log_key}, not the key "
            f"{signing_key.public_key.b64} the export would be signed with",
        )


def export_store(
    location: str | Path, directory: str | Path, *, signing_key: SigningKey
) -> dict[str, Any]:
    """Write the dump of the store at ``location`` into the new folder ``directory``, its
    manifest signed by ``signing_key`` (the registry's key: the log's current key).

    Returns the manifest. The folder appears whole or not at all (written beside it, renamed).

    Raises:
        ``usage.invalid``: ``directory`` exists and is not empty.
        ``log.key_mismatch``: the store's log has another current key (nothing written).
        ``store.*``, ``log.*``: the store cannot be read.
    """
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise errors.UsageError(f"{target}: the export folder must be new or empty")
    store, facts = _open(location)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent or Path(".")))
    try:
        files: dict[str, str] = {}
        counts: dict[str, int] = {}
        with store.read() as db:
            summary = _log_summary(store)
            _check_signer(store, summary, signing_key)
            for table in TABLES:
                digest, count = hashlib.sha256(), 0
                with open(work / f"{table}.jsonl", "wb") as out:
                    for row in _rows(db, table):
                        data = encode_row(row)
                        out.write(data)
                        digest.update(data)
                        count += 1
                files[f"{table}.jsonl"], counts[table] = digest.hexdigest(), count
            manifest = {
                "format": FORMAT,
                "source": store.kind,
                "schema": {c: store.schema_version(c) for c in COMPONENTS},
                "log": summary,
                "counts": counts,
                "files": files,
            }
        body = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        (work / MANIFEST).write_bytes(body.encode("utf-8"))
        (work / SIGNATURE).write_bytes(signature_document(signing_key, body.encode("utf-8")))
        for path in work.iterdir():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
        if target.exists():
            target.rmdir()
        os.replace(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        facts.close()
        store.close()
    return manifest


# -- import -----------------------------------------------------------------------------------


def import_store(
    location: str | Path, directory: str | Path, *, trusted_key: Ed25519PublicKey
) -> dict[str, Any]:
    """Prove the dump in ``directory`` under ``trusted_key``, then restore it into the empty
    store at ``location``.

    Returns ``{"tree_size", "root_hash", "counts", "trusted_key", "heads_verified"}``.

    Raises:
        ``registry.dump_*`` (from :func:`affidavit.registry.dump.read_dump`): the
            dump is unreadable (exit 2) or not authentic under ``trusted_key`` (exit 1). Nothing
            is written, the destination is not even opened.
        ``registry.dump_unportable``: the target is PostgreSQL and the dump holds
            a contract id outside the id bounds (docs/adr/0017). Nothing is written.
        ``registry.store_not_empty``: the target already holds a log, contracts,
            keys or facts. Nothing is written.
    """
    dump = read_dump(directory, trusted_key)
    tables = {**dump.tables, "registry_fact_index": _rekeyed(dump.tables["registry_fact_index"])}
    if is_postgres_url(location):
        _check_portable(tables["registry_contracts"])
    store, facts = _open(location)
    try:
        with store.write() as db:
            for table in ("log_meta", "registry_contracts", "registry_api_keys", "facts"):
                if db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():  # noqa: S608 - fixed
                    raise RegistryError(
                        "registry.store_not_empty",
                        f"{store.path}: {table} is not empty; import restores into an empty store",
                    )
            db.execute("DELETE FROM log_keys")  # a fresh schema has none; be explicit
            db.execute("DELETE FROM meta")  # the fact store's marker comes from the dump
            for table, rows in tables.items():
                insert_rows(db, table, TABLES[table][0], rows)
            if store.kind == "postgresql":
                for table, column in _IDENTITIES:
                    db.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "  # noqa: S608 - fixed names
                        f"COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)"
                    )
            if tables["log_meta"]:  # the dump holds a log (not exported before the first start)
                _prove_restored(store, dump.log.tree_size, dump.log.root_hash)
    finally:
        facts.close()
        store.close()
    return dump.summary()


def _rekeyed(index: list[list[Any]]) -> list[list[Any]]:
    """The fact index rows as this schema files them: rows of a schema-2 store still hold entity
    and relation as text, which PostgreSQL cannot always hold (U+0000, btree limits); they are
    filed by :func:`affidavit.registry.db.index_key` here, as the registry's start-up would."""
    return [
        [seq, fact, index_key(str(entity)), index_key(str(relation)), *rest]
        if is_legacy_index_key(entity) or is_legacy_index_key(relation)
        else [seq, fact, entity, relation, *rest]
        for seq, fact, entity, relation, *rest in index
    ]


def _check_portable(contracts: list[list[Any]]) -> None:
    """Refuse, before the target is opened, contract rows PostgreSQL cannot index: ids stored by
    a SQLite registry before the id bounds (docs/adr/0017; ``registry check`` lists them)."""
    columns = TABLES["registry_contracts"][0]
    adapter_id, version = columns.index("adapter_id"), columns.index("adapter_version")
    problems = [
        problem.id[:80]
        for row in contracts
        if (problem := contract_identity_problem(row[adapter_id], row[version])) is not None
    ]
    if problems:
        raise RegistryError(
            "registry.dump_unportable",
            f"{len(problems)} contract(s) have ids outside the bounds PostgreSQL can index "
            f"(docs/adr/0017), e.g. {problems[0]!r}...; restore this dump into SQLite",
            details={"contracts": problems[:10]},
        )


def _prove_restored(store: Store, size: int, root: str) -> None:
    """Inside the import's transaction: the restored tree is whole and its root is the dump's
    (a refusal here rolls every row back)."""
    log = TransparencyLog(store, owns_store=False)
    try:  # every stored node must be the hash of its children (docs/adr/0005)
        log.verify_integrity(full=True)
    except LogError as e:
        raise RegistryError(
            "registry.dump_root_mismatch", f"the restored tree is damaged: {e.message}"
        ) from None
    if log.size != size or log.root(size).hex() != root:
        raise RegistryError(
            "registry.dump_root_mismatch", "the restored log's root is not the dump's"
        )
