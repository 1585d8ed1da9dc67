"""The registry's contracts as stored: start-up loading, rows from log leaves, the catalog
snapshot and the signed manifest.

Every function here runs on the database thread (:class:`affidavit.registry.threads.DbThread`).
Publications and lifecycle changes (:mod:`affidavit.registry.publication`) write through
:func:`stage` and :func:`finish_catalog`.

- Start-up (seed 003 "Register"): the five built-in example contracts, then every
  ``*.adapter_contract.json`` under the contracts directory. A file that does not parse or does not
  lint clean is logged and skipped; one whose ``adapter_id`` collides with a built-in is skipped
  (built-ins win). Loaded contracts are signed with the publisher key but not logged: they are
  configuration, re-read at every start. Published contracts are rows in the database and leaves
  in the log (:func:`leaf_data`); :func:`reconcile` replays leaves the rows have not seen.
- Manifest: one change per write batch (a new ``manifest_version``, rebuilt from the snapshot on
  the next GET); ``generated_at`` is the time of the last change (kept in the database), so the
  bytes are identical between changes, also across restarts. The snapshot is rebuilt in one place
  (:func:`refresh` at start, :func:`sync` when another instance changed the catalog).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from affidavit.attest.publishing.publish import build_entry, build_manifest, sign_entry
from affidavit.registry.catalog import CatalogRecord, Snapshot, declaration_url
from affidavit.registry.db import ContractRow
from affidavit.registry.errors import RegistryError
from affidavit.registry.index import CONTRACT_RECORD_TYPE
from affidavit.registry.state import RegistryState
from affidavit.registry.writes import Batch
from affidavit.verify import errors
from affidavit.verify.contracts.contract import lint_contract
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import load_object

__all__ = [
    "CONTRACT_RECORD_TYPE",
    "ensure_manifest",
    "entry_for",
    "finish_catalog",
    "forget_catalog",
    "leaf_data",
    "reconcile",
    "refresh",
    "require_clean",
    "stage",
    "start",
    "sync",
]

_LOG = logging.getLogger("affidavit.registry")
_CONTRACT_SUFFIX: Final = ".adapter_contract.json"
# registry_meta: the publication number of the next new contract row (read once per write batch;
# the table's MAX(seq) is a full scan)
_SEQ_KEY: Final = "next_contract_seq"
# registry_meta: the digest of the configured contracts at the last recorded change
_LOADED_DIGEST: Final = "manifest_loaded_digest"
_MAX_CONTRACT_BYTES: Final = 1024 * 1024


def leaf_data(entry: Mapping[str, Any], declaration: Mapping[str, Any]) -> bytes:
    """The log leaf for a signed entry: ``jcs({record_type, entry, declaration})`` (docs/formats.md
    §1:
    jcs for registry records). The leaf hash is ``SHA256(0x00 || leaf_data)`` (RFC 6962 §2.1).
    The declaration rides along so the log alone can rebuild the registry (:func:`reconcile`)."""
    return jcs(
        {
            "record_type": CONTRACT_RECORD_TYPE,
            "entry": dict(entry),
            "declaration": dict(declaration),
        }
    )


def _apply_entry(
    state: RegistryState,
    entry: Mapping[str, Any],
    declaration: Mapping[str, Any],
    leaf: int,
    next_seq: Callable[[], int] | None = None,
    *,
    new: bool | None = None,
) -> None:
    """Insert or update the row for a logged entry (inside the caller's transaction);
    ``next_seq`` numbers a new row (default: the table's next); ``new`` says whether the row is
    new when the caller knows (default: look). With ``next_seq`` (a batch) the caller records
    ``applied_leaf`` once for the batch."""
    tables = state.tables
    adapter_id, version = str(entry["adapter_id"]), str(entry["adapter_version"])
    if new is None:
        new = tables.get_contract(adapter_id, version) is None
    if new:
        row = ContractRow(
            adapter_id,
            version,
            str(entry["contract_hash"]),
            dict(declaration),
            dict(entry),
            leaf,
            (next_seq or tables.next_seq)(),
        )
        tables.insert_contract(row)
    else:
        tables.update_entry(adapter_id, version, dict(declaration), dict(entry), leaf)
    if next_seq is None:
        tables.set_meta("applied_leaf", str(leaf))


def reconcile(state: RegistryState) -> int:
    """Replay registry leaves the tables have not seen (a crash between the log commit and the
    row commit). Returns how many were applied. Leaves of other record types are skipped."""
    applied_text = state.tables.get_meta("applied_leaf")
    start = int(applied_text) + 1 if applied_text is not None else 0
    size = state.log.size
    count = 0
    for index in range(start, size):
        try:
            record = load_object(state.log.leaf(index), what=f"leaf {index}")
        except errors.ParseError:
            continue
        if record.get("record_type") != CONTRACT_RECORD_TYPE:
            continue
        with state.tables.transaction():
            _apply_entry(state, record["entry"], record["declaration"], index)
        count += 1
    if size > start:  # every leaf below size was looked at: the next start begins there
        with state.tables.transaction():
            state.tables.set_meta("applied_leaf", str(size - 1))
            state.tables.set_meta(_SEQ_KEY, str(state.tables.next_seq()))
    if count:
        _LOG.warning("replayed %d logged registry entries missing from the tables", count)
    return count


# ------------------------------------------------------------------------------------------
# Start-up


def start(state: RegistryState) -> None:
    """Load built-ins and the contracts directory, then build the snapshot and the manifest."""
    builtins = [_loaded(state, decl, "builtin") for decl in _builtin_declarations()]
    state.builtin_ids = frozenset(r.adapter_id for r in builtins)
    directory = _directory_records(state, state.builtin_ids)
    state.loaded = [*builtins, *directory]
    reconcile(state)
    refresh(state)


def _builtin_declarations() -> list[dict[str, Any]]:
    folder = files("affidavit.registry").joinpath("builtin_contracts")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(_CONTRACT_SUFFIX))
    return [load_object(folder.joinpath(name).read_bytes(), what=name) for name in names]


def _directory_records(state: RegistryState, builtin_ids: frozenset[str]) -> list[CatalogRecord]:
    folder = state.settings.contracts_dir
    if not folder.is_dir():
        _LOG.info("contracts directory %s does not exist; no file contracts loaded", folder)
        return []
    records: list[CatalogRecord] = []
    seen: set[tuple[str, str]] = set()
    for path in sorted(folder.rglob(f"*{_CONTRACT_SUFFIX}")):
        try:
            declaration = _read_contract(path)
        except errors.AffidavitError as e:
            _LOG.warning("skipping contract file %s: %s: %s", path, e.code, e.message)
            continue
        ident = (str(declaration["adapter_id"]), str(declaration["adapter_version"]))
        if ident[0] in builtin_ids:
            _LOG.warning(
                "skipping contract file %s: adapter_id %s is built in (built-ins win)",
                path,
                ident[0],
            )
            continue
        if ident in seen:
            _LOG.warning("skipping contract file %s: %s@%s was already loaded", path, *ident)
            continue
        seen.add(ident)
        records.append(_loaded(state, declaration, "directory"))
    return records


def _read_contract(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        data = handle.read(_MAX_CONTRACT_BYTES + 1)
    if len(data) > _MAX_CONTRACT_BYTES:
        raise errors.ParseError("json.too_large", f"over {_MAX_CONTRACT_BYTES} bytes")
    declaration = load_object(data, what="contract")
    require_clean(declaration)
    return declaration


def require_clean(declaration: Mapping[str, Any]) -> None:
    report = lint_contract(declaration)
    if not report.ok:
        problems = [issue.to_json() for issue in report.errors]
        first = problems[0]["message"] if problems else "lint failed"
        raise RegistryError(
            "registry.contract_rejected",
            f"the contract does not lint clean: {first}",
            details={"errors": problems},
        )
    for field_name in ("status", "distribution_channel"):
        if field_name in declaration and not isinstance(declaration[field_name], str):
            raise RegistryError("registry.contract_rejected", f"{field_name} must be a string")


def entry_for(
    state: RegistryState, declaration: Mapping[str, Any], published_at: str, default_channel: str
) -> dict[str, Any]:
    settings = state.settings
    entry = build_entry(
        declaration,
        publisher_id=settings.publisher_id,
        publisher_key_id=settings.key_id,
        published_at=published_at,
        status=str(declaration.get("status") or "active"),
        distribution_channel=str(declaration.get("distribution_channel") or default_channel),
        declaration_url=declaration_url(
            settings.node_url, str(declaration["adapter_id"]), str(declaration["adapter_version"])
        ),
        supersedes=str(declaration.get("supersedes") or ""),
        replaced_by=str(declaration.get("replaced_by") or ""),
    )
    return sign_entry(entry, state.key)


def _loaded(state: RegistryState, declaration: dict[str, Any], source: str) -> CatalogRecord:
    channel = "aigentsy.examples" if source == "builtin" else "developer.local"
    published_at = str(declaration.get("published_at") or "")
    entry = entry_for(state, declaration, published_at, channel)
    return CatalogRecord(declaration=declaration, entry=entry, source=source)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# Snapshot and manifest


def _digest(snapshot: Snapshot) -> str:
    """The digest an older Affidavit kept: every entry of the catalog (read once, at the first
    start after an upgrade)."""
    return hashlib.sha256(
        "\n".join(str(r.entry["entry_hash"]) for r in snapshot.records).encode()
    ).hexdigest()


def _loaded_digest(state: RegistryState) -> str:
    """The digest of the configured contracts' entries (built-in and directory, in load order):
    what can change between starts without a publication recording it. Published contracts
    change only through publications and lifecycle changes, each a recorded change."""
    return hashlib.sha256(
        "\n".join(str(r.entry["entry_hash"]) for r in state.loaded).encode()
    ).hexdigest()


def _bump_manifest(state: RegistryState) -> str:
    """Record a change: the next manifest gets a new version and generated_at (in the caller's
    transaction, so the change and its record commit together). Returns the new version."""
    tables = state.tables
    with tables.transaction():
        version = str(int(tables.get_meta("manifest_version") or "0") + 1)
        tables.set_meta("manifest_version", version)
        tables.set_meta("manifest_generated_at", state.now())
        tables.set_meta(_LOADED_DIGEST, _loaded_digest(state))
    return version


def _rebuild(state: RegistryState, version: str | None) -> None:
    """The records and the snapshot of loaded + published contracts, read now, as of the
    manifest ``version`` read before them (the one rebuild: at start and when another instance
    changed the catalog); the manifest is built again on the next GET."""
    records: dict[tuple[str, str], CatalogRecord] = {
        (record.adapter_id, record.adapter_version): record for record in state.loaded
    }
    for row in state.tables.contracts():
        records[(row.adapter_id, row.adapter_version)] = _published(
            row.declaration, row.entry, row.leaf_index
        )
    state.records = records
    state.snapshot = Snapshot.build(records.values(), node_url=state.settings.node_url)
    state.manifest = None
    state.catalog_version = version


def refresh(state: RegistryState) -> None:
    """At start: build the records and snapshot from loaded + published contracts; when the
    ordered entry hashes differ from the last manifest's (a contracts-directory change), record
    a change. Otherwise ``generated_at`` stays, so the manifest bytes stay identical."""
    _rebuild(state, state.tables.get_meta("manifest_version"))
    stored = state.tables.get_meta(_LOADED_DIGEST)
    if stored is None:  # kept by an older Affidavit: the digest of every entry
        changed = state.tables.get_meta("manifest_entries_digest") != _digest(state.snapshot)
    else:
        changed = stored != _loaded_digest(state)
    if changed:
        state.catalog_version = _bump_manifest(state)
    elif stored is None:
        with state.tables.transaction():
            state.tables.set_meta(_LOADED_DIGEST, _loaded_digest(state))


def sync(state: RegistryState) -> bool:
    """Rebuild the snapshot when another instance on the same database changed the catalog since
    it was built (its ``manifest_version`` moved; docs/adr/0013: version checks, not
    notifications, so an answer never lags a committed write). Database thread only; inside a
    write transaction it runs after the writer lock, so a publish decides on the latest rows.
    Returns whether it rebuilt."""
    current = state.tables.get_meta("manifest_version")
    if current == state.catalog_version:
        return False
    _rebuild(state, current)
    return True


def _published(
    declaration: Mapping[str, Any], entry: Mapping[str, Any], leaf: int
) -> CatalogRecord:
    return CatalogRecord(
        declaration=dict(declaration), entry=dict(entry), source="published", leaf_index=leaf
    )


def stage(
    state: RegistryState,
    entry: Mapping[str, Any],
    declaration: Mapping[str, Any],
    leaf: int,
    batch: Batch,
    *,
    new: bool,
) -> None:
    """Inside the batch's transaction: store the row (``new``: the caller found none; numbered
    after the batch's last one: the table is read once per batch), and keep the record for
    :func:`finish_catalog` (one snapshot and one manifest change per batch)."""

    def next_seq() -> int:
        if "catalog_seq" not in batch:  # the counter, else (a database written before it) read
            stored = state.tables.get_meta(_SEQ_KEY)
            batch["catalog_seq"] = int(stored) if stored else state.tables.next_seq()
        seq: int = batch["catalog_seq"]
        batch["catalog_seq"] = seq + 1
        return seq

    _apply_entry(state, entry, declaration, leaf, next_seq, new=new)
    batch["catalog_leaf"] = max(leaf, batch.get("catalog_leaf", -1))
    staged: dict[tuple[str, str], CatalogRecord] = batch.setdefault("catalog", {})
    staged[(str(entry["adapter_id"]), str(entry["adapter_version"]))] = _published(
        declaration, entry, leaf
    )


def finish_catalog(batch: Batch) -> Callable[[], None] | None:
    """Once per batch, before COMMIT: the new snapshot and one manifest change (in the batch's
    transaction); returns the swap to run once it committed."""
    staged = batch.get("catalog")
    if not staged:  # every job of the batch found its answer stored: nothing changed
        return None
    state: RegistryState = batch["catalog_state"]
    records = dict(state.records)
    records.update(staged)
    snapshot = state.snapshot.updated(staged.values())
    version = _bump_manifest(state)
    state.tables.set_meta("applied_leaf", str(batch["catalog_leaf"]))  # the batch's last leaf
    if "catalog_seq" in batch:  # rows inserted: the number of the next one
        state.tables.set_meta(_SEQ_KEY, str(batch["catalog_seq"]))

    def swap() -> None:
        state.records, state.snapshot, state.catalog_version = records, snapshot, version
        state.manifest = None  # rebuilt on the next GET

    return swap


def forget_catalog(state: RegistryState) -> None:
    """The batch rolled back: what :func:`sync` read inside it may name rows that were never
    committed, so the next :func:`sync` rebuilds."""
    state.catalog_version = None


def ensure_manifest(state: RegistryState) -> tuple[bytes, str]:
    """The manifest bytes and ETag of the current snapshot, built (and signed) on first use after
    a change. Database thread only."""
    sync(state)
    cached = state.manifest
    if cached is not None:
        return cached
    tables = state.tables
    manifest = build_manifest(
        state.snapshot.entries(),
        state.key,
        publisher_id=state.settings.publisher_id,
        publisher_key_id=state.settings.key_id,
        generated_at=tables.get_meta("manifest_generated_at") or state.now(),
        manifest_version=tables.get_meta("manifest_version") or "1",
    )
    manifest["verify_url"] = f"{state.settings.node_url}/protocol/merkle/public-key"
    body = (_pretty(manifest) + "\n").encode("utf-8")
    state.manifest = (body, '"' + hashlib.sha256(body).hexdigest() + '"')
    return state.manifest


def _pretty(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)
