"""The running registry's state, opened once per process by
:func:`affidavit.registry.startup.open_state`, the store probe health asks, and the recorded heads
and proofs the log routes and publication serve.

Every writing database object lives on the one database thread (:class:`DbThread`); long reads
run on reader threads with their own connections (:meth:`RegistryState.read`), so they never
stall writes. One key signs entries, manifests and tree heads (seed 003 "Contract publication
attestation"). Every head handed out was signed by the log's writer and recorded (docs/adr/0024).

>>> import asyncio, pathlib, tempfile
>>> from affidavit.attest.stores.store import Store
>>> path = pathlib.Path(tempfile.mkdtemp()) / "registry.db"
>>> Store.open(path, create=True).close()
>>> health = StoreHealth(path)
>>> asyncio.run(health.check()) is None
True
>>> health.close()
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final, TypeVar

from affidavit.attest.host import utc_now  # the one clock; registry.startup takes it from here
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import redact
from affidavit.attest.stores.store import Store
from affidavit.registry.contracts import ContractCatalog
from affidavit.registry.db import RegistryTables
from affidavit.registry.errors import RegistryError
from affidavit.registry.settings import Settings
from affidavit.registry.threads import DbThread, ReadPool, ReadView
from affidavit.registry.writer import LogWriter
from affidavit.verify.errors import AffidavitError
from affidavit.verify.json.forms import format_utc
from affidavit.verify.json.strict import load_object

__all__ = [
    "DEADLINE_S",
    "FRESH_S",
    "ReadView",
    "RegistryState",
    "StoreHealth",
    "inclusion_json",
    "largest_head",
    "recorded_head",
    "utc_now",
]

_LOG = logging.getLogger("affidavit.registry")
T = TypeVar("T")
DEADLINE_S: Final = 2.0  # how long health waits for the store's answer
FRESH_S: Final = 0.5  # how long an answer is reused
UNREACHABLE: Final = "the store cannot be reached or read"


class StoreHealth:
    """What ``/v1/health`` says of the store: its ``report`` (kind, schema), read once at start,
    and :meth:`check`, whether it is usable now: ``SELECT`` one row of ``schema_versions`` of the
    store at ``location`` (a SQLite file or a ``postgresql://`` URL) on a thread and read-only
    connection of its own (never queued behind the writer or long reads), within ``deadline_s``.

    Concurrent callers share one query in flight, an answer younger than :data:`FRESH_S` is
    reused, and a query still running at the deadline is reported as not answering while the
    next check waits on it instead of piling up another."""

    def __init__(self, location: Path | str, *, deadline_s: float = DEADLINE_S) -> None:
        self._location = location
        self.deadline_s = deadline_s
        self.report: dict[str, Any] = {}
        self._store: Store | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="registry-probe"
        )
        self._pending: concurrent.futures.Future[str | None] | None = None
        self._last: tuple[float, str | None] | None = None

    async def check(self) -> str | None:
        """None when the store answered; else why it is not usable, a reason that names no host,
        user, database or path."""
        last = self._last
        if last is not None and time.monotonic() - last[0] < FRESH_S:
            return last[1]
        if self._pending is None or self._pending.done():
            self._pending = self._pool.submit(self._query)
        try:
            return await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(self._pending)), self.deadline_s
            )
        except TimeoutError:
            _LOG.warning("health: the store did not answer within %g s", self.deadline_s)
            return f"the store did not answer within {self.deadline_s:g} s"

    def _query(self) -> str | None:
        """On the probe's own thread: the query, and the answer remembered for FRESH_S."""
        answer: str | None = None
        try:
            if self._store is None:
                self._store = Store.at(self._location, readonly=True)
            self._store.conn.execute("SELECT version FROM schema_versions LIMIT 1").fetchall()
        except AffidavitError as e:
            _LOG.warning("health: the store is not usable: %s", e)
            answer = UNREACHABLE
        self._last = (time.monotonic(), answer)
        return answer

    def close(self) -> None:
        """Stop the thread (not waiting for a query that hangs) and close the connection."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._store is not None:
            with contextlib.suppress(Exception):  # best effort at shutdown
                self._store.close()


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
    readers: ReadPool

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
        return await self.readers.run(fn, *args)

    async def read_single(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read` without a transaction, for one statement (one round trip, not three)."""
        return await self.readers.run_single(fn, *args)

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`read`, blocking (start-up and tests)."""
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


def recorded_head(log: TransparencyLog, tree_size: int) -> dict[str, Any]:
    """The most recent recorded signed tree head of ``tree_size`` leaves (one indexed read).

    Raises:
        ``registry.not_found``: no head of that size was ever handed out.
    """
    found = log.recorded_head("sth", tree_size)
    if found is None:
        raise RegistryError(
            "registry.not_found",
            f"no signed tree head of size {tree_size} was handed out",
            details={"tree_size": tree_size},
        )
    document: dict[str, Any] = load_object(found.document, what="recorded head")
    return document


def largest_head(view: ReadView) -> dict[str, Any]:
    """The recorded signed tree head of the largest size (docs/adr/0024: never signed here)."""
    found = view.log.largest_head("sth")
    return recorded_head(view.log, 0 if found is None else found.tree_size)


def inclusion_json(
    view: ReadView | RegistryState, leaf_index: int, tree_size: int
) -> dict[str, Any]:
    """The ``merkle_inclusion`` object (docs/formats.md §4) of a leaf in a tree of ``tree_size``."""
    return view.log.inclusion_proof(leaf_index, tree_size).to_json(view.log.log_id)
