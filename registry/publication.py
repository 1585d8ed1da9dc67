"""Contracts published through the registry (docs/formats.md §3): publication, lifecycle changes
(only the seed 003 lifecycle fields), and their answers.

Both are jobs of the one write path (:mod:`affidavit.registry.writer`) on the database thread:
each leaf is sequenced in the transaction of its row, and answered (:func:`answer`) once a signed
checkpoint covers it. Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids in its
namespaces; the operator's channels (:data:`RESERVED_CHANNELS`) need an ``admin`` key. Nothing is
sequenced while the log is unhealthy (docs/adr/0005).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import Sequenced
from affidavit.attest.log.types import InclusionProof
from affidavit.attest.publishing.publish import set_lifecycle
from affidavit.registry.auth import ApiKey, check_publisher
from affidavit.registry.contracts import leaf_data, require_clean
from affidavit.registry.errors import RegistryError
from affidavit.registry.state import RegistryState, inclusion_json, largest_head
from affidavit.registry.writer import Batch, Job
from affidavit.verify.contracts.contract import contract_hash
from affidavit.verify.contracts.schema import is_adapter_id, is_semver
from affidavit.verify.crypto.merkle import inclusion_ranges, leaf_hash

__all__ = [
    "PATCHABLE_FIELDS",
    "RESERVED_CHANNELS",
    "Authorized",
    "Published",
    "answer",
    "authorize",
    "patch_job",
    "publish_job",
    "require_healthy",
]

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


def require_healthy(state: RegistryState) -> None:
    """Refuse to write a leaf while the log is unhealthy, and prove the stored tree extends the
    last signed head, once per write batch (under the writer lock it cannot change); a
    contradiction marks the log unhealthy (docs/adr/0005).

    Raises:
        ``log.unhealthy``: the stored tree contradicts a head this log signed (503).
    """
    batch = state.writer.batch
    if state.unhealthy is None and (batch is None or not batch.get("log_verified")):
        try:
            state.log.verify_integrity()
        except LogError as e:
            if e.code != "log.integrity":
                raise
            state.writer.mark_unhealthy(e)
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
    """What a publication or a lifecycle change wrote (``created``) or found."""

    created: bool
    entry: dict[str, Any]
    leaf: Sequenced


@dataclass(frozen=True, slots=True)
class _Change:
    """What a job's prepare decided to write; ``new``: a publication's new row."""

    entry: dict[str, Any]
    declaration: dict[str, Any]
    new: bool

    @property
    def leaf(self) -> bytes:
        """The log entry this change is sequenced as (docs/formats.md §4)."""
        return leaf_data(self.entry, self.declaration)


@dataclass(frozen=True, slots=True)
class Authorized:
    """``key`` may write ``adapter_id`` (docs/adr/0006): checked before a PATCH body is read."""

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
    now, the job checks the store under the writer lock (another instance may have published
    it, docs/adr/0013). The same contract again is found (``created`` false).

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
    require_clean(declaration)  # a clean contract has a string adapter_id: authorized above
    adapter_id = str(declaration["adapter_id"])
    version = str(declaration["adapter_version"])
    if adapter_id in state.catalog.builtin_ids:
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
        loaded = state.catalog.snapshot.find(adapter_id, version)
        if loaded is not None and loaded.entry.get("contract_hash") != recomputed:
            raise _conflict(adapter_id, version, str(loaded.entry.get("contract_hash")), recomputed)
        require_healthy(state)
        published_at = state.now()
        stored = dict(declaration.items())
        stored["published_at"] = published_at
        entry = state.catalog.entry_for(stored, published_at, "third_party")
        stored["status"] = entry["status"]
        stored["distribution_channel"] = entry["distribution_channel"]
        return _Change(entry, stored, new=True)

    return _job(state, prepare)


def _job(state: RegistryState, prepare: Callable[[], Published | _Change]) -> Job[Any, Published]:
    """The job of a publication or lifecycle change: ``prepare`` finds the stored answer or the
    new entry, then sequenced as one leaf and stored as the row in the batch's transaction."""

    def apply(prepared: Published | _Change, batch: Batch) -> Published:
        if isinstance(prepared, Published):
            return prepared
        entry, declaration = prepared.entry, prepared.declaration
        (placed,) = state.log.sequence([prepared.leaf])  # checked by the writer: _entries
        catalog.stage(entry, declaration, placed.index, batch, new=prepared.new)
        return Published(True, entry, placed)

    catalog = state.catalog
    return Job(
        prepare, apply, catalog.finish, catalog.forget, lambda done: done.leaf, entries=_entries
    )


def _entries(prepared: Published | _Change) -> list[bytes]:
    return [] if isinstance(prepared, Published) else [prepared.leaf]


def _sync_once(state: RegistryState) -> None:
    """Sync the catalog once per write batch: under the writer lock it cannot change
    (docs/adr/0013)."""
    batch = state.writer.batch
    if batch is None or not batch.get("catalog_synced"):
        state.catalog.sync()
        if batch is not None:
            batch["catalog_synced"] = True


def _found(entry: Mapping[str, Any], declaration: Mapping[str, Any], leaf: int) -> Published:
    """A stored entry and its leaf, the leaf hash recomputed (RFC 9162 §2.1.1)."""
    value = leaf_hash(leaf_data(entry, declaration))
    return Published(False, dict(entry), Sequenced(leaf, value, False))


def _conflict(adapter_id: str, version: str, held: str, offered: str) -> RegistryError:
    # docs/formats.md §3: a repeated (adapter_id, adapter_version), another contract_hash.
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
    """Change lifecycle fields of a published contract; the new signed entry is logged too. An
    unchanged entry is found (``created`` false).

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
        # No contract can be stored under it (docs/adr/0017): never asked of the store.
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
        require_clean(declaration)  # the same lint as publication, before anything is signed
        published_at = str(row.entry.get("published_at", ""))
        entry = state.catalog.entry_for(declaration, published_at, "third_party")
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
    """``{created, entry, leaf_index, inclusion, signed_tree_head}`` once a signed checkpoint
    covers the leaf, the inclusion proof at the tree head's size.

    Raises:
        ``registry.integration_pending``, ``log.unhealthy``: no signed checkpoint covers the leaf
            (503).
    """
    proven = await state.writer.integrated(published.leaf)
    head = proven.signed_tree_head
    if head is None:  # a checkpoint without a tree head of its size: the latest head instead
        head = await state.read(largest_head)
        size = int(head["tree_size"])
        inclusion = await state.read(inclusion_json, published.leaf.index, size)
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
