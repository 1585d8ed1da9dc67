"""The running registry's state: settings, clock, key, database thread, log, fact store, catalog.

Opened once per process by the app's lifespan (:meth:`RegistryState.open`) and closed on shutdown.
Every database object is created and used on the one database thread (:class:`DbThread`).
The publisher key signs entries, manifests and tree heads: seed 003 "Contract publication
attestation" (one key for the signed tree head and the manifest, no second signing model).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from affidavit.attest.factstore import FactStore
from affidavit.attest.keyring import SigningKey, generate_key_files, load_signing_key
from affidavit.attest.log import TransparencyLog
from affidavit.attest.store import Store
from affidavit.registry.catalog import Snapshot
from affidavit.registry.db import DbThread, RegistryTables
from affidavit.registry.settings import Settings
from affidavit.verify import errors

__all__ = ["RegistryState", "SigningKeyLike", "utc_now"]

_LOG = logging.getLogger("affidavit.registry")
SigningKeyLike = SigningKey


def utc_now() -> datetime:
    """The system clock, UTC (the default clock; tests inject a fixed one)."""
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """``%Y-%m-%dT%H:%M:%SZ`` (formats.md §4: the tree-head timestamp form, used everywhere)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class RegistryState:
    """Everything a request handler needs. Mutable only through :mod:`registry.publication`
    (snapshot swaps) and the database thread."""

    settings: Settings
    clock: Callable[[], datetime]
    key: SigningKey
    db: DbThread
    tables: RegistryTables
    log: TransparencyLog
    facts: FactStore
    snapshot: Snapshot
    builtin_ids: frozenset[str] = frozenset()
    loaded: list[Any] = field(default_factory=list)  # built-in and directory CatalogRecords
    records: dict[tuple[str, str], Any] = field(default_factory=dict)  # CatalogRecords by identity
    manifest: tuple[bytes, str] | None = None  # (bytes, ETag) of the current snapshot, built lazily
    sth_cache: dict[int, dict[str, Any]] = field(default_factory=dict)
    checkpoint_cache: dict[int, str] = field(default_factory=dict)
    documents: dict[str, bytes] = field(default_factory=dict)  # fixed response bodies

    def now(self) -> str:
        """The clock as ``%Y-%m-%dT%H:%M:%SZ``."""
        return format_time(self.clock())

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        clock: Callable[[], datetime] | None = None,
        signing_key: SigningKey | None = None,
    ) -> RegistryState:
        """Open the database (creating it), the key (generating it on first start), the log and
        the fact store, load the contracts, and build the first snapshot and manifest."""
        from affidavit.registry import publication  # noqa: PLC0415 - avoids an import cycle
        from affidavit.registry.routes_facts import reindex  # noqa: PLC0415

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        key = signing_key if signing_key is not None else _load_or_create_key(settings)
        key = key.with_labels(key_id=settings.key_id, publisher_id=settings.publisher_id)
        db = DbThread()
        try:
            clock = clock or utc_now
            tables, log, facts = db.call(_open_storage, settings, key, clock)
            state = cls(
                settings=settings,
                clock=clock,
                key=key,
                db=db,
                tables=tables,
                log=log,
                facts=facts,
                snapshot=Snapshot.build([], node_url=settings.node_url),
            )
            db.call(publication.start, state)
            db.call(reindex, state)
        except BaseException:
            db.shutdown()
            raise
        return state

    def close(self) -> None:
        """Drain the database thread and close every connection."""
        try:
            self.db.call(self._close_storage)
        finally:
            self.db.shutdown()

    def _close_storage(self) -> None:
        for closable in (self.facts, self.tables):
            try:
                closable.close()
            except Exception:  # pragma: no cover - best effort at shutdown
                _LOG.exception("closing %s failed", type(closable).__name__)


def _load_or_create_key(settings: Settings) -> SigningKey:
    path = settings.key_dir / f"{settings.key_id}.key"
    if not path.exists():
        manifest_url = f"{settings.node_url}/specs/adapter-contracts.manifest.json"
        generate_key_files(settings.key_dir, settings.publisher_id, settings.key_id, manifest_url)
        _LOG.info("generated publisher key %s in %s", settings.key_id, settings.key_dir)
    return load_signing_key(path, refuse_world_readable=True, key_id=settings.key_id)


def _open_storage(
    settings: Settings, key: SigningKey, clock: Callable[[], datetime]
) -> tuple[RegistryTables, TransparencyLog, FactStore]:
    """One database file. The fact store first: it insists on a fresh file or its own marker, and
    keeps its own connection. The log and the registry tables share one :class:`Store` connection,
    so a log append and a row change commit in one transaction."""
    path: Path = settings.database_path
    path.parent.mkdir(parents=True, exist_ok=True)
    facts = FactStore.open(path, create=True)
    store = Store.open(path, create=True)
    tables = RegistryTables.open(path, store=store)
    try:
        log = TransparencyLog.open(store, key, clock=clock)
    except errors.LogNotFound:
        log = TransparencyLog.create(store, key, settings.log_id, clock=clock)
    if log.log_id != settings.log_id:
        raise errors.UsageError(
            f"{path} holds log {log.log_id!r}, the settings say {settings.log_id!r}"
        )
    return tables, log, facts
