"""Contracts in the registry: start-up loading, publication, lifecycle changes, the manifest.

Every function here runs on the database thread (:class:`affidavit.registry.db.DbThread`).

- Start-up (seed 003 "Register"): the five built-in example contracts, then every
  ``*.adapter_contract.json`` under the contracts directory. A file that does not parse or does not
  lint clean is logged and skipped; one whose ``adapter_id`` collides with a built-in is skipped
  (built-ins win). Loaded contracts are signed with the publisher key but not logged: they are
  configuration, re-read at every start. Published contracts are rows in the database and leaves
  in the log.
- Publication (docs/formats.md §3 "Publication in the registry's log"): lint, build the entry, sign
  it, append the leaf and store the row in one go, return the signed entry with an inclusion
  proof. The same contract again is idempotent; another contract under an existing (id,
  version) is ``registry.version_conflict``.
- Lifecycle (PATCH): only the seed 003 lifecycle fields; the new signed entry is logged too.
- Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids in its publisher
  namespaces; the operator's channels (:data:`RESERVED_CHANNELS`) need an ``admin`` key.
- Integrity (docs/adr/0005): nothing is appended while the log is unhealthy, and the tree is
  proven to extend the last signed head before each append (``log.unhealthy``, 503).
- Manifest: rebuilt from the snapshot on every change; ``generated_at`` is the time of the last
  change (kept in the database), so the bytes are identical between changes, also across restarts.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
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
from affidavit.registry.logview import inclusion_json, latest_head
from affidavit.registry.state import RegistryState
from affidavit.verify import errors
from affidavit.verify.contracts.contract import LIFECYCLE_FIELDS, contract_hash, lint_contract
from affidavit.verify.contracts.schema import is_adapter_id, is_semver
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import load_object

__all__ = [
    "LEAF_RECORD_TYPE",
    "PATCHABLE_FIELDS",
    "RESERVED_CHANNELS",
    "PublishResult",
    "leaf_data",
    "patch_lifecycle",
    "publish",
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
_MAX_CONTRACT_BYTES: Final = 1024 * 1024

PublishResult = tuple[int, dict[str, Any]]  # (HTTP status, body)


def leaf_data(entry: Mapping[str, Any], declaration: Mapping[str, Any]) -> bytes:
    """The log leaf for a signed entry: ``jcs({record_type, entry, declaration})`` (docs/formats.md
    §1:
    jcs for registry records). The leaf hash is ``SHA256(0x00 || leaf_data)`` (RFC 6962 §2.1).
    The declaration rides along so the log alone can rebuild the registry (:func:`reconcile`)."""
    return jcs(
        {"record_type": LEAF_RECORD_TYPE, "entry": dict(entry), "declaration": dict(declaration)}
    )


def _apply_entry(
    state: RegistryState, entry: Mapping[str, Any], declaration: Mapping[str, Any], leaf: int
) -> None:
    """Insert or update the row for a logged entry (inside the caller's transaction)."""
    tables = state.tables
    adapter_id, version = str(entry["adapter_id"]), str(entry["adapter_version"])
    if tables.get_contract(adapter_id, version) is None:
        row = ContractRow(
            adapter_id,
            version,
            str(entry["contract_hash"]),
            dict(declaration),
            dict(entry),
            leaf,
            tables.next_seq(),
        )
        tables.insert_contract(row)
    else:
        tables.update_entry(adapter_id, version, dict(declaration), dict(entry), leaf)
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
    return hashlib.sha256(
        "\n".join(e["entry_hash"] for e in snapshot.entries()).encode()
    ).hexdigest()


def _bump_manifest(state: RegistryState, snapshot: Snapshot) -> str:
    """Record a change: the next manifest gets a new version and generated_at (in the caller's
    transaction, so the change and its record commit together). Returns the new version."""
    tables = state.tables
    with tables.transaction():
        version = str(int(tables.get_meta("manifest_version") or "0") + 1)
        tables.set_meta("manifest_version", version)
        tables.set_meta("manifest_generated_at", state.now())
        tables.set_meta("manifest_entries_digest", _digest(snapshot))
    return version


def refresh(state: RegistryState) -> None:
    """At start: build the records and snapshot from loaded + published contracts; when the
    ordered entry hashes differ from the last manifest's (a contracts-directory change), record
    a change. Otherwise ``generated_at`` stays, so the manifest bytes stay identical."""
    records: dict[tuple[str, str], CatalogRecord] = {}
    for record in state.loaded:
        records[(record.adapter_id, record.adapter_version)] = record
    for row in state.tables.contracts():
        records[(row.adapter_id, row.adapter_version)] = _published(
            row.declaration, row.entry, row.leaf_index
        )
    snapshot = Snapshot.build(records.values(), node_url=state.settings.node_url)
    if state.tables.get_meta("manifest_entries_digest") != _digest(snapshot):
        _bump_manifest(state, snapshot)
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
    state.catalog_version = current
    return True


def _published(
    declaration: Mapping[str, Any], entry: Mapping[str, Any], leaf: int
) -> CatalogRecord:
    return CatalogRecord(
        declaration=dict(declaration), entry=dict(entry), source="published", leaf_index=leaf
    )


def _stage(
    state: RegistryState, entry: Mapping[str, Any], declaration: Mapping[str, Any], leaf: int
) -> tuple[dict[tuple[str, str], CatalogRecord], Snapshot, str]:
    """Inside the publishing transaction: store the row, record the manifest change, and return
    the records and snapshot to swap in once the transaction committed."""
    _apply_entry(state, entry, declaration, leaf)
    records = dict(state.records)
    records[(str(entry["adapter_id"]), str(entry["adapter_version"]))] = _published(
        declaration, entry, leaf
    )
    snapshot = Snapshot.build(records.values(), node_url=state.settings.node_url)
    version = _bump_manifest(state, snapshot)
    return records, snapshot, version


def _swap(
    state: RegistryState, staged: tuple[dict[tuple[str, str], CatalogRecord], Snapshot, str]
) -> None:
    state.records, state.snapshot, state.catalog_version = staged
    state.manifest = None  # rebuilt on the next GET


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
    """Refuse to append while the log is unhealthy, and prove the stored tree still extends the
    last signed head (O(log n)); a contradiction marks the log unhealthy (docs/adr/0005).

    Raises:
        LogUnhealthy: the stored tree contradicts a head this log signed (503).
    """
    if state.unhealthy is None:
        try:
            state.log.verify_integrity()
        except LogError as e:
            if e.code != "log.integrity":
                raise
            state.mark_unhealthy(e)
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


def publish(state: RegistryState, declaration: dict[str, Any], key: ApiKey) -> PublishResult:
    """Publish one contract (docs/formats.md §3) as ``key``. Returns (201, body) or, for the same
    contract again, (200, body) with the stored entry.

    Raises:
        AuthKeyUnbound, AuthPublisherForbidden: ``key`` may not write this adapter_id (403).
        RegistryChannelReserved: a reserved distribution channel without an admin key (403).
        LogUnhealthy: the log contradicts a head it signed; nothing is appended (503).
        RegistryContractRejected: it does not lint clean (422).
        RegistryVersionConflict: another contract holds (adapter_id, adapter_version), or the
            adapter_id belongs to a built-in (409).
        EntryLifecycleInvalid: bad status, channel or pointer (400).
    """
    claimed = declaration.get("adapter_id")
    if isinstance(claimed, str):
        check_publisher(key, claimed)  # ownership before anything else (docs/adr/0006)
    _check_channel(key, declaration.get("distribution_channel"))
    _require_clean(declaration)
    adapter_id = str(declaration["adapter_id"])
    check_publisher(key, adapter_id)
    version = str(declaration["adapter_version"])
    if adapter_id in state.builtin_ids:
        raise RegistryError(
            "registry.version_conflict",
            f"{adapter_id} is a built-in contract (built-ins win)",
            details={"adapter_id": adapter_id},
        )
    recomputed = contract_hash(declaration)
    # One transaction: the log and the tables share a connection, so the leaf and the row commit
    # together or not at all (reconcile() stays as a safety net for older databases). Every
    # check of what is stored runs inside it, after the writer lock: another instance on the
    # same database may have published the same version a moment ago (docs/adr/0013).
    with state.tables.transaction():
        sync(state)
        existing = state.tables.get_contract(adapter_id, version)
        if existing is not None:
            if existing.contract_hash != recomputed:
                raise _conflict(adapter_id, version, existing.contract_hash, recomputed)
            return 200, _publication_body(state, existing.entry, existing.leaf_index, created=False)
        loaded = state.snapshot.find(adapter_id, version)
        if loaded is not None and loaded.entry.get("contract_hash") != recomputed:
            raise _conflict(adapter_id, version, str(loaded.entry.get("contract_hash")), recomputed)
        published_at = state.now()
        stored = dict(declaration.items())
        stored["published_at"] = published_at
        entry = _entry_for(state, stored, published_at, "third_party")
        stored["status"] = entry["status"]
        stored["distribution_channel"] = entry["distribution_channel"]
        require_healthy(state)
        (leaf_index,) = state.log.append([leaf_data(entry, stored)])
        staged = _stage(state, entry, stored, leaf_index)
    _swap(state, staged)
    return 201, _publication_body(state, entry, leaf_index, created=True)


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


def patch_lifecycle(
    state: RegistryState, adapter_id: str, version: str, patch: Mapping[str, Any], key: ApiKey
) -> dict[str, Any]:
    """Change lifecycle fields of a published contract as ``key``; the new signed entry is logged.

    Raises:
        AuthKeyUnbound, AuthPublisherForbidden: ``key`` may not write this adapter_id (403).
        RegistryChannelReserved: a reserved channel, set or current, without an admin key (403).
        LogUnhealthy: the log contradicts a head it signed; nothing is appended (503).
        RegistryFieldNotPatchable: a key outside :data:`PATCHABLE_FIELDS`, or an empty patch (422).
        RegistryContractNotFound: no published contract with this id and version (404).
        EntryLifecycleInvalid: bad status or pointer (400).
    """
    check_publisher(key, adapter_id)
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
    with state.tables.transaction():  # the checks after the writer lock (docs/adr/0013)
        sync(state)
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
            return _publication_body(state, row.entry, row.leaf_index, created=False)
        require_healthy(state)
        (leaf_index,) = state.log.append([leaf_data(entry, declaration)])
        staged = _stage(state, entry, declaration, leaf_index)
    _swap(state, staged)
    return _publication_body(state, entry, leaf_index, created=True)


def _not_published(adapter_id: str, version: str) -> RegistryError:
    return RegistryError(
        "registry.contract_not_found",
        f"{adapter_id}@{version} is not a published contract (built-in and directory contracts "
        "change through their files)",
        details={"adapter_id": adapter_id, "adapter_version": version},
    )


def _publication_body(
    state: RegistryState, entry: Mapping[str, Any], leaf_index: int, *, created: bool
) -> dict[str, Any]:
    head = latest_head(state)
    return {
        "created": created,
        "entry": dict(entry),
        "leaf_index": leaf_index,
        "inclusion": inclusion_json(state, leaf_index, int(head["tree_size"])),
        "signed_tree_head": head,
    }


def lifecycle_fields(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The lifecycle fields a declaration carries (outside both hashes, seed 003)."""
    return {k: declaration[k] for k in LIFECYCLE_FIELDS if k in declaration}
