"""The contract catalog (seed 003 "Register"): built-ins, then every ``*.adapter_contract.json``
under the contracts directory, then published contracts (rows and log leaves, :func:`leaf_data`),
as one immutable :class:`Snapshot` whose response bytes are computed once per change.

>>> snap = Snapshot.build([], node_url="http://127.0.0.1:8080")
>>> snap.list_bytes(None)
b'{"contracts":[],"count":0}'

A directory file that does not lint clean, or whose ``adapter_id`` is a built-in's, is logged and
skipped (built-ins win); a published contract replaces a directory one of the same identity and
``contract_hash``; loaded contracts are signed but not logged (configuration). Identity is
(adapter_id, adapter_version); the active head of an id is the highest semver among its
``active`` rows (:func:`affidavit.verify.contracts.lifecycle.active_head`).
:class:`ContractCatalog` runs on the database thread: one manifest change per write batch, its
``generated_at`` the last change's time, so the bytes stay identical between changes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, Final, Literal

from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.publishing.publish import build_entry, build_manifest, sign_entry
from affidavit.registry.db import ContractRow, RegistryTables
from affidavit.registry.errors import RegistryError
from affidavit.registry.index import CONTRACT_RECORD_TYPE
from affidavit.registry.settings import Settings
from affidavit.registry.writer import Batch
from affidavit.verify import errors
from affidavit.verify.contracts.contract import lint_contract
from affidavit.verify.contracts.lifecycle import active_head, exact_match, parse_semver
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.forms import format_utc
from affidavit.verify.json.strict import load_object

__all__ = [
    "CONTRACT_RECORD_TYPE",
    "STATUSES",
    "CatalogRecord",
    "ContractCatalog",
    "Snapshot",
    "Source",
    "declaration_url",
    "leaf_data",
    "require_clean",
]

_LOG = logging.getLogger("affidavit.registry")
STATUSES: Final = ("active", "deprecated", "revoked")
_CONTRACT_SUFFIX: Final = ".adapter_contract.json"
# registry_meta: the publication number of the next new contract row (read once per write batch;
# the table's MAX(seq) is a full scan)
_SEQ_KEY: Final = "next_contract_seq"
# registry_meta: the digest of the configured contracts at the last recorded change
_LOADED_DIGEST: Final = "manifest_loaded_digest"
_MAX_CONTRACT_BYTES: Final = 1024 * 1024
Source = Literal["builtin", "directory", "published"]


def declaration_url(node_url: str, adapter_id: str, adapter_version: str) -> str:
    """Where a declaration is served (the entry's ``declaration_url``)."""
    return f"{node_url}/protocol/adapter-contracts/{adapter_id}/{adapter_version}"


@dataclass(frozen=True, slots=True)
class CatalogRecord:
    """One contract: its declaration (lifecycle fields current), its signed entry, and origin."""

    declaration: Mapping[str, Any]
    entry: Mapping[str, Any]
    source: Source
    leaf_index: int | None = None

    @property
    def adapter_id(self) -> str:
        return str(self.declaration["adapter_id"])

    @property
    def adapter_version(self) -> str:
        return str(self.declaration["adapter_version"])

    @property
    def status(self) -> str:
        """Lifecycle status; missing means active."""
        return str(self.entry.get("status") or "active")


def _summary(record: CatalogRecord) -> dict[str, Any]:
    entry = record.entry
    return {
        "adapter_id": record.adapter_id,
        "adapter_version": record.adapter_version,
        "contract_hash": entry.get("contract_hash", ""),
        "input_schema_hash": entry.get("input_schema_hash", ""),
        "status": record.status,
        "distribution_channel": entry.get("distribution_channel", ""),
        "published_at": entry.get("published_at", ""),
        "supersedes": entry.get("supersedes", ""),
        "replaced_by": entry.get("replaced_by", ""),
        "declaration_url": entry.get("declaration_url", ""),
        "entry_hash": entry.get("entry_hash", ""),
        "source": record.source,
    }


def _dump(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _order(record: CatalogRecord) -> tuple[str, tuple[int, int, int]]:
    # A row stored before leading zeros were refused (SemVer 2.0.0 §2) still lists, first.
    try:
        return record.adapter_id, parse_semver(record.adapter_version)
    except errors.ContractError as e:
        if e.code != "pin.invalid_argument":
            raise
        return record.adapter_id, (-1, -1, -1)


@dataclass(slots=True)
class Snapshot:
    """All contracts at one moment, sorted by (adapter_id, semver). Response bytes are memoized,
    so identical state always yields identical bytes."""

    records: tuple[CatalogRecord, ...]
    node_url: str
    _cache: dict[Any, bytes] = field(default_factory=dict)
    _by_id: dict[str, list[CatalogRecord]] | None = None  # built on the first find
    _keys: tuple[tuple[str, tuple[int, int, int]], ...] = ()  # _order of each record

    @classmethod
    def build(cls, records: Iterable[CatalogRecord], *, node_url: str) -> Snapshot:
        """A snapshot of ``records`` (deduplicated by identity, later sources win)."""
        by_key: dict[tuple[str, str], CatalogRecord] = {}
        for record in records:
            by_key[(record.adapter_id, record.adapter_version)] = record
        keyed = sorted(((_order(r), r) for r in by_key.values()), key=lambda pair: pair[0])
        return cls(
            records=tuple(r for _, r in keyed),
            node_url=node_url,
            _keys=tuple(k for k, _ in keyed),
        )

    def updated(self, changes: Iterable[CatalogRecord]) -> Snapshot:
        """This snapshot with ``changes`` put in, as :meth:`build` of everything would order them,
        each placed by bisection (a write batch changes a few)."""
        records, keys = list(self.records), list(self._keys)
        changes_seen = list(changes)
        for record in changes_seen:
            key = _order(record)
            at = bisect.bisect_left(keys, key)
            identity = (record.adapter_id, record.adapter_version)
            while at < len(keys) and keys[at] == key:
                if (records[at].adapter_id, records[at].adapter_version) == identity:
                    records[at] = record
                    break
                at += 1
            else:
                at = bisect.bisect_right(keys, key)
                records.insert(at, record)
                keys.insert(at, key)
        changed = Snapshot(records=tuple(records), node_url=self.node_url, _keys=tuple(keys))
        if self._by_id is not None:  # carried over: only the changed ids' lists are rebuilt
            by_id = dict(self._by_id)
            for adapter_id in {r.adapter_id for r in changes_seen}:  # contiguous, sorted by id
                low = bisect.bisect_left(keys, (adapter_id,))
                high = bisect.bisect_left(keys, (adapter_id + "\x00",))
                by_id[adapter_id] = records[low:high]
            changed._by_id = by_id
        return changed

    def find(self, adapter_id: str, adapter_version: str | None = None) -> CatalogRecord | None:
        """The exact (id, version), or the active head of ``adapter_id`` when version is None
        (among that id's records only: O(1) in the catalog's size)."""
        if self._by_id is None:
            by_id: dict[str, list[CatalogRecord]] = {}
            for record in self.records:
                by_id.setdefault(record.adapter_id, []).append(record)
            self._by_id = by_id
        rows = [self._row(r) for r in self._by_id.get(adapter_id, ())]
        if adapter_version is None:
            hit = active_head(rows, adapter_id)
        else:
            hit = exact_match(rows, adapter_id, adapter_version)
        return None if hit is None else hit["_record"]

    @staticmethod
    def _row(record: CatalogRecord) -> dict[str, Any]:
        return {
            "adapter_id": record.adapter_id,
            "adapter_version": record.adapter_version,
            "status": record.status,
            "_record": record,
        }

    def list_bytes(self, status: str | None) -> bytes:
        """``{contracts: [summary...], count}`` filtered by status, as bytes (memoized)."""
        key = ("list", status)
        cached = self._cache.get(key)
        if cached is None:
            chosen = [_summary(r) for r in self.records if status is None or r.status == status]
            cached = _dump({"contracts": chosen, "count": len(chosen)})
            self._cache[key] = cached
        return cached

    def record_bytes(self, adapter_id: str, adapter_version: str | None) -> bytes | None:
        """The wire form of one contract (exact or active head) as bytes, or None (memoized)."""
        key = ("record", adapter_id, adapter_version)
        cached = self._cache.get(key)
        if cached is None:
            record = self.find(adapter_id, adapter_version)
            if record is None:
                return None
            cached = _dump(  # the wire form of one contract
                {
                    "contract": dict(record.declaration),
                    "entry": dict(record.entry),
                    "source": record.source,
                    "leaf_index": record.leaf_index,
                }
            )
            self._cache[key] = cached
        return cached

    def entries(self) -> list[dict[str, Any]]:
        """Signed entries in manifest order: (adapter_id, semver adapter_version)."""
        return [dict(r.entry) for r in self.records]


def leaf_data(entry: Mapping[str, Any], declaration: Mapping[str, Any]) -> bytes:
    """The log leaf for a signed entry: ``jcs({record_type, entry, declaration})`` (docs/formats.md
    §1, §3); the declaration rides along so the log alone can rebuild the registry."""
    return jcs(
        {
            "record_type": CONTRACT_RECORD_TYPE,
            "entry": dict(entry),
            "declaration": dict(declaration),
        }
    )


class ContractCatalog:
    """The loaded and published contracts, their snapshot, the signed manifest and the fixed
    documents served beside them. Methods run on the database thread; the routes read
    :attr:`snapshot`, :attr:`manifest` and :attr:`version` as they are (swapped whole)."""

    def __init__(
        self,
        settings: Settings,
        key: SigningKey,
        tables: RegistryTables,
        clock: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.key = key
        self.tables = tables
        self._clock = clock
        self.builtin_ids: frozenset[str] = frozenset()
        self.loaded: list[CatalogRecord] = []  # built-in and directory records, in load order
        self.records: dict[tuple[str, str], CatalogRecord] = {}  # every record, by identity
        self.snapshot = Snapshot.build([], node_url=settings.node_url)
        self.manifest: tuple[bytes, str] | None = None  # (bytes, ETag) of the snapshot, lazily
        # The manifest_version the snapshot was built at: another instance on the same database
        # bumps it when it publishes (docs/adr/0013), and :meth:`sync` rebuilds the snapshot then.
        self.version: str | None = None
        self.documents: dict[str, bytes] = {}  # fixed response bodies, built on first use

    def now(self) -> str:
        """The clock as ``YYYY-MM-DDTHH:MM:SSZ`` (docs/formats.md §4: the tree-head form)."""
        return format_utc(self._clock())

    # -- start-up (seed 003 "Register") ---------------------------------------------------------

    def start(self, log: TransparencyLog) -> None:
        """Load the configured contracts, replay what the rows missed of ``log``, build the
        snapshot."""
        builtins = [self._loaded(decl, "builtin") for decl in _builtin_declarations()]
        self.builtin_ids = frozenset(r.adapter_id for r in builtins)
        self.loaded = [*builtins, *self._directory_records()]
        self.reconcile(log)
        self.refresh()

    def _directory_records(self) -> list[CatalogRecord]:
        folder = self.settings.contracts_dir
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
            if ident[0] in self.builtin_ids:
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
            records.append(self._loaded(declaration, "directory"))
        return records

    def _loaded(self, declaration: dict[str, Any], source: str) -> CatalogRecord:
        channel = "aigentsy.examples" if source == "builtin" else "developer.local"
        published_at = str(declaration.get("published_at") or "")
        entry = self.entry_for(declaration, published_at, channel)
        return CatalogRecord(declaration=declaration, entry=entry, source=source)  # type: ignore[arg-type]

    def entry_for(
        self, declaration: Mapping[str, Any], published_at: str, default_channel: str
    ) -> dict[str, Any]:
        """The entry of ``declaration``, signed with the publisher key (docs/formats.md §3)."""
        settings = self.settings
        entry = build_entry(
            declaration,
            publisher_id=settings.publisher_id,
            publisher_key_id=settings.key_id,
            published_at=published_at,
            status=str(declaration.get("status") or "active"),
            distribution_channel=str(declaration.get("distribution_channel") or default_channel),
            declaration_url=declaration_url(
                settings.node_url,
                str(declaration["adapter_id"]),
                str(declaration["adapter_version"]),
            ),
            supersedes=str(declaration.get("supersedes") or ""),
            replaced_by=str(declaration.get("replaced_by") or ""),
        )
        return sign_entry(entry, self.key)

    # -- rows from log leaves ---------------------------------------------------------------------

    def _apply_entry(
        self,
        entry: Mapping[str, Any],
        declaration: Mapping[str, Any],
        leaf: int,
        next_seq: Callable[[], int] | None = None,
        *,
        new: bool | None = None,
    ) -> None:
        """Insert or update the row for a logged entry in the caller's transaction;
        ``next_seq`` numbers a new row (a batch, which then records ``applied_leaf`` itself);
        ``new``: whether the row is new, when the caller knows."""
        tables = self.tables
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

    def reconcile(self, log: TransparencyLog) -> int:
        """Replay contract leaves of ``log`` the tables have not seen; returns how many."""
        tables = self.tables
        applied_text = tables.get_meta("applied_leaf")
        start = int(applied_text) + 1 if applied_text is not None else 0
        size = log.size
        count = 0
        for index in range(start, size):
            try:
                record = load_object(log.leaf(index), what=f"leaf {index}")
            except errors.ParseError:
                continue
            if record.get("record_type") != CONTRACT_RECORD_TYPE:
                continue
            with tables.transaction():
                self._apply_entry(record["entry"], record["declaration"], index)
            count += 1
        if size > start:  # every leaf below size was looked at: the next start begins there
            with tables.transaction():
                tables.set_meta("applied_leaf", str(size - 1))
                tables.set_meta(_SEQ_KEY, str(tables.next_seq()))
        if count:
            _LOG.warning("replayed %d logged registry entries missing from the tables", count)
        return count

    # -- the snapshot and the manifest ----------------------------------------------------------

    def _bump_manifest(self) -> str:
        """Record a change in the caller's transaction: a new manifest version and
        generated_at; returns the version."""
        tables = self.tables
        with tables.transaction():
            version = str(int(tables.get_meta("manifest_version") or "0") + 1)
            tables.set_meta("manifest_version", version)
            tables.set_meta("manifest_generated_at", self.now())
            tables.set_meta(_LOADED_DIGEST, _digest(self.loaded))
        return version

    def _rebuild(self, version: str | None) -> None:
        """The one rebuild of the records and snapshot, as of the manifest ``version`` read
        before them; the manifest is built again on the next GET."""
        records: dict[tuple[str, str], CatalogRecord] = {
            (record.adapter_id, record.adapter_version): record for record in self.loaded
        }
        for row in self.tables.contracts():
            records[(row.adapter_id, row.adapter_version)] = _published(
                row.declaration, row.entry, row.leaf_index
            )
        self.records = records
        self.snapshot = Snapshot.build(records.values(), node_url=self.settings.node_url)
        self.manifest = None
        self.version = version

    def refresh(self) -> None:
        """At start: rebuild, and record a change when the configured contracts changed."""
        tables = self.tables
        self._rebuild(tables.get_meta("manifest_version"))
        stored = tables.get_meta(_LOADED_DIGEST)
        if stored is None:  # kept by an older Affidavit: the digest of every entry
            changed = tables.get_meta("manifest_entries_digest") != _digest(self.snapshot.records)
        else:
            changed = stored != _digest(self.loaded)
        if changed:
            self.version = self._bump_manifest()
        elif stored is None:
            with tables.transaction():
                tables.set_meta(_LOADED_DIGEST, _digest(self.loaded))

    def sync(self) -> bool:
        """Rebuild when another instance changed the catalog (its ``manifest_version`` moved;
        docs/adr/0013: version checks, so an answer never lags a committed write); returns
        whether it rebuilt."""
        current = self.tables.get_meta("manifest_version")
        if current == self.version:
            return False
        self._rebuild(current)
        return True

    def ensure_manifest(self) -> tuple[bytes, str]:
        """The manifest bytes and ETag, built and signed on first use after a change."""
        self.sync()
        cached = self.manifest
        if cached is not None:
            return cached
        tables, settings = self.tables, self.settings
        manifest = build_manifest(
            self.snapshot.entries(),
            self.key,
            publisher_id=settings.publisher_id,
            publisher_key_id=settings.key_id,
            generated_at=tables.get_meta("manifest_generated_at") or self.now(),
            manifest_version=tables.get_meta("manifest_version") or "1",
        )
        manifest["verify_url"] = f"{settings.node_url}/protocol/merkle/public-key"
        body = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        self.manifest = (body, '"' + hashlib.sha256(body).hexdigest() + '"')
        return self.manifest

    # -- a write batch's publications (registry/publication.py) ---------------------------------

    def stage(
        self,
        entry: Mapping[str, Any],
        declaration: Mapping[str, Any],
        leaf: int,
        batch: Batch,
        *,
        new: bool,
    ) -> None:
        """Inside the batch's transaction: store the row (``new``: the caller found none) and
        keep the record for :meth:`finish`."""
        tables = self.tables

        def next_seq() -> int:
            if "catalog_seq" not in batch:  # the counter, else (a database written before it) read
                stored = tables.get_meta(_SEQ_KEY)
                batch["catalog_seq"] = int(stored) if stored else tables.next_seq()
            seq: int = batch["catalog_seq"]
            batch["catalog_seq"] = seq + 1
            return seq

        self._apply_entry(entry, declaration, leaf, next_seq, new=new)
        batch["catalog_leaf"] = max(leaf, batch.get("catalog_leaf", -1))
        staged: dict[tuple[str, str], CatalogRecord] = batch.setdefault("catalog", {})
        staged[(str(entry["adapter_id"]), str(entry["adapter_version"]))] = _published(
            declaration, entry, leaf
        )

    def finish(self, batch: Batch) -> Callable[[], None] | None:
        """Once per batch, before COMMIT: one manifest change; returns the snapshot swap to run
        once committed."""
        staged = batch.get("catalog")
        if not staged:  # every job of the batch found its answer stored: nothing changed
            return None
        records = dict(self.records)
        records.update(staged)
        snapshot = self.snapshot.updated(staged.values())
        version = self._bump_manifest()
        self.tables.set_meta("applied_leaf", str(batch["catalog_leaf"]))  # the batch's last leaf
        if "catalog_seq" in batch:  # rows inserted: the number of the next one
            self.tables.set_meta(_SEQ_KEY, str(batch["catalog_seq"]))

        def swap() -> None:
            self.records, self.snapshot, self.version = records, snapshot, version
            self.manifest = None  # rebuilt on the next GET

        return swap

    def forget(self) -> None:
        """The batch rolled back: the next :meth:`sync` rebuilds."""
        self.version = None


def _builtin_declarations() -> list[dict[str, Any]]:
    folder = files("affidavit.registry").joinpath("builtin_contracts")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(_CONTRACT_SUFFIX))
    return [load_object(folder.joinpath(name).read_bytes(), what=name) for name in names]


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


def _digest(records: Iterable[CatalogRecord]) -> str:
    """The digest of ``records``' entries: of the configured contracts, what can change between
    starts without a recorded change (an older Affidavit kept every entry's)."""
    return hashlib.sha256(
        "\n".join(str(r.entry["entry_hash"]) for r in records).encode()
    ).hexdigest()


def _published(
    declaration: Mapping[str, Any], entry: Mapping[str, Any], leaf: int
) -> CatalogRecord:
    return CatalogRecord(
        declaration=dict(declaration), entry=dict(entry), source="published", leaf_index=leaf
    )
