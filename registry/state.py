"""The running registry's state: settings, clock, key, database thread, log, its writer, fact
store, catalog.

Opened once per process (:func:`affidavit.registry.startup.open_state`, by ``registry serve``
before the server starts, or by the app's lifespan) and closed on shutdown. Every writing
database object is created and used on the one database thread (:class:`DbThread`); long reads
run on a small pool of reader threads with their own connections (:meth:`RegistryState.read`), so
they never stall writes. The publisher key signs entries, manifests and tree heads: seed 003
"Contract publication attestation" (one key for the signed tree head and the manifest, no second
signing model).

This module is the record only; opening it (and the start-up refusals) lives in
:mod:`affidavit.registry.startup`, above :mod:`~affidavit.registry.publication` and the route
modules that take a :class:`RegistryState`, so nothing imports back (tests/test_layering.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from affidavit.attest.host import utc_now  # the one clock; registry.startup takes it from here
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import redact
from affidavit.registry.contracts import ContractCatalog
from affidavit.registry.db import RegistryTables
from affidavit.registry.probe import StoreProbe
from affidavit.registry.settings import Settings
from affidavit.registry.threads import DbThread, ReadPool, ReadView
from affidavit.registry.writer import LogWriter
from affidavit.verify import errors
from affidavit.verify.json.forms import format_utc

__all__ = ["ReadView", "RegistryState", "SigningKeyLike", "StoreHealth", "utc_now"]

_LOG = logging.getLogger("affidavit.registry")
SigningKeyLike = SigningKey
T = TypeVar("T")


@dataclass(slots=True)
class StoreHealth:
    """What ``/v1/health`` says of the store: its kind and each component's schema version
    (read once at start), and the probe that asks whether it answers now."""

    database: str  # the database setting the probe opens its own connection to
    report: dict[str, Any] = field(default_factory=dict)  # {kind, schema}
    _probe: StoreProbe | None = None

    def probe(self) -> StoreProbe:
        """The store probe (its own thread and connection: registry/probe.py), made on first
        use; closed with the state."""
        if self._probe is None:
            self._probe = StoreProbe(self.database)
        return self._probe

    def close(self) -> None:
        """Close the probe, if one was made."""
        if self._probe is not None:
            self._probe.close()


@dataclass(slots=True)
class RegistryState:
    """Everything a request handler needs, as a few typed services: the settings and clock, the
    key, the database thread and its tables, the log and its writer, the fact store, the contract
    catalog (:class:`~affidavit.registry.contracts.ContractCatalog`), the store's health
    (:class:`StoreHealth`) and the reader pool. Mutable only through the catalog (snapshot
    swaps) and the database thread."""

    settings: Settings
    clock: Callable[[], datetime]
    key: SigningKey
    db: DbThread
    tables: RegistryTables
    log: TransparencyLog
    facts: FactStore
    catalog: ContractCatalog  # the contracts, their snapshot, manifest and fixed documents
    writer: LogWriter  # the log's write path (docs/adr/0024), started by the app's lifespan
    health: StoreHealth  # what /v1/health says of the store
    readers: ReadPool | None = None

    @property
    def unhealthy(self) -> str | None:
        """Why the log refuses to sign (docs/adr/0005), else None (the writer's)."""
        return self.writer.unhealthy

    def now(self) -> str:
        """The clock as ``YYYY-MM-DDTHH:MM:SSZ`` (verify/json/forms.py)."""
        return format_utc(self.clock())  # docs/formats.md §4: the tree-head timestamp form

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(view, *args)`` on a reader thread (:class:`ReadView`: ``facts``, ``tables``,
        ``log``, each on that thread's own read-only connection), never on the writer thread.
        Sees what was committed before the call; must not write."""
        assert self.readers is not None
        return await self.readers.run(fn, *args)

    async def read_single(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read` without a read transaction: for ``fn`` that runs one statement (one round
        trip on PostgreSQL instead of three)."""
        assert self.readers is not None
        return await self.readers.run_single(fn, *args)

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read`, blocking (start-up and tests)."""
        assert self.readers is not None
        return self.readers.call(fn, *args)

    def hidden(self) -> tuple[str, ...]:
        """What a client must not read in an error (registry/errors.py ``public_body``): the
        store's location (the URL as given and redacted, the SQLite file) and the folders."""
        settings = self.settings
        database = settings.database
        found = [database, redact(database), str(settings.database_path)]
        found += [str(settings.key_dir), str(settings.data_dir), str(self.tables.store.path)]
        return tuple(dict.fromkeys(found))

    def mark_unhealthy(self, error: errors.AffidavitError) -> None:
        """Stop signing: the stored tree contradicts a head this log signed (docs/adr/0005)."""
        self.writer.mark_unhealthy(error)

    def close(self) -> None:
        """Drain the database thread and close every connection."""
        try:
            self.health.close()
            if self.readers is not None:
                self.readers.shutdown()
            self.db.call(self._close_storage)
        finally:
            self.db.shutdown()

    def _close_storage(self) -> None:
        for closable in (self.facts, self.tables):
            try:
                closable.close()
            except Exception:  # pragma: no cover - best effort at shutdown
                _LOG.exception("closing %s failed", type(closable).__name__)
