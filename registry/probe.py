"""Is the store usable? One cheap query with a deadline, for ``/v1/health`` and readiness.

>>> import asyncio, pathlib, tempfile
>>> from affidavit.attest.stores.store import Store
>>> path = pathlib.Path(tempfile.mkdtemp()) / "registry.db"
>>> Store.open(path, create=True).close()
>>> probe = StoreProbe(path)
>>> asyncio.run(probe.check()) is None
True
>>> probe.close()

The probe has its own thread and read-only connection, so it never queues behind the writer or
long reads, and it reads a real table (``schema_versions``). It answers ``None`` (usable) or a
reason that names no host, user, database or path. Concurrent callers share one query in flight,
an answer younger than :data:`FRESH_S` is reused, and a query still running at the deadline is
reported as not answering while the next check waits on it instead of piling up another.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from pathlib import Path
from typing import Final

from affidavit.attest.stores.store import Store
from affidavit.verify.errors import AffidavitError

__all__ = ["DEADLINE_S", "FRESH_S", "StoreProbe"]

DEADLINE_S: Final = 2.0  # how long health waits for the store's answer
FRESH_S: Final = 0.5  # how long an answer is reused

_LOG = logging.getLogger("affidavit.registry")
UNREACHABLE: Final = "the store cannot be reached or read"


class StoreProbe:
    """``SELECT`` one row from ``schema_versions`` of the store at ``location`` (a SQLite file or
    a ``postgresql://`` URL) on a thread of its own, within ``deadline_s`` seconds."""

    def __init__(self, location: Path | str, *, deadline_s: float = DEADLINE_S) -> None:
        self._location = location
        self.deadline_s = deadline_s
        self._store: Store | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="registry-probe"
        )
        self._pending: concurrent.futures.Future[str | None] | None = None
        self._last: tuple[float, str | None] | None = None

    async def check(self) -> str | None:
        """None when the store answered; else why it is not usable (a reason for clients)."""
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
        """On the probe's thread: the query, and the answer remembered for FRESH_S."""
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
