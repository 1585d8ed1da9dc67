"""Migrate, export and import a registry's store: portable, verifiable, either store kind.

``affidavit registry export DIR`` writes every table the registry's store holds (the log, the
fact store, the registry's own tables) as JSON Lines, one file per table, read in one snapshot,
and a ``manifest.json`` naming each file's SHA-256, the schema versions, and the log's size, root
and latest checkpoint. ``affidavit registry import DIR`` checks all of that before it writes:
every file's hash, the root recomputed from the level-0 leaf hashes, the checkpoint's signature
under the log's own key, each fact's hash recomputed from its body. Then it restores every row
in one write transaction into an empty store of either kind (SQLite or PostgreSQL), and proves
the result: the log's stored tree is audited node by node and its root must be the dump's.

Rows are copied as they are, so the dump is exactly the store (heads as handed out, key history,
API-key digests, never a token); bytes are written as ``{"b64": ...}``. The key folder (private
keys and the log's signed state files, docs/adr/0005) is not in the dump: it moves with the data
folder (docs/postgresql.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.storage import COMPONENT as LOG_COMPONENT
from affidavit.attest.log.storage import MIGRATIONS as LOG_MIGRATIONS
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.sqlite import Store
from affidavit.registry.db import REGISTRY_MIGRATIONS
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import NoteVerifier, parse_note, verify_checkpoint
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT, root_of
from affidavit.verify.json.strict import load_object, loads
from affidavit.verify.lineage.facts import parse_fact

__all__ = ["FORMAT", "TABLES", "export_store", "import_store", "migrate_store"]

FORMAT: Final = "affidavit.registry-export/v1"

# table -> (columns, ORDER BY): every table of the three components, in an order that inserts
# cleanly (no foreign keys between them).
TABLES: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "log_meta": (("key", "value"), "key"),
    "log_keys": (
        ("seq", "key_id", "public_key", "valid_from", "tree_size", "root_hash", "statement"),
        "seq",
    ),
    "log_nodes": (("level", "idx", "hash"), "level, idx"),
    "log_entries": (("idx", "data"), "idx"),
    "log_heads": (("seq", "kind", "tree_size", "root_hash", "timestamp", "document"), "seq"),
    "registry_meta": (("key", "value"), "key"),
    "registry_contracts": (
        (
            "adapter_id",
            "adapter_version",
            "contract_hash",
            "declaration",
            "entry",
            "leaf_index",
            "seq",
        ),
        "seq",
    ),
    "registry_api_keys": (
        ("key_id", "token_sha256", "scopes", "label", "created_at", "revoked", "publishers"),
        "key_id",
    ),
    "registry_fact_index": (
        ("seq", "hash", "entity", "relation", "scope", "confidence"),
        "seq",
    ),
    "meta": (("key", "value"), "key"),  # the fact store's format marker
    "facts": (("hash", "scope", "body"), "hash"),
    "edges": (("source", "derived"), "source, derived"),
}
# Identity columns whose PostgreSQL sequence must follow explicit values after an import.
_IDENTITIES: Final = (("log_heads", "seq"), ("registry_fact_index", "seq"))
_PAGE: Final = 5000


def _open(location: str | Path) -> tuple[Store, FactStore]:
    """The store and the fact store at ``location``, created and migrated when absent."""
    facts = FactStore.at(location, create=True)
    store = Store.at(location, create=True)
    store.migrate(LOG_COMPONENT, LOG_MIGRATIONS)
    store.migrate("registry", REGISTRY_MIGRATIONS)
    return store, facts


def migrate_store(location: str | Path) -> dict[str, dict[str, int]]:
    """Bring every component at ``location`` to the schema this Affidavit knows.

    Returns ``{component: {"before": v, "after": v}}``.

    Raises:
        StoreSchemaTooNew: a component was written by a newer Affidavit (nothing is changed).
    """
    facts = FactStore.at(location, create=True)
    facts.close()
    store = Store.at(location, create=True)
    try:
        before = {c: store.schema_version(c) for c in (LOG_COMPONENT, "registry")}
        store.migrate(LOG_COMPONENT, LOG_MIGRATIONS)
        store.migrate("registry", REGISTRY_MIGRATIONS)
        return {
            c: {"before": before[c], "after": store.schema_version(c)}
            for c in (LOG_COMPONENT, "registry")
        }
    finally:
        store.close()


# -- export -----------------------------------------------------------------------------------


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"], validate=True)
    return value


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


def export_store(location: str | Path, directory: str | Path) -> dict[str, Any]:
    """Write the dump of the store at ``location`` into the new folder ``directory``.

    Returns the manifest. The folder appears whole or not at all (written beside it, renamed).

    Raises:
        UsageError: ``directory`` exists and is not empty.
        StoreError, LogError: the store cannot be read.
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
            for table in TABLES:
                digest, count = hashlib.sha256(), 0
                with open(work / f"{table}.jsonl", "wb") as out:
                    for row in _rows(db, table):
                        line = json.dumps([_encode(v) for v in row], ensure_ascii=False)
                        data = (line + "\n").encode("utf-8")
                        out.write(data)
                        digest.update(data)
                        count += 1
                files[f"{table}.jsonl"], counts[table] = digest.hexdigest(), count
            manifest = {
                "format": FORMAT,
                "source": store.kind,
                "schema": {c: store.schema_version(c) for c in (LOG_COMPONENT, "registry")},
                "log": _log_summary(store),
                "counts": counts,
                "files": files,
            }
        body = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        (work / "manifest.json").write_text(body, encoding="utf-8")
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


def _bad(message: str, **details: Any) -> RegistryError:
    return RegistryError("registry.dump_invalid", message, details=details)


def _read_dump(directory: Path) -> tuple[dict[str, Any], dict[str, list[list[Any]]]]:
    """The manifest and every table's rows, each file checked against its manifest hash."""
    try:
        manifest = load_object((directory / "manifest.json").read_bytes(), what="manifest")
    except FileNotFoundError:
        raise _bad(f"{directory}: no manifest.json (not an export)") from None
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise _bad(f"{directory}: manifest.json is not a {FORMAT} manifest")
    if set(manifest["files"]) != {f"{t}.jsonl" for t in TABLES}:
        raise _bad(f"{directory}: the manifest does not list exactly the store's tables")
    tables: dict[str, list[list[Any]]] = {}
    for table in TABLES:
        name = f"{table}.jsonl"
        try:
            data = (directory / name).read_bytes()
        except FileNotFoundError:
            raise _bad(f"{directory}: {name} is missing", file=name) from None
        if hashlib.sha256(data).hexdigest() != manifest["files"][name]:
            raise _bad(
                f"{name}: SHA-256 differs from the manifest (edited or truncated)", file=name
            )
        rows = [loads(line) for line in data.decode("utf-8").splitlines()]
        width = len(TABLES[table][0])
        if any(not isinstance(r, list) or len(r) != width for r in rows):
            raise _bad(f"{name}: a row is not a list of {width} values", file=name)
        tables[table] = [[_decode(v) for v in row] for row in rows]
    return manifest, tables


def _check_log(manifest: dict[str, Any], tables: dict[str, list[list[Any]]]) -> None:
    """The dump's log is the tree its manifest and its checkpoint name."""
    log = manifest.get("log") or {}
    leaves = [bytes(row[2]) for row in tables["log_nodes"] if row[0] == 0]
    size = int(log.get("tree_size", -1))
    if len(leaves) != size or root_of(leaves).hex() != log.get("root_hash"):
        raise _bad("the dump's leaf hashes do not give the manifest's tree size and root")
    note = log.get("checkpoint")
    if note is None:
        return
    key = Ed25519PublicKey.from_b64(str(log.get("public_key")))
    signatures = parse_note(note).signatures
    name = signatures[0].name if signatures else ""
    try:
        checkpoint = verify_checkpoint(
            note, [NoteVerifier(name, key_id_c2sp(name, key.raw), key)]
        ).checkpoint
    except errors.SignatureError as e:
        raise _bad(f"the dump's checkpoint does not verify under its log key: {e}") from None
    if checkpoint.tree_size > size:
        raise _bad("the dump's checkpoint covers leaves the dump does not hold")


def _check_facts(tables: dict[str, list[list[Any]]]) -> None:
    for key, _scope, body in tables["facts"]:
        fact = parse_fact(loads(body), what="exported fact")
        if fact.hash != bytes(key).hex():
            raise _bad(f"exported fact {bytes(key).hex()} hashes to {fact.hash}")


def import_store(location: str | Path, directory: str | Path) -> dict[str, Any]:
    """Restore the dump in ``directory`` into the empty store at ``location``.

    Returns ``{"tree_size", "root_hash", "counts"}``.

    Raises:
        RegistryError ``registry.dump_invalid``: a file is missing or edited, the leaves do not
            give the manifest's root, the checkpoint does not verify, a fact's hash is wrong, or
            the dump's schema is newer than this Affidavit's. Nothing is written.
        RegistryError ``registry.store_not_empty``: the target already holds a log, contracts,
            keys or facts. Nothing is written.
    """
    manifest, tables = _read_dump(Path(directory))
    known = {LOG_COMPONENT: len(LOG_MIGRATIONS), "registry": len(REGISTRY_MIGRATIONS)}
    for component, version in (manifest.get("schema") or {}).items():
        if int(version) > known.get(component, 0):
            raise _bad(f"the dump's {component} schema {version} is newer than this Affidavit's")
    _check_log(manifest, tables)
    _check_facts(tables)
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
                columns = TABLES[table][0]
                marks = ", ".join("?" * len(columns))
                if rows:
                    db.executemany(
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",  # noqa: S608
                        rows,
                    )
            if store.kind == "postgresql":
                for table, column in _IDENTITIES:
                    db.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "  # noqa: S608 - fixed names
                        f"COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)"
                    )
            size = int(manifest["log"]["tree_size"])
            if not tables["log_meta"]:  # the dump holds no log (exported before the first start)
                return {"tree_size": 0, "root_hash": EMPTY_ROOT.hex(), "counts": _counts(tables)}
            log = TransparencyLog(store, owns_store=False)
            try:  # every stored node must be the hash of its children (docs/adr/0005)
                log.verify_integrity(full=True)
            except LogError as e:
                raise _bad(f"the dump's stored tree is damaged: {e.message}") from None
            if log.size != size or log.root(size).hex() != manifest["log"]["root_hash"]:
                raise _bad("the restored log's root is not the dump's")
    finally:
        facts.close()
        store.close()
    return {"tree_size": size, "root_hash": manifest["log"]["root_hash"], "counts": _counts(tables)}


def _counts(tables: dict[str, list[list[Any]]]) -> dict[str, int]:
    return {table: len(rows) for table, rows in tables.items()}
