"""Contracts in the registry: start-up loading, publication, lifecycle changes, the manifest.

Every function here runs on the database thread (:class:`affidavit.registry.db.DbThread`), but
:func:`answer`, on the event loop. Publications and lifecycle changes are jobs of the one write
path (:mod:`affidavit.registry.sequencer`): many commit together, their leaves are sequenced in
the same transaction as their rows, and each is answered once a signed checkpoint covers its
leaf (the integrator's, :mod:`affidavit.registry.integrator`).

- Start-up (seed 003 "Register"): the five built-in example contracts, then every
  ``*.adapter_contract.json`` under the contracts directory. A file that does not parse or does not
  lint clean is logged and skipped; one whose ``adapter_id`` collides with a built-in is skipped
  (built-ins win). Loaded contracts are signed with the publisher key but not logged: they are
  configuration, re-read at every start. Published contracts are rows in the database and leaves
  in the log.
- Publication (docs/formats.md §3 "Publication in the registry's log"): lint, build the entry, sign
  it, sequence the leaf and store the row in one transaction, return the signed entry with an
  inclusion proof under the signed tree head that first covers it. The same contract again is
  idempotent; another contract under an existing (id, version) is ``registry.version_conflict``.
- Lifecycle (PATCH): only the seed 003 lifecycle fields; the new signed entry is logged too.
- Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids in its publisher
  namespaces; the operator's channels (:data:`RESERVED_CHANNELS`) need an ``admin`` key.
- Integrity (docs/adr/0005): nothing is sequenced while the log is unhealthy, and the tree is
  proven to extend the last signed head before each integration (``log.unhealthy``, 503).
- Manifest: one change per write batch (a new ``manifest_version``, rebuilt from the snapshot on
  the next GET); ``generated_at`` is the time of the last change (kept in the database), so the
  bytes are identical between changes, also across restarts.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import Sequenced
from affidavit.attest.log.types import InclusionProof
from affidavit.attest.publishing.publish import (
    build_entry,
    build_manifest,
    set_lifecycle,
    sign_entry,
)
from affidavit.registry.auth import ApiKey, check_publisher
from affidavit.registry.catalog import CatalogRecord, Snapshot, declaration_url
from affidavit.registry.db import ContractRow
from affidavit.registry.errors import RegistryError
from affidavit.registry.logview import latest_head
from affidavit.registry.sequencer import Batch, Job
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify import errors
from affidavit.verify.contracts.contract import LIFECYCLE_FIELDS, contract_hash, lint_contract
from affidavit.verify.contracts.schema import is_adapter_id, is_semver
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.crypto.tree_ranges import inclusion_ranges
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import load_object

__all__ = [
    "LEAF_RECORD_TYPE",
    "PATCHABLE_FIELDS",
    "RESERVED_CHANNELS",
    "Authorized",
    "Published",
    "answer",
    "authorize",
    "leaf_data",
    "patch_job",
    "publish_job",
    "require_healthy",
    "start",
]

_LOG = logging.getLogger("affidavit.registry")
LEAF_RECORD_TYPE: Final = "affidavit.registry.adapter_entry.v1"
PATCHABLE_FIELDS: Final = (
    "status",
    "supersedes",
    "replaced_by",
    "min_verifier_version",
    "distribution_channel",
)
# seed 003 distribution_channel: every value but third_party names the operator's own contracts
# (built in, shipped examples, the local contracts folder): reserved for an admin key.
RESERVED_CHANNELS: Final = ("aigentsy.builtin", "aigentsy.examples", "developer.local")
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
        {"record_type": LEAF_RECORD_TYPE, "entry": dict(entry), "declaration": dict(declaration)}
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
        if record.get("record_type") != LEAF_RECORD_TYPE:
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
    _require_clean(declaration)
    return declaration


def _require_clean(declaration: Mapping[str, Any]) -> None:
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


def _entry_for(
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
    entry = _entry_for(state, declaration, published_at, channel)
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


def _rebuilt(state: RegistryState) -> tuple[dict[tuple[str, str], CatalogRecord], Snapshot]:
    """The records and the snapshot of loaded + published contracts, read now (the one
    rebuild: at start and when another instance changed the catalog)."""
    records: dict[tuple[str, str], CatalogRecord] = {
        (record.adapter_id, record.adapter_version): record for record in state.loaded
    }
    for row in state.tables.contracts():
        records[(row.adapter_id, row.adapter_version)] = _published(
            row.declaration, row.entry, row.leaf_index
        )
    return records, Snapshot.build(records.values(), node_url=state.settings.node_url)


def refresh(state: RegistryState) -> None:
    """At start: build the records and snapshot from loaded + published contracts; when the
    ordered entry hashes differ from the last manifest's (a contracts-directory change), record
    a change. Otherwise ``generated_at`` stays, so the manifest bytes stay identical."""
    records, snapshot = _rebuilt(state)
    stored = state.tables.get_meta(_LOADED_DIGEST)
    if stored is None:  # kept by an older Affidavit: the digest of every entry
        changed = state.tables.get_meta("manifest_entries_digest") != _digest(snapshot)
    else:
        changed = stored != _loaded_digest(state)
    if changed:
        _bump_manifest(state)
    elif stored is None:
        with state.tables.transaction():
            state.tables.set_meta(_LOADED_DIGEST, _loaded_digest(state))
    state.records = records
    state.snapshot = snapshot
    state.manifest = None
    state.catalog_version = state.tables.get_meta("manifest_version")


def sync(state: RegistryState) -> bool:
    """Rebuild the snapshot when another instance on the same database changed the catalog since
    it was built (its ``manifest_version`` moved; docs/adr/0013: version checks, not
    notifications, so an answer never lags a committed write). Database thread only; inside a
    write transaction it runs after the writer lock, so a publish decides on the latest rows.
    Returns whether it rebuilt."""
    current = state.tables.get_meta("manifest_version")
    if current == state.catalog_version:
        return False
    state.records, state.snapshot = _rebuilt(state)
    state.manifest = None
    state.catalog_version = current
    return True


def _published(
    declaration: Mapping[str, Any], entry: Mapping[str, Any], leaf: int
) -> CatalogRecord:
    return CatalogRecord(
        declaration=dict(declaration), entry=dict(entry), source="published", leaf_index=leaf
    )


def _stage(
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
    :func:`_finish_catalog` (one snapshot and one manifest change per batch)."""

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


def _finish_catalog(batch: Batch) -> Callable[[], None] | None:
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


def _forget_catalog(state: RegistryState) -> None:
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


# ------------------------------------------------------------------------------------------
# Publication and lifecycle


def require_healthy(state: RegistryState) -> None:
    """Refuse to write a leaf while the log is unhealthy, and prove the stored tree still extends
    the last signed head (O(log n), once per write batch: the writer lock is held, the tree
    cannot change inside it); a contradiction marks the log unhealthy (docs/adr/0005). The
    integrator proves it again before each integration: nothing joins a damaged tree.

    Raises:
        ``log.unhealthy``: the stored tree contradicts a head this log signed (503).
    """
    batch = state.sequencer.batch if state.sequencer is not None else None
    if state.unhealthy is None and (batch is None or not batch.get("log_verified")):
        try:
            state.log.verify_integrity()
        except LogError as e:
            if e.code != "log.integrity":
                raise
            state.mark_unhealthy(e)
        if batch is not None:
            batch["log_verified"] = True
    if state.unhealthy is not None:
        raise LogError("log.unhealthy", state.unhealthy, details={"retry": False})


def _check_channel(key: ApiKey, channel: object) -> None:
    if isinstance(channel, str) and channel in RESERVED_CHANNELS and not key.is_admin:
        raise RegistryError(
            "registry.channel_reserved",
            f"distribution_channel {channel} is reserved for the operator (an admin key); "
            "publish as third_party",
            details={"distribution_channel": channel, "reserved": list(RESERVED_CHANNELS)},
        )


@dataclass(frozen=True, slots=True)
class Published:
    """What a publication or a lifecycle change wrote (``created``) or found: the signed entry
    and its log leaf (index, leaf hash)."""

    created: bool
    entry: dict[str, Any]
    leaf: Sequenced


@dataclass(frozen=True, slots=True)
class _Change:
    """What a job's prepare decided to write: the new signed entry and declaration, and whether
    the contract's row is new (a publication) or exists (a lifecycle change)."""

    entry: dict[str, Any]
    declaration: dict[str, Any]
    new: bool


@dataclass(frozen=True, slots=True)
class Authorized:
    """``key`` may write ``adapter_id`` (:func:`authorize`, docs/adr/0006): the one ownership
    check a lifecycle change needs, made before its body is read."""

    key: ApiKey
    adapter_id: str


def authorize(key: ApiKey, adapter_id: str) -> Authorized:
    """Check that ``key`` may write ``adapter_id``.

    Raises:
        ``auth.key_unbound``, ``auth.publisher_forbidden``: it may not (403).
    """
    check_publisher(key, adapter_id)
    return Authorized(key, adapter_id)


def publish_job(
    state: RegistryState, declaration: dict[str, Any], key: ApiKey
) -> Job[Any, Published]:
    """Publish one contract (docs/formats.md §3) as ``key``: the checks that need no store run
    now; the job (:mod:`affidavit.registry.sequencer`) checks what is stored after the writer
    lock (another instance on the same database may have published the same version a moment
    ago, docs/adr/0013) and sequences the leaf and stores the row in the same transaction. The
    same contract again is found (``created`` false) with the stored entry.

    Raises (now or from the job):
        ``auth.key_unbound``, ``auth.publisher_forbidden``: ``key`` may not write this adapter_id
            (403).
        ``registry.channel_reserved``: a reserved distribution channel without an admin key (403).
        ``log.unhealthy``: the log contradicts a head it signed; nothing is sequenced (503).
        ``registry.contract_rejected``: it does not lint clean (422).
        ``registry.version_conflict``: another contract holds (adapter_id, adapter_version), or the
            adapter_id belongs to a built-in (409).
        ``entry.lifecycle_invalid``: bad status, channel or pointer (400).
    """
    claimed = declaration.get("adapter_id")
    if isinstance(claimed, str):  # ownership before anything else (docs/adr/0006)
        authorize(key, claimed)
    _check_channel(key, declaration.get("distribution_channel"))
    _require_clean(declaration)  # a clean contract has a string adapter_id: authorized above
    adapter_id = str(declaration["adapter_id"])
    version = str(declaration["adapter_version"])
    if adapter_id in state.builtin_ids:
        raise RegistryError(
            "registry.version_conflict",
            f"{adapter_id} is a built-in contract (built-ins win)",
            details={"adapter_id": adapter_id},
        )
    recomputed = contract_hash(declaration)

    def prepare() -> Published | _Change:
        _sync_once(state)
        existing = state.tables.get_contract(adapter_id, version)
        if existing is not None:
            if existing.contract_hash != recomputed:
                raise _conflict(adapter_id, version, existing.contract_hash, recomputed)
            return _found(existing.entry, existing.declaration, existing.leaf_index)
        loaded = state.snapshot.find(adapter_id, version)
        if loaded is not None and loaded.entry.get("contract_hash") != recomputed:
            raise _conflict(adapter_id, version, str(loaded.entry.get("contract_hash")), recomputed)
        require_healthy(state)
        published_at = state.now()
        stored = dict(declaration.items())
        stored["published_at"] = published_at
        entry = _entry_for(state, stored, published_at, "third_party")
        stored["status"] = entry["status"]
        stored["distribution_channel"] = entry["distribution_channel"]
        return _Change(entry, stored, new=True)

    return _job(state, prepare)


def _job(state: RegistryState, prepare: Callable[[], Published | _Change]) -> Job[Any, Published]:
    """The job of a publication or lifecycle change: ``prepare`` finds the stored answer
    (:class:`Published`) or the new signed entry and declaration, which are then sequenced as
    one leaf and stored as the row, in the batch's transaction (the leaf and the row commit
    together or not at all; :func:`reconcile` stays as a safety net for older databases)."""

    def apply(prepared: Published | _Change, batch: Batch) -> Published:
        if isinstance(prepared, Published):
            return prepared
        entry, declaration = prepared.entry, prepared.declaration
        (placed,) = state.log.sequence([leaf_data(entry, declaration)])
        batch["catalog_state"] = state
        _stage(state, entry, declaration, placed.index, batch, new=prepared.new)
        return Published(True, entry, placed)

    return Job(prepare, apply, _finish_catalog, lambda: _forget_catalog(state), _leaf_of)


def _leaf_of(published: Published) -> Sequenced:
    return published.leaf


def _sync_once(state: RegistryState) -> None:
    """:func:`sync`, once per write batch: inside it the writer lock is held, so what another
    instance committed cannot change until the batch commits (docs/adr/0013)."""
    batch = state.sequencer.batch if state.sequencer is not None else None
    if batch is None or not batch.get("catalog_synced"):
        sync(state)
        if batch is not None:
            batch["catalog_synced"] = True


def _found(entry: Mapping[str, Any], declaration: Mapping[str, Any], leaf: int) -> Published:
    """A stored entry and its leaf (the leaf hash recomputed from the leaf data it was logged
    as: RFC 9162 §2.1.1)."""
    value = leaf_hash(leaf_data(entry, declaration))
    return Published(False, dict(entry), Sequenced(leaf, value, False))


def _conflict(adapter_id: str, version: str, held: str, offered: str) -> RegistryError:
    # docs/formats.md §3: a repeated (adapter_id, adapter_version) with another contract_hash is
    # loud.
    return RegistryError(
        "registry.version_conflict",
        f"{adapter_id}@{version} is already published with another contract_hash",
        details={
            "adapter_id": adapter_id,
            "adapter_version": version,
            "held": held,
            "offered": offered,
        },
    )


def patch_job(
    state: RegistryState, authorized: Authorized, version: str, patch: Mapping[str, Any]
) -> Job[Any, Published]:
    """Change lifecycle fields of a published contract (``authorized``: its ownership checked,
    :func:`authorize`); the new signed entry is logged as a leaf too. An unchanged entry is
    found (``created`` false).

    Raises (now or from the job):
        ``registry.channel_reserved``: a reserved channel, set or current, without an admin key
            (403).
        ``log.unhealthy``: the log contradicts a head it signed; nothing is sequenced (503).
        ``registry.field_not_patchable``: a key outside :data:`PATCHABLE_FIELDS`, or an empty patch
            (422).
        ``registry.contract_not_found``: no published contract with this id and version (404).
        ``entry.lifecycle_invalid``: bad status or pointer (400).
    """
    key, adapter_id = authorized.key, authorized.adapter_id
    _check_channel(key, patch.get("distribution_channel"))
    bad = sorted(set(patch) - set(PATCHABLE_FIELDS))
    if bad or not patch:
        raise RegistryError(
            "registry.field_not_patchable",
            f"PATCH may change only {', '.join(PATCHABLE_FIELDS)}"
            + (f"; not {', '.join(bad)}" if bad else ""),
            details={"fields": bad, "patchable": list(PATCHABLE_FIELDS)},
        )
    for name, value in patch.items():
        if not isinstance(value, str):
            raise RegistryError(
                "registry.field_not_patchable",
                f"{name} must be a string",
                details={"fields": [name]},
            )
    if not (is_adapter_id(adapter_id) and is_semver(version)):
        # No contract can be stored under it (docs/adr/0017): answered without asking the store,
        # the same on both (U+0000 or an over-long id never reaches PostgreSQL).
        raise _not_published(adapter_id, version)

    def prepare() -> Published | _Change:
        _sync_once(state)  # the checks after the writer lock (docs/adr/0013)
        row = state.tables.get_contract(adapter_id, version)
        if row is None:
            raise _not_published(adapter_id, version)
        _check_channel(key, row.entry.get("distribution_channel"))  # the operator's contract
        declaration = dict(row.declaration)
        if "status" in patch or "replaced_by" in patch or "supersedes" in patch:
            declaration = set_lifecycle(
                declaration,
                status=str(patch.get("status", declaration.get("status") or "active")),
                replaced_by=patch.get("replaced_by"),
                supersedes=patch.get("supersedes"),
            )
        for name in ("min_verifier_version", "distribution_channel"):
            if name in patch:
                declaration[name] = patch[name]
        _require_clean(declaration)  # the same lint as publication, before anything is signed
        published_at = str(row.entry.get("published_at", ""))
        entry = _entry_for(state, declaration, published_at, "third_party")
        if entry["entry_hash"] == row.entry.get("entry_hash") and declaration == row.declaration:
            return _found(row.entry, row.declaration, row.leaf_index)
        require_healthy(state)
        return _Change(entry, declaration, new=False)

    return _job(state, prepare)


def _not_published(adapter_id: str, version: str) -> RegistryError:
    return RegistryError(
        "registry.contract_not_found",
        f"{adapter_id}@{version} is not a published contract (built-in and directory contracts "
        "change through their files)",
        details={"adapter_id": adapter_id, "adapter_version": version},
    )


async def answer(state: RegistryState, published: Published) -> dict[str, Any]:
    """The answer to a publication or lifecycle change, once a signed checkpoint covers its leaf
    (:meth:`~affidavit.registry.sequencer.Sequencer.integrated`): ``{created, entry,
    leaf_index, inclusion, signed_tree_head}``, the inclusion proof at the tree head's size. On
    the event loop.

    Raises:
        ``registry.integration_pending``, ``log.unhealthy``: no signed checkpoint covers the leaf
            (503).
    """
    sequencer = state.sequencer
    assert sequencer is not None
    proven = await sequencer.integrated(published.leaf)
    head = proven.signed_tree_head
    if head is None:  # a checkpoint without a tree head of its size: the latest head instead
        head = await state.db.run(latest_head, state)
        size = int(head["tree_size"])
        inclusion = await state.read(lambda view: _inclusion(view, published.leaf.index, size))
    else:
        index, size = published.leaf.index, proven.tree_size
        sides = tuple("left" if a <= index else "right" for a, _ in inclusion_ranges(index, size))
        proof = InclusionProof(
            index, size, proven.leaf_hash, bytes.fromhex(head["root_hash"]), proven.path, sides
        )
        inclusion = proof.to_json(state.log.log_id)
    return {
        "created": published.created,
        "entry": published.entry,
        "leaf_index": published.leaf.index,
        "inclusion": inclusion,
        "signed_tree_head": head,
    }


def _inclusion(view: ReadView, index: int, size: int) -> dict[str, Any]:
    return view.log.inclusion_proof(index, size).to_json(view.log.log_id)


def lifecycle_fields(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The lifecycle fields a declaration carries (outside both hashes, seed 003)."""
    return {k: declaration[k] for k in LIFECYCLE_FIELDS if k in declaration}
