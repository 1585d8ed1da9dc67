"""Where the registry's store calls run: one writer thread and a pool of readers.

Every write goes through :class:`DbThread` (one thread: connections never cross threads and
writes are serialised without extra locks); long reads go to :class:`ReadPool`, whose threads
each hold a :class:`ReadView` of their own, so they never queue behind the writer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.postgres import is_postgres_url
from affidavit.attest.stores.store import Store
from affidavit.registry.db import RegistryTables

__all__ = ["DbThread", "ReadPool", "ReadView"]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(slots=True)
class ReadView:
    """One reader thread's own connections to the database: read only, never write."""

    facts: FactStore
    tables: RegistryTables
    log: TransparencyLog

    def close(self) -> None:
        self.facts.close()
        self.tables.close()


class ReadPool:
    """Reader threads, each with its own :class:`ReadView`: a reader sees the last committed
    snapshot and never blocks the writer (SQLite WAL, "Concurrency")."""

    def __init__(self, location: Path | str, workers: int) -> None:
        self._path = location  # a SQLite file, or a postgresql:// URL
        self._local = threading.local()
        self._views: list[ReadView] = []
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="registry-read"
        )

    def _view(self) -> ReadView:
        view: ReadView | None = getattr(self._local, "view", None)
        if view is None:
            if is_postgres_url(self._path):
                store, facts = Store.connect(str(self._path)), FactStore.connect(str(self._path))
            else:
                store, facts = (
                    Store.open(self._path, readonly=True),
                    FactStore.open_reader(self._path),
                )
            view = ReadView(facts=facts, tables=RegistryTables(store), log=TransparencyLog(store))
            self._local.view = view
            with self._lock:
                self._views.append(view)
        return view

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        view = self._view()
        with view.tables.store.read():  # one snapshot for the whole call
            return fn(view, *args)

    async def run_single(self, fn: Callable[..., T], *args: Any) -> T:
        """As :meth:`run`, without a read transaction: for one statement."""
        return await asyncio.wrap_future(self._pool.submit(lambda: fn(self._view(), *args)))

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(view, *args)`` on a reader thread and wait."""
        return self._pool.submit(self._call, fn, *args).result()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(view, *args)`` on a reader thread without blocking the event loop."""
        return await asyncio.wrap_future(self._pool.submit(self._call, fn, *args))

    def shutdown(self) -> None:
        """Finish queued reads, stop the threads, close every reader connection."""
        self._pool.shutdown(wait=True)
        with self._lock:
            for view in self._views:
                with contextlib.suppress(Exception):  # best effort at shutdown
                    view.close()
            self._views.clear()


class DbThread:
    """The one thread that runs every write (module docstring)."""

    def __init__(self, name: str = "registry-db") -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on the database thread and wait (for start-up and tests)."""
        return self._pool.submit(fn, *args, **kwargs).result()

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on the database thread without blocking the event loop."""
        future = self._pool.submit(fn, *args, **kwargs)
        return await asyncio.wrap_future(future)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
