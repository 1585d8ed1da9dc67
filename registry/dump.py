"""A registry's store as a signed dump: export it, prove it, import it; and migrate a store
(docs/formats.md §9, docs/postgresql.md).

:func:`export_store` writes every table of :data:`TABLES` as JSON Lines, read in one snapshot,
rows as they are (never a token), with ``manifest.json`` (each file's SHA-256 and row count, the
schema versions, the log's id, key, size, root and latest checkpoint) and ``manifest.sig``, the
log's current key's signature over :func:`signed_message`. The key folder is not in the dump: it
moves with the data folder (docs/adr/0005).

:func:`import_store` trusts nothing in the folder until it is proven under ``trusted_key`` (steps
1 to 5 of docs/formats.md §9: the signature, each file, the log and its heads, each fact, each
SCITT row and sequenced entry; exit 1, or ``registry.dump_invalid``, exit 2, for a dump that
cannot be read), and only then restores every row in one transaction into an empty store of
either kind, auditing that the restored tree's root is the dump's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.keys import LogKey
from affidavit.attest.log.storage import COMPONENT as LOG_COMPONENT
from affidavit.attest.log.storage import MIGRATIONS as LOG_MIGRATIONS
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import is_postgres_url
from affidavit.attest.stores.store import Connection, Store
from affidavit.registry.db import REGISTRY_MIGRATIONS, index_key, is_legacy_index_key
from affidavit.registry.errors import RegistryError
from affidavit.registry.integrity import contract_identity_problem
from affidavit.registry.scitt import COMPONENT as SCITT_COMPONENT
from affidavit.registry.scitt import MIGRATIONS as SCITT_MIGRATIONS
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT, leaf_hash, root_of
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.json.strict import load_object, loads
from affidavit.verify.lineage.facts import parse_fact

__all__ = [
    "FORMAT",
    "TABLES",
    "export_store",
    "import_store",
    "migrate_store",
    "signature_document",
    "signed_message",
]

FORMAT: Final = "affidavit.registry-export/v1"
SIGNATURE_FORMAT: Final = "affidavit.registry-export-signature/v1"
MANIFEST: Final = "manifest.json"
SIGNATURE: Final = "manifest.sig"
_MAX_MANIFEST_BYTES: Final = 1 << 20
# component -> migrations: the schemas a dump's store holds (the fact store has none of its own).
COMPONENTS: Final = {
    LOG_COMPONENT: LOG_MIGRATIONS,
    "registry": REGISTRY_MIGRATIONS,
    SCITT_COMPONENT: SCITT_MIGRATIONS,
}
# table -> (columns, ORDER BY): every table of the three components, the log's first
# (attest/log/storage.py); meta is the fact store's format marker.
TABLES: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    table: (tuple(columns.split()), order)
    for table, columns, order in (
        ("log_meta", "key value", "key"),
        ("log_keys", "seq key_id public_key valid_from tree_size root_hash statement", "seq"),
        ("log_nodes", "level idx hash", "level, idx"),
        ("log_entries", "idx data", "idx"),
        ("log_heads", "seq kind tree_size root_hash timestamp document", "seq"),
        ("log_sequenced", "idx hash data", "idx"),
        ("registry_meta", "key value", "key"),
        (
            "registry_contracts",
            "adapter_id adapter_version contract_hash declaration entry leaf_index seq",
            "seq",
        ),
        (
            "registry_api_keys",
            "key_id token_sha256 scopes label created_at revoked publishers",
            "key_id",
        ),
        ("registry_fact_index", "seq hash entity relation scope confidence", "seq"),
        ("meta", "key value", "key"),
        ("facts", "hash scope body", "hash"),
        ("edges", "source derived", "source, derived"),
        ("scitt_entries", "entry_id leaf_index statement issuer subject registered_at", "entry_id"),
    )
}
_LOG_TABLES: Final = tuple(table for table in TABLES if table.startswith("log_"))
# Tables a dump written before they were exported may lack (issue 31): read as empty. Every
# other table must be listed (a dump is the whole store: tests/registry/test_export_tables.py).
ADDED_LATER: Final = frozenset({"log_sequenced", "scitt_entries"})
# Identity columns whose PostgreSQL sequence must follow explicit values after an import.
_IDENTITIES: Final = (("log_heads", "seq"), ("registry_fact_index", "seq"))
_PAGE: Final = 5000
Rows = list[list[Any]]


# -- the store ----------------------------------------------------------------------------------


def migrate_store(location: str | Path) -> dict[str, dict[str, int]]:
    """Bring every component at ``location`` to the schema this Affidavit knows; returns
    ``{component: {"before": v, "after": v}}``.

    Raises:
        ``store.schema_too_new``: a component was written by a newer Affidavit (nothing is changed).
    """
    FactStore.at(location, create=True).close()
    store = Store.at(location, create=True)
    try:
        before = {c: store.schema_version(c) for c in COMPONENTS}
        _migrate(store)
        return {c: {"before": before[c], "after": store.schema_version(c)} for c in COMPONENTS}
    finally:
        store.close()


def _migrate(store: Store) -> None:
    for component, migrations in COMPONENTS.items():
        store.migrate(component, migrations)


def _open(location: str | Path) -> tuple[Store, FactStore]:
    """The store and the fact store at ``location``, created and migrated when absent."""
    facts = FactStore.at(location, create=True)
    # No writer lease (docs/postgresql.md "Limits"): the import's one transaction checks the
    # restored tree in Python between statements, for longer than a lease on a large log.
    store = Store.at(location, create=True, lease=None)
    _migrate(store)
    return store, facts


def _insert(db: Connection, tables: Mapping[str, Rows]) -> None:
    """Write ``tables``' rows into a freshly migrated schema; the key history and the fact
    store's marker are the dump's."""
    for table in ("log_keys", "meta"):
        if table in tables:
            db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
    for table, rows in tables.items():
        if rows:
            db.insert_rows(table, TABLES[table][0], rows)


def _audit(log: TransparencyLog, what: str) -> None:
    """Every stored node is the hash of its children, every leaf hash its data's (docs/adr/0005).

    Raises:
        ``registry.dump_root_mismatch``: it is not.
    """
    try:
        log.verify_integrity(full=True)
    except LogError as e:
        raise _refused("registry.dump_root_mismatch", f"{what}: {e.message}") from None


def _refused(code: str, message: str, **details: Any) -> RegistryError:
    return RegistryError(code, message, details=details)


def _bad_dump(message: str, **details: Any) -> RegistryError:
    """``registry.dump_invalid`` (exit 2): the dump cannot be read as a dump."""
    return _refused("registry.dump_invalid", message, **details)


# -- export -------------------------------------------------------------------------------------


def export_store(
    location: str | Path, directory: str | Path, *, signing_key: SigningKey
) -> dict[str, Any]:
    """Write the dump of the store at ``location`` into the new folder ``directory``, signed by
    ``signing_key`` (the log's current key); returns the manifest. The folder appears whole or
    not at all (written beside it, renamed).

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
            signer = signing_key.public_key.b64
            if summary["public_key"] not in (None, signer):  # the key an import will trust
                raise LogError(  # noqa: TRY301 - the snapshot's key; the folder is removed below
                    "log.key_mismatch",
                    f"{store.path}: the log's current key is {summary['public_key']}, not the key "
                    f"{signer} the export would be signed with",
                )
            for table in TABLES:
                digest, count = hashlib.sha256(), 0
                with open(work / f"{table}.jsonl", "wb") as out:
                    for row in _rows(db, table):
                        data = _encode_row(row)
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


def _log_summary(store: Store) -> dict[str, Any]:
    """The log's id, key, size, root and latest checkpoint (empty before the first start)."""
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


def _encode_row(row: Sequence[Any]) -> bytes:
    """A row as a JSON array line, bytes as ``{"b64": ...}`` (read back by :func:`_decode_row`)."""
    values = [
        {"b64": base64.b64encode(bytes(v)).decode("ascii")}
        if isinstance(v, bytes | bytearray | memoryview)
        else v
        for v in row
    ]
    return (json.dumps(values, ensure_ascii=False) + "\n").encode("utf-8")


def signed_message(manifest: bytes) -> bytes:
    """The bytes ``manifest.sig`` signs: ``"affidavit.registry-export/v1\\n"`` then the manifest
    as stored (docs/formats.md §9). The context line keeps it from reading as another message the
    key signs: a tree head, a checkpoint or a state file."""
    return FORMAT.encode("ascii") + b"\n" + manifest


def signature_document(key: SigningKey, manifest: bytes) -> bytes:
    """The bytes of ``manifest.sig`` for ``manifest`` signed by ``key``."""
    document = {
        "format": SIGNATURE_FORMAT,
        "algorithm": "Ed25519",
        "public_key": key.public_key.b64,  # informative: the import trusts its own key
        "signature": key.sign_b64(signed_message(manifest)),
    }
    return (json.dumps(document, indent=2) + "\n").encode("ascii")


# -- import -------------------------------------------------------------------------------------


def import_store(
    location: str | Path, directory: str | Path, *, trusted_key: Ed25519PublicKey
) -> dict[str, Any]:
    """Prove the dump in ``directory`` under ``trusted_key``, then restore it into the empty
    store at ``location``; returns ``{tree_size, root_hash, counts, trusted_key, heads_verified}``.
    On any refusal nothing is written.

    Raises:
        ``registry.dump_*`` (steps 1 to 5, docs/formats.md §9): the dump is unreadable (exit 2) or
            not authentic under ``trusted_key`` (exit 1); the destination is not even opened.
        ``registry.dump_unportable``: the target is PostgreSQL and the dump holds a contract id
            outside the id bounds (docs/adr/0017).
        ``registry.store_not_empty``: the target already holds a log, contracts, keys or facts.
    """
    tables, summary = _read_dump(Path(directory), trusted_key)
    tables["registry_fact_index"] = _rekeyed(tables["registry_fact_index"])
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
            _insert(db, tables)
            if store.kind == "postgresql":
                for table, column in _IDENTITIES:
                    db.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "  # noqa: S608 - fixed names
                        f"COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)"
                    )
            if tables["log_meta"]:  # the dump holds a log (not exported before the first start)
                # Inside the transaction: a refusal here rolls every row back.
                log = TransparencyLog(store, owns_store=False)
                _audit(log, "the restored tree is damaged")
                size, root = summary["tree_size"], summary["root_hash"]
                if log.size != size or log.root(size).hex() != root:
                    raise _refused(
                        "registry.dump_root_mismatch", "the restored log's root is not the dump's"
                    )
    finally:
        facts.close()
        store.close()
    return summary


def _rekeyed(index: Rows) -> Rows:
    """The fact index rows filed by :func:`~affidavit.registry.db.index_key`, as start-up would:
    a schema-2 store's text may not fit PostgreSQL (U+0000, btree limits)."""
    return [
        [seq, fact, index_key(str(entity)), index_key(str(relation)), *rest]
        if is_legacy_index_key(entity) or is_legacy_index_key(relation)
        else [seq, fact, entity, relation, *rest]
        for seq, fact, entity, relation, *rest in index
    ]


def _check_portable(contracts: Rows) -> None:
    """Refuse contract ids PostgreSQL cannot index, stored before the id bounds (docs/adr/0017)."""
    columns = TABLES["registry_contracts"][0]
    adapter_id, version = columns.index("adapter_id"), columns.index("adapter_version")
    problems = [
        problem.id[:80]
        for row in contracts
        if (problem := contract_identity_problem(row[adapter_id], row[version])) is not None
    ]
    if problems:
        raise _refused(
            "registry.dump_unportable",
            f"{len(problems)} contract(s) have ids outside the bounds PostgreSQL can index "
            f"(docs/adr/0017), e.g. {problems[0]!r}...; restore this dump into SQLite",
            contracts=problems[:10],
        )


def _read_dump(
    folder: Path, trusted_key: Ed25519PublicKey
) -> tuple[dict[str, Rows], dict[str, Any]]:
    """The dump's rows, proven under ``trusted_key`` (steps 1 to 5), and the import's summary."""
    unverified_manifest = _read_bytes(folder / MANIFEST, "no manifest.json (not an export)")
    _check_signature(folder, unverified_manifest, trusted_key)  # step 1
    manifest = _parse_manifest(unverified_manifest)
    tables = {table: _read_table(folder, table, manifest) for table in TABLES}  # step 2
    for component, version in manifest["schema"].items():
        if not isinstance(version, int) or version > len(COMPONENTS.get(component, ())):
            raise _bad_dump(
                f"the dump's {component} schema {version} is newer than this Affidavit's"
            )
    size, root, heads = _prove_log(manifest["log"], tables, trusted_key)  # step 3
    _check_facts(tables["facts"])  # step 4
    _check_entries(tables, size)  # step 5
    return tables, {
        "tree_size": size,
        "root_hash": root,
        "counts": {table: len(rows) for table, rows in tables.items()},
        "trusted_key": trusted_key.b64,
        "heads_verified": heads,
    }


def _read_bytes(path: Path, missing: str, limit: int | None = None) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except FileNotFoundError:
        raise _bad_dump(f"{path.parent}: {missing}", file=path.name) from None
    except OSError as e:
        raise _bad_dump(f"{path}: {e.strerror or e}", file=path.name) from None
    if limit is not None and len(data) > limit:
        raise _bad_dump(f"{path}: larger than {limit} bytes", file=path.name)
    return data


def _check_signature(folder: Path, manifest: bytes, trusted_key: Ed25519PublicKey) -> None:
    """Step 1: ``manifest.sig`` is ``trusted_key``'s Ed25519 signature of the manifest."""
    path = folder / SIGNATURE
    if len(manifest) > _MAX_MANIFEST_BYTES:
        raise _bad_dump(f"{folder / MANIFEST}: larger than {_MAX_MANIFEST_BYTES} bytes")
    if not path.exists() and not path.is_symlink():
        raise _refused(
            "registry.dump_unsigned",
            f"{folder}: the manifest is not signed (no {SIGNATURE}); an unsigned dump cannot be "
            "told from an edited one",
        )
    unverified = _read_bytes(path, f"no {SIGNATURE}", _MAX_MANIFEST_BYTES)
    try:
        document = load_object(unverified, what=SIGNATURE)
        if document.get("format") != SIGNATURE_FORMAT or document.get("algorithm") != "Ed25519":
            raise _bad_dump(f"{path}: not a {SIGNATURE_FORMAT} Ed25519 signature")
        signature = decode_signature_b64(str(document.get("signature")))
        claimed = document.get("public_key")
        signer = Ed25519PublicKey.from_b64(claimed) if isinstance(claimed, str) else None
    except errors.AffidavitError as e:
        if e.code == "registry.dump_invalid":
            raise
        raise _bad_dump(f"{path}: {e.message}") from None
    try:
        verify_ed25519(trusted_key, signed_message(manifest), signature)
    except errors.SignatureError:
        by = "" if signer is None else f" (it names key {signer.b64})"
        raise _refused(
            "registry.dump_signature_invalid",
            f"{folder}: the manifest's signature does not verify under the trusted key "
            f"{trusted_key.b64}{by}",
            trusted_key=trusted_key.b64,
        ) from None


def _parse_manifest(unverified: bytes) -> dict[str, Any]:
    """The manifest (signed, so authentic), strictly parsed; a malformed one is exit 2."""
    try:
        manifest = load_object(unverified, what="manifest")
    except errors.AffidavitError as e:
        raise _bad_dump(f"manifest.json: {e.message}") from None
    counts = manifest.get("counts")
    listed = set(counts) if isinstance(counts, dict) else set()
    present = set(TABLES) - (ADDED_LATER - listed)  # an older dump may lack what came later
    if (
        manifest.get("format") != FORMAT
        or not isinstance(manifest.get("files"), dict)
        or not isinstance(counts, dict)
        or not isinstance(manifest.get("log"), dict)
        or not isinstance(manifest.get("schema"), dict)
    ):
        raise _bad_dump(f"manifest.json is not a {FORMAT} manifest")
    if set(manifest["files"]) != {f"{t}.jsonl" for t in present} or listed != present:
        raise _bad_dump("the manifest does not list exactly the store's tables")
    return manifest


def _read_table(folder: Path, table: str, manifest: Mapping[str, Any]) -> Rows:
    """Step 2: one table file, its hash and its row count as the signed manifest names them."""
    name = f"{table}.jsonl"
    if table in ADDED_LATER and table not in manifest["counts"]:
        return []  # a dump written before this table was exported (ADDED_LATER)
    data = _read_bytes(folder / name, f"{name} is missing")
    if hashlib.sha256(data).hexdigest() != manifest["files"][name]:
        raise _refused(
            "registry.dump_file_mismatch",
            f"{name}: SHA-256 differs from the signed manifest (edited or truncated)",
            file=name,
        )
    width = len(TABLES[table][0])
    try:
        parsed = [loads(line) for line in data.decode("utf-8").splitlines()]
        rows = [_decode_row(row, width) for row in parsed]
    except (errors.AffidavitError, UnicodeError, ValueError) as e:
        message = e.message if isinstance(e, errors.AffidavitError) else str(e)
        raise _bad_dump(f"{name}: {message}", file=name) from None
    if manifest["counts"][table] != len(rows):
        raise _refused(
            "registry.dump_count_mismatch",
            f"{name}: {len(rows)} rows, the signed manifest counts {manifest['counts'][table]}",
            file=name,
        )
    return rows


def _decode_row(row: Any, width: int) -> list[Any]:
    """A line of a table file as :func:`_encode_row` wrote it."""
    if not isinstance(row, list) or len(row) != width:
        raise ValueError(f"a row is not a list of {width} values")
    decoded = []
    for value in row:
        if isinstance(value, dict):
            if set(value) != {"b64"}:
                raise ValueError("a value object is not {b64}")
            try:
                value = base64.b64decode(value["b64"], validate=True)  # noqa: PLW2901 - decoded
            except (binascii.Error, TypeError) as e:
                raise ValueError(f"bad base64: {e}") from None
        decoded.append(value)
    return decoded


def _prove_log(
    summary: Mapping[str, Any], tables: Mapping[str, Rows], trusted_key: Ed25519PublicKey
) -> tuple[int, str, int]:
    """Step 3 (a to d): the manifest's ``log`` proven under ``trusted_key``; returns its size,
    root and how many recorded heads verified."""
    size, root = summary.get("tree_size"), summary.get("root_hash")
    if not isinstance(size, int) or size < 0 or not isinstance(root, str):
        raise _bad_dump("the manifest's log has no valid tree_size and root_hash")
    if not tables["log_meta"]:  # exported before the registry's first start: no log at all
        if size or root != EMPTY_ROOT.hex() or summary.get("checkpoint") is not None:
            raise _refused("registry.dump_root_mismatch", "the manifest names a log the dump lacks")
        if any(tables[table] for table in _LOG_TABLES):
            raise _bad_dump("the dump holds log rows but no log")
        return 0, root, 0
    meta = {str(row[0]): row[1] for row in tables["log_meta"]}
    for where, named in (
        ("log_meta", meta.get("public_key")),
        ("manifest", summary.get("public_key")),
    ):
        if named != trusted_key.b64:  # step a
            raise _refused(
                "registry.dump_key_mismatch",
                f"the dump's {where} names log key {named}, not the trusted key {trusted_key.b64}",
                trusted_key=trusted_key.b64,
            )
    _check_leaves(tables["log_nodes"], size, root)  # step b, from the manifest alone
    with tempfile.TemporaryDirectory(prefix="affidavit-dump-") as scratch:
        store = Store.open(Path(scratch) / "log.db", create=True)
        try:
            store.migrate(LOG_COMPONENT, LOG_MIGRATIONS)
            try:
                with store.write() as db:
                    _insert(db, {table: tables[table] for table in _LOG_TABLES})
            except errors.AffidavitError as e:
                raise _bad_dump(f"the dump's log rows cannot be a log: {e}") from None
            try:  # opening the log verifies its key history (step a)
                log = TransparencyLog(store, owns_store=False)
            except (LogError, errors.AffidavitError) as e:
                raise _refused(
                    "registry.dump_key_mismatch", f"the dump's log key history does not verify: {e}"
                ) from None
            _check_heads(log, summary.get("checkpoint"), tables["log_heads"], trusted_key, size)
            _audit(log, "the dump's tree")  # step b: every node against its children, leaf data
        finally:
            store.close()
    return size, root, len(tables["log_heads"])


def _check_leaves(nodes: Rows, size: int, root: str) -> None:
    """Step b: the level-0 hashes give the signed size and root, and the stored nodes are the
    complete subtrees of that size: ``size >> L`` at level L (attest/log/storage.py)."""
    leaves = [(row[1], row[2]) for row in nodes if row[0] == 0]
    hashes = [h for _, h in leaves]
    if (
        [i for i, _ in leaves] != list(range(len(leaves)))
        or any(not isinstance(h, bytes) or len(h) != 32 for h in hashes)
        or len(leaves) != size
        or root_of(hashes).hex() != root
    ):
        raise _refused(
            "registry.dump_root_mismatch",
            f"the dump's {len(leaves)} leaf hashes do not give the signed tree "
            f"(size {size}, root {root[:16]}...)",
        )
    if not all(isinstance(row[0], int) and isinstance(row[1], int) for row in nodes):
        raise _bad_dump("log_nodes.jsonl: a node's level or index is not an integer")
    expected = {(level, i) for level in range(size.bit_length()) for i in range(size >> level)}
    if len(nodes) != len(expected) or {(row[0], row[1]) for row in nodes} != expected:
        raise _refused(
            "registry.dump_root_mismatch",
            f"the dump's stored nodes are not the complete subtrees of a tree of size {size}",
        )


def _check_heads(
    log: TransparencyLog, claimed: object, heads: Rows, trusted_key: Ed25519PublicKey, size: int
) -> None:
    """Steps a (the history ends with the trusted key), c (``claimed``, the manifest's
    checkpoint) and d (every recorded head)."""
    history = log.key_history()
    if history[-1].public_key != trusted_key:
        raise _refused(
            "registry.dump_key_mismatch",
            f"the dump's key history ends with {history[-1].public_key.b64}, not the trusted key",
        )
    recorded = [row[5] for row in heads if row[1] == "checkpoint"]
    if claimed != (recorded[-1] if recorded else None):
        raise _refused(
            "registry.dump_checkpoint_invalid",
            "the manifest's checkpoint is not the latest checkpoint the dump's log recorded",
        )
    if claimed is not None:
        try:
            checkpoint = _verified_checkpoint(claimed, history)
        except (errors.AffidavitError, ValueError) as e:
            raise _refused(
                "registry.dump_checkpoint_invalid",
                f"the dump's checkpoint does not verify under the trusted log key: {e}",
            ) from None
        _check_root(log, checkpoint.tree_size, checkpoint.root_hash.hex(), size, "checkpoint")
    for seq, kind, tree_size, root_hash, timestamp, document in heads:
        what = f"recorded head {seq} ({kind})"
        try:
            if kind == "sth":
                unverified = load_object(str(document), what="tree head")
                entry = next((e for e in history if e.key_id == unverified.get("key_id")), None)
                if entry is None:
                    raise errors.SignatureError(
                        "treehead.signature_bad", "signed by no key of the log's history"
                    )
                sth = verify_sth(unverified, entry.public_key, windows=(entry.window,))
                signed = (sth.log_id, sth.tree_size, sth.root_hash, sth.timestamp)
                ok = signed == (log.log_id, tree_size, root_hash, timestamp)
            elif kind == "checkpoint":
                checkpoint = _verified_checkpoint(document, history)
                ok = (checkpoint.tree_size, checkpoint.root_hash.hex()) == (tree_size, root_hash)
            else:
                ok = False
        except (errors.AffidavitError, ValueError) as e:
            raise _refused("registry.dump_head_invalid", f"{what}: {e}", seq=seq) from None
        if not ok:
            raise _refused(
                "registry.dump_head_invalid",
                f"{what}: the signed head and its row disagree, or the kind is unknown",
                seq=seq,
            )
        _check_root(log, tree_size, root_hash, size, what, code="registry.dump_head_invalid")


def _verified_checkpoint(note: object, history: Sequence[LogKey]) -> Checkpoint:
    """A checkpoint note verified under the keys of the log's history (cosignatures ignored).

    Raises:
        ``checkpoint.*``: the note is not text, or does not verify under the log's keys.
    """
    if not isinstance(note, str):
        raise errors.SignatureError("checkpoint.malformed", "a checkpoint is a signed note (text)")
    signatures = parse_note(note).signatures
    name = signatures[0].name if signatures else ""
    verifiers = [
        NoteVerifier(name, key_id_c2sp(name, entry.public_key.raw), entry.public_key)
        for entry in history
    ]
    return verify_checkpoint(note, verifiers).checkpoint


def _check_root(
    log: TransparencyLog,
    tree_size: object,
    root_hash: object,
    size: int,
    what: str,
    *,
    code: str = "registry.dump_checkpoint_invalid",
) -> None:
    """The dump's tree has root ``root_hash`` at ``tree_size`` (so it extends that head)."""
    if not isinstance(tree_size, int) or not 0 <= tree_size <= size:
        raise _refused(code, f"{what} covers {tree_size} leaves; the dump holds {size}")
    try:
        actual = log.root(tree_size).hex()
    except LogError as e:
        raise _refused("registry.dump_root_mismatch", f"the dump's tree: {e.message}") from None
    if actual != root_hash:
        raise _refused(
            code,
            f"{what} names root {str(root_hash)[:16]}... at size {tree_size}; the dump's tree "
            f"has {actual[:16]}... there",
        )


def _check_facts(rows: Rows) -> None:
    """Step 4: each fact's hash recomputed from its body, text or bytes (docs/formats.md §5)."""
    for key, _scope, body in rows:
        if not isinstance(key, bytes) or not isinstance(body, str | bytes):
            raise _bad_dump("facts.jsonl: a fact row is not (hash, scope, body)")
        try:
            fact = parse_fact(loads(body), what="exported fact")
        except errors.AffidavitError as e:
            raise _bad_dump(f"facts.jsonl: fact {key.hex()}: {e.message}") from None
        if fact.hash != key.hex():
            raise _refused(
                "registry.dump_fact_mismatch",
                f"exported fact {key.hex()} hashes to {fact.hash}",
                fact=key.hex(),
            )


def _check_entries(tables: Mapping[str, Rows], tree_size: int) -> None:
    """Step 5: each SCITT row's entry ID is its statement's SHA-256 and the log's leaf at its
    index (docs/formats.md §10); each sequenced entry, past the tree, hashes to its leaf hash."""
    leaves = {int(index): data for index, data in tables["log_entries"]}
    for entry_id, leaf_index, statement, *_ in tables["scitt_entries"]:
        if not isinstance(statement, bytes) or not isinstance(leaf_index, int):
            raise _bad_dump(
                "scitt_entries.jsonl: a row is not (entry_id, leaf_index, statement...)"
            )
        entry = hashlib.sha256(statement).digest()
        if entry.hex() != entry_id or leaves.get(leaf_index) != entry:
            raise _refused(
                "registry.dump_entry_mismatch",
                f"SCITT entry {str(entry_id)[:64]}: not the SHA-256 of its statement, or not the"
                f" log's leaf {leaf_index}",
                entry_id=str(entry_id)[:64],
            )
    for index, digest, data in tables["log_sequenced"]:
        if not isinstance(index, int) or not isinstance(data, bytes):
            raise _bad_dump("log_sequenced.jsonl: a row is not (idx, hash, data)")
        if index < tree_size or digest != leaf_hash(data):
            raise _refused(
                "registry.dump_entry_mismatch",
                f"sequenced entry {index}: inside the tree, or its hash is not its data's",
                index=index,
            )
