"""The integrator: sequenced entries join the tree in batches, one signed checkpoint per batch.

Every ``integrate_interval_s`` (0.1 s), at once when ``integrate_batch`` entries are pending,
and right after a write batch someone waits on (``?wait=integrated``, contract publication: on
the same database thread call, :meth:`Integrator.integrate_inline`, so a waiting writer is
answered without another trip there), the integrator runs on the database thread, in two write
transactions:

1. **integrate** (:meth:`TransparencyLog.integrate`): the stored tree is first proven to extend
   every head signed so far (docs/adr/0005: nothing joins a damaged tree), then up to
   :data:`~affidavit.attest.log.sequencing.MAX_INTEGRATE` sequenced entries, from the tree's size
   on, become leaves. Committed before anything is signed.
2. **sign** (:meth:`TransparencyLog.sign_heads`): one C2SP checkpoint and one signed tree head of
   the new size, proven again to extend every earlier head and the key's signed state file,
   which moves forward in the same transaction (docs/adr/0005).

The witnesses' background task (:mod:`affidavit.registry.witnessing`) then cosigns the recorded
checkpoint as before.

**One integrator at a time, everywhere.** Both transactions take the store's one writer lock
(SQLite's ``BEGIN IMMEDIATE``; on PostgreSQL the advisory lock of docs/adr/0013 §3, across every
instance on the database) and read the tree's size after taking it, so two integrations never
overlap and a batch is integrated exactly once, whichever instance runs it. An instance paused
inside a batch (SIGSTOP) holds the lock until its lease ends its session; the server then rolls
its transaction back and another instance integrates the same entries. **A crash mid-batch**
leaves either the entries sequenced (before step 1 commits) or a grown tree without a head of its
size (before step 2 commits): the next round signs it. Heads are only ever signed over committed
leaves, after the consistency proof, so no crash or pause can fork the log.

A round first reads the log's status in one statement on a reader (:meth:`TransparencyLog.status`)
and takes the writer lock only when there is something to integrate or to sign. While anyone
waits, rounds come every :data:`WATCH_INTERVAL_S` at least, and one that signed nothing reads the
largest recorded checkpoint: another instance on the same database may have signed it, and its
waiters here are answered (docs/adr/0018 §5). A log that stopped signing fails them
(``log.unhealthy``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import LogStatus
from affidavit.registry.logview import signed_by_current_key, signing
from affidavit.registry.sequencer import Sequencer, SignedHeads, largest_signed
from affidavit.registry.state import RegistryState
from affidavit.verify.json.strict import load_object

__all__ = ["Integrator", "sign_at_start", "start_writing", "stop_writing"]

_LOG = logging.getLogger("affidavit.registry")
_FAILURE_PAUSE_S: Final = 0.5
_INLINE_ROUNDS: Final = 4
WATCH_INTERVAL_S: Final = 0.05  # between rounds while anyone waits


@dataclass(slots=True)
class Integrator:
    """The integration loop of one registry process (module docstring)."""

    state: RegistryState
    sequencer: Sequencer
    interval: float
    batch: int
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _stopping: bool = False
    _task: asyncio.Task[None] | None = None
    _known_next: int = 0  # the highest index this process sequenced, plus one

    def start(self) -> None:
        """Run the loop on the current event loop."""
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="integrator")

    async def stop(self) -> None:
        """Finish the round in flight, run one last round (what was sequenced before the stop
        is integrated and signed), then stop."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    def sequenced(self, highest: int) -> None:
        """The sequencer wrote entries up to index ``highest``: integrate now when a batch is
        full or someone waits."""
        self._known_next = max(self._known_next, highest + 1)
        floor = self.sequencer.signed_size or 0
        if self.sequencer.waiting or self._known_next - floor >= self.batch:
            self._wake.set()

    def kick(self) -> None:
        """Integrate now (someone waits)."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            pause = (
                min(self.interval, WATCH_INTERVAL_S) if self.sequencer.waiting else self.interval
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), pause)
            self._wake.clear()
            stopping = self._stopping
            try:
                signed = await self.run_round()
                while stopping and signed is not None:  # at the stop: until nothing is left
                    signed = await self.run_round()
            except Exception as e:  # the loop must survive; the next round tries again
                _LOG.exception("integration round failed: %s", e)
                await asyncio.sleep(_FAILURE_PAUSE_S)
            if stopping:
                return

    async def run_round(self) -> SignedHeads | None:
        """One round: integrate and sign when there is something to; returns what was signed
        (module docstring)."""
        state = self.state
        if state.unhealthy is not None:
            self.sequencer.fail_waiters(LogError("log.unhealthy", state.unhealthy))
            return None
        status: LogStatus = await state.read_single(lambda view: view.log.status())
        heads = None
        started = time.perf_counter()
        if status.pending or status.signed_size < status.tree_size:
            try:
                heads = await state.db.run(_integrate_and_sign, state)
            except LogError as e:
                if e.code == "log.unhealthy":
                    self.sequencer.fail_waiters(e)
                raise
        if heads is None:
            if self.sequencer.waiting:  # signed elsewhere, perhaps
                seen = await state.read(lambda view: largest_signed(view.log))
                if seen is not None:
                    await self.sequencer.signed(seen)
            return None
        _LOG.debug(
            "integrated to size %d in %.1f ms",
            heads.tree_size,
            1000 * (time.perf_counter() - started),
        )
        await self.sequencer.signed(heads)
        return heads

    def integrate_inline(self, highest: int) -> SignedHeads | None:
        """On the database thread, right after a write batch someone waits on: integrate and sign
        (as a round does) until the tree covers index ``highest``, at most a few batches of
        :data:`~affidavit.attest.log.sequencing.MAX_INTEGRATE`; the largest signed heads, or None.
        Waiting writers then get their checkpoint without another trip to the database thread.

        Raises:
            as a round (``log.unhealthy``, ``store.*``).
        """
        heads: SignedHeads | None = None
        for _ in range(_INLINE_ROUNDS):
            heads = _integrate_and_sign(self.state) or largest_signed(self.state.log)
            if heads is None or heads.tree_size > highest:
                break
        return heads


def _integrate_and_sign(state: RegistryState) -> SignedHeads | None:
    """On the database thread: step 1 then step 2 of the module docstring. None when there was
    nothing to integrate and the largest checkpoint already covers the tree."""
    log = state.log
    with state.tables.transaction():  # step 1, under the writer lock
        signing(state, log.verify_integrity)  # docs/adr/0005: never integrate into a damaged tree
        old, new = log.integrate()
    status = log.status()
    if old == new and status.signed_size >= status.tree_size:
        return None
    return _sign(state)


def _sign(state: RegistryState) -> SignedHeads:
    """Step 2: both heads of the tree's size, signed together (the only place the registry signs
    a head: docs/adr/0024)."""
    note, head = signing(state, lambda: state.log.sign_heads(timestamp=state.clock()))
    return SignedHeads(head.tree_size, note, head.to_json())


def sign_at_start(state: RegistryState) -> SignedHeads | None:
    """On the database thread, when the writer starts: integrate what is sequenced, and sign the
    heads of the tree's size unless both are recorded under the current key (a new log, a tree
    grown while no registry ran, a key rotated since: docs/adr/0011), so every GET finds them
    recorded (docs/adr/0024). Under the writer lock: instances starting together sign once."""
    log = state.log
    with state.tables.transaction():
        heads = _integrate_and_sign(state)
        if heads is not None:
            return heads
        size = log.size
        note = log.recorded_head("checkpoint", size)
        sth = log.recorded_head("sth", size)
        document = load_object(sth.document, what="recorded head") if sth is not None else None
        if note is None or document is None or document.get("key_id") != log.key_id:
            return _sign(state)
        if not signed_by_current_key(log, note.document):
            return _sign(state)
    return None


async def start_writing(state: RegistryState) -> Integrator:
    """Start the sequencer and the integrator of a running registry (the app's lifespan) and
    hang them on ``state``; stop both with :func:`stop_writing`."""
    settings = state.settings
    sequencer = Sequencer(
        state,
        max_queue=settings.log_queue,
        max_batch=settings.write_batch,
        wait_s=settings.integration_wait_s,
    )
    integrator = Integrator(
        state, sequencer, interval=settings.integrate_interval_s, batch=settings.integrate_batch
    )
    sequencer.integrator = integrator
    if state.unhealthy is None:
        with contextlib.suppress(LogError):  # log.unhealthy: marked, and the routes say so
            await state.db.run(sign_at_start, state)
    await sequencer.load()
    sequencer.start()
    integrator.start()
    state.sequencer, state.integrator = sequencer, integrator
    return integrator


async def stop_writing(state: RegistryState) -> None:
    """Write what is queued, integrate and sign it, answer the waiters, stop."""
    integrator, sequencer = state.integrator, state.sequencer
    if sequencer is not None:
        await sequencer.drain()
    if integrator is not None:
        await integrator.stop()
    if sequencer is not None:
        await sequencer.stop()
    state.sequencer = state.integrator = None
