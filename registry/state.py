"""The running registry's state, opened once per process by
:func:`affidavit.registry.startup.open_state`.

Every writing database object lives on the one database thread (:class:`DbThread`); long reads
run on reader threads with their own connections (:meth:`RegistryState.read`), so they never
stall writes. One key signs entries, manifests and tree heads (seed 003 "Contract publication
attestation").
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
from affidavit.verify.json.forms import format_utc

__all__ = ["ReadView", "RegistryState", "StoreHealth", "utc_now"]

_LOG = logging.getLogger("affidavit.registry")
T = TypeVar("T")


@dataclass(slots=True)
class StoreHealth:
    """What ``/v1/health`` says of the store: read once at start, and probed now."""

    database: str  # the database setting the probe opens its own connection to
    report: dict[str, Any] = field(default_factory=dict)  # {kind, schema}
    _probe: StoreProbe | None = None

    def probe(self) -> StoreProbe:
        """The store probe (its own thread and connection), made on first use."""
        if self._probe is None:
            self._probe = StoreProbe(self.database)
        return self._probe

    def close(self) -> None:
        """Close the probe, if one was made."""
        if self._probe is not None:
            self._probe.close()


@dataclass(slots=True)
class RegistryState:
    """Everything a request handler needs, as typed services; mutable only through the catalog
    (snapshot swaps) and the database thread."""

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
        """Run ``fn(view, *args)`` on a reader thread's read-only :class:`ReadView`: sees what
        was committed before the call; must not write."""
        assert self.readers is not None
        return await self.readers.run(fn, *args)

    async def read_single(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read` without a transaction, for one statement (one round trip, not three)."""
        assert self.readers is not None
        return await self.readers.run_single(fn, *args)

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read`, blocking (start-up and tests)."""
        assert self.readers is not None
        return self.readers.call(fn, *args)

    def hidden(self) -> tuple[str, ...]:
        """What a client must not read in an error (``public_body``): the store and folders."""
        settings = self.settings
        database = settings.database
        found = [database, redact(database), str(settings.database_path)]
        found += [str(settings.key_dir), str(settings.data_dir), str(self.tables.store.path)]
        return tuple(dict.fromkeys(found))

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
