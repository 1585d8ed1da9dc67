"""The contract catalog: built-ins, the contracts directory and published contracts, as one
immutable snapshot whose response bytes are computed once and reused until the next change.

>>> snap = Snapshot.build([], node_url="http://127.0.0.1:8080")
>>> snap.list_bytes(None)
b'{"contracts":[],"count":0}'

Precedence (seed 003 "Register"): built-ins first; a directory file whose ``adapter_id`` collides
with a built-in is skipped (built-ins win); a published contract replaces a directory contract with
the same (id, version) and the same ``contract_hash``. Identity is (adapter_id, adapter_version);
the active head of an id is the highest semver among its ``active`` rows (seed 003 "Coexistence and
collision rules"; :func:`affidavit.verify.contracts.lifecycle.active_head`).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.contracts.lifecycle import active_head, exact_match, parse_semver

__all__ = ["STATUSES", "CatalogRecord", "Snapshot", "Source", "declaration_url", "view"]

Source = Literal["builtin", "directory", "published"]
STATUSES: Final = ("active", "deprecated", "revoked")


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
        """The contract's adapter_id."""
        return str(self.declaration["adapter_id"])

    @property
    def adapter_version(self) -> str:
        """The contract's adapter_version."""
        return str(self.declaration["adapter_version"])

    @property
    def status(self) -> str:
        """Lifecycle status; missing means active."""
        return str(self.entry.get("status") or "active")


def view(record: CatalogRecord) -> dict[str, Any]:
    """The wire form of one contract: ``{contract, entry, source, leaf_index}``."""
    return {
        "contract": dict(record.declaration),
        "entry": dict(record.entry),
        "source": record.source,
        "leaf_index": record.leaf_index,
    }


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
            cached = _dump(view(record))
            self._cache[key] = cached
        return cached

    def entries(self) -> list[dict[str, Any]]:
        """Signed entries in manifest order: (adapter_id, semver adapter_version)."""
        return [dict(r.entry) for r in self.records]
