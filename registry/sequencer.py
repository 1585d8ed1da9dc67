"""The registry's one write path: group commit, durable sequencing, waiting for integration.

>>> # inside a route, with the running state (registry/state.py):
>>> # placed = await state.sequencer.submit(entry_bytes)         # durably sequenced
>>> # proven = await state.sequencer.integrated(placed)          # under a signed checkpoint

**The append entry point** is :meth:`Sequencer.submit`: the bytes of one log entry in, its
:class:`~affidavit.attest.log.sequencing.Sequenced` place out (index, leaf hash, whether it is
new), once it is durably sequenced; an entry already in the log gets its first index
(deduplication). :meth:`Sequencer.integrated` then waits until a signed checkpoint covers it and
returns the checkpoint, the tree head of that size and the entry's RFC 9162 inclusion path.
``POST /v1/log/entries`` is these two calls; anything else in the registry that appends a leaf
(contract publication) goes through them too.

**Group commit.** Every write of the registry (entries, contract publications and lifecycle
changes, facts) is queued here and run on the database thread by one loop: it takes everything
queued (at most ``write_batch`` items), runs it in **one** write transaction, commits once (one
fsync, one writer lock on PostgreSQL), answers every item, and takes the next batch, which
filled up meanwhile. Consecutive entries are sequenced in one statement; other writes are
:class:`Job` s: ``prepare`` (reads and checks, inside the transaction, after the writer lock: it
may refuse, which refuses that item only) then ``apply`` (the writes). A failure in ``apply`` or
at COMMIT rolls the whole batch back and fails every item of it that was not refused: never a
partial write.

**Bounded.** At most ``log_queue`` items and :data:`MAX_QUEUED_BYTES` of entry bytes wait; past
that :meth:`submit` and :meth:`run` refuse at once with ``registry.queue_full`` (503,
``Retry-After``): memory stays bounded and nothing is dropped silently.

**Waiting for integration.** The integrator (:mod:`affidavit.registry.integrator`) reports each
signed size (:meth:`Sequencer.signed`); waiters it covers are answered with their inclusion
paths, computed together in one read. Waiters on an instance that is not integrating (another
instance on the same PostgreSQL database integrated) are answered by the integrator's rounds,
which read the largest recorded checkpoint while anyone waits. A waiter not
covered within ``integration_wait_s`` gets ``registry.integration_pending`` (503): its entry stays
sequenced, and sending it again finds it (deduplication) and waits again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Final, Generic, Protocol, TypeVar

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import Sequenced
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.errors import RegistryError
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify import errors
from affidavit.verify.json.strict import load_object

__all__ = [
    "MAX_ENTRY_BYTES",
    "MAX_QUEUED_BYTES",
    "Batch",
    "Integrated",
    "Integrating",
    "Job",
    "Sequencer",
    "SignedHeads",
    "check_entry",
]

_LOG = logging.getLogger("affidavit.registry")
P = TypeVar("P")
T = TypeVar("T")

# tlog-tiles "Log entries": an entry bundle holds each entry behind a big-endian uint16 length,
# so 65,535 bytes (64 KiB less one) is the largest entry a mirror can read from the tiles.
MAX_ENTRY_BYTES: Final = 65_535
MAX_QUEUED_BYTES: Final = 64 * 1024 * 1024
MAX_KEPT_PROOFS: Final = 100_000  # proofs kept for waiters (a few MB at most)


Batch = dict[str, Any]
"""Scratch space shared by the jobs of one batch (what their ``finish`` needs)."""


@dataclass(frozen=True, slots=True)
class Job(Generic[P, T]):
    """A write run inside a group-commit transaction on the database thread (module docstring).

    ``prepare`` reads and checks (it may raise an :class:`AffidavitError` to refuse this item:
    nothing of it is written); ``apply(prepared, batch)`` writes. ``finish(batch)`` runs once per
    batch for all the jobs that name the same function, after the last job and before COMMIT
    (one manifest change for many publications); what it returns runs after COMMIT (swap the
    caches). ``aborted`` runs when the batch was rolled back (forget what ``prepare`` cached).
    """

    prepare: Callable[[], P]
    apply: Callable[[P, Batch], T]
    finish: Callable[[Batch], Callable[[], None] | None] | None = None
    aborted: Callable[[], None] | None = None
    leaf: Callable[[T], Sequenced | None] | None = None  # the leaf a waiting caller proves
    # The log entries ``apply`` will sequence, given what ``prepare`` returned: every job that
    # appends a leaf names them, and the sequencer checks them (:func:`check_entry`) before
    # ``apply``, refusing this item only (docs/adr/0018: the entry limit, where entries are made)
    entries: Callable[[P], Sequence[bytes]] | None = None
    # Before any job of the batch prepares: note what it will read, so the batch reads it once
    gather: Callable[[Batch], None] | None = None


@dataclass(frozen=True, slots=True)
class SignedHeads:
    """What an integration signed: the checkpoint note and the tree head (JSON) of one size."""

    tree_size: int
    checkpoint: str
    signed_tree_head: dict[str, Any] | None


class Integrating(Protocol):
    """What the sequencer tells the integrator (registry/integrator.py)."""

    def sequenced(self, highest: int) -> None:
        """Entries up to index ``highest`` were just sequenced."""

    def kick(self) -> None:
        """Someone started waiting for integration."""

    def integrate_inline(self, highest: int) -> SignedHeads | None:
        """On the database thread after a batch someone waits on: integrate and sign until the
        tree covers index ``highest``; the largest signed heads."""


@dataclass(frozen=True, slots=True)
class Integrated:
    """An entry under a signed checkpoint: its place, the checkpoint note, the signed tree head
    of the same size (None when none was recorded at that size), and its RFC 9162 §2.1.3
    inclusion path at ``tree_size``, leaf end first."""

    index: int
    leaf_hash: bytes
    tree_size: int
    checkpoint: str
    signed_tree_head: dict[str, Any] | None
    path: tuple[bytes, ...]

    def to_json(self) -> dict[str, Any]:
        """``{index, leaf_hash, checkpoint, inclusion_proof: {tree_size, hashes}}`` (hex), plus
        ``signed_tree_head`` when there is one."""
        body: dict[str, Any] = {
            "index": self.index,
            "leaf_hash": self.leaf_hash.hex(),
            "checkpoint": self.checkpoint,
            "inclusion_proof": {
                "tree_size": self.tree_size,
                "hashes": [h.hex() for h in self.path],
            },
        }
        if self.signed_tree_head is not None:
            body["signed_tree_head"] = self.signed_tree_head
        return body


@dataclass(slots=True)
class _Item:
    data: bytes | None
    job: Job[Any, Any] | None
    future: asyncio.Future[Any]
    wait: bool = False  # its caller waits for integration


@dataclass(frozen=True, slots=True)
class _Done:
    """A batch's outcomes, and what was integrated and signed right after it for its waiters
    (their proofs by index)."""

    outcomes: list[Any]
    heads: SignedHeads | None = None
    proven: dict[int, Integrated] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Refused:
    error: BaseException


@dataclass(slots=True)
class _Waiter:
    placed: Sequenced
    future: asyncio.Future[Integrated]


@dataclass(slots=True)
class Sequencer:
    """The group-commit writer and the integration waiters of one registry process."""

    state: RegistryState
    max_queue: int
    max_batch: int
    wait_s: float
    # Told what is sequenced and who waits; integrates inline after a batch someone waits on
    # (registry/integrator.py). None: nothing is integrated here.
    integrator: Integrating | None = None
    _proofs: dict[int, Integrated] = field(default_factory=dict)
    # The scratch of the batch being written (database thread only; None between batches): what
    # a job's prepare may consult to do once per batch what it would do per request.
    batch: Batch | None = None
    _queue: deque[_Item] = field(default_factory=deque)
    _queued_bytes: int = 0
    _wake: asyncio.Event | None = None
    _task: asyncio.Task[None] | None = None
    _waiters: list[_Waiter] = field(default_factory=list)
    # GETs of the heads waiting for the writer to sign the tree's size (:meth:`current`)
    _head_waiters: list[tuple[int, asyncio.Future[SignedHeads]]] = field(default_factory=list)
    _signed: SignedHeads | None = None
    _stopping: bool = False

    # -- life cycle -----------------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        """Whether anyone waits for integration."""
        return bool(self._waiters or self._head_waiters)

    @property
    def heads(self) -> SignedHeads | None:
        """The largest heads this process signed or saw recorded (None before the first)."""
        return self._signed

    @property
    def signed_size(self) -> int | None:
        """The largest signed size this process knows of (None before the first)."""
        return None if self._signed is None else self._signed.tree_size

    async def load(self) -> None:
        """Learn the largest checkpoint recorded before this process started (so entries it
        covers are answered at once)."""
        self._signed = await self.state.read(lambda view: largest_signed(view.log))

    def start(self) -> None:
        """Run the writer loop on the current event loop."""
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="sequencer")

    async def drain(self) -> None:
        """Refuse new writes (``registry.unavailable``), write what is queued, stop the loop."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def stop(self) -> None:
        """:meth:`drain`, then answer waiters still waiting with ``registry.unavailable``."""
        await self.drain()
        self.fail_waiters(RegistryError("registry.unavailable", "the registry is shutting down"))

    # -- writing --------------------------------------------------------------------------

    async def submit(self, data: bytes, *, wait: bool = False) -> Sequenced:
        """Sequence one log entry (the append entry point; module docstring). ``wait``: the
        caller will wait for integration (:meth:`integrated`), so its batch is integrated and
        signed at once, on the same database thread call.

        Raises:
            ``usage.invalid``: ``data`` is empty.
            ``registry.entry_too_large``: ``data`` is over :data:`MAX_ENTRY_BYTES` (422).
            ``log.unhealthy``: the log refuses to sign (docs/adr/0005): nothing is sequenced (503).
            ``registry.queue_full``: the queue is full (503, ``Retry-After``).
            ``store.*``: the batch's transaction failed, or the database itself failed it
                (503).
        """
        check_entry(data)
        if self.state.unhealthy is not None:
            raise LogError("log.unhealthy", self.state.unhealthy, details={"retry": False})
        placed: Sequenced = await self._enqueue(bytes(data), None, wait)
        return placed

    async def run(self, job: Job[Any, T], *, wait: bool = False) -> T:
        """Run ``job`` in the next group-commit transaction; its result once committed.
        ``wait``: as :meth:`submit` (the leaf is ``job.leaf(result)``).

        Raises:
            whatever ``prepare`` refuses with; RegistryQueueFull; the batch's failure.
        """
        result: T = await self._enqueue(None, job, wait)
        return result

    async def _enqueue(self, data: bytes | None, job: Job[Any, Any] | None, wait: bool) -> Any:
        size = len(data) if data is not None else 0
        if self._stopping or self._wake is None:
            raise RegistryError("registry.unavailable", "the registry is shutting down")
        if len(self._queue) >= self.max_queue or self._queued_bytes + size > MAX_QUEUED_BYTES:
            raise RegistryError(
                "registry.queue_full",
                f"the write queue is full ({len(self._queue)} writes waiting); nothing was "
                "written: retry after Retry-After",
                details={"queued": len(self._queue)},
            )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append(_Item(data, job, future, wait))
        self._queued_bytes += size
        self._wake.set()
        return await future

    async def _loop(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch = [
                    self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))
                ]
                self._queued_bytes -= sum(len(i.data) for i in batch if i.data is not None)
                try:
                    done = await self.state.db.run(self._run_batch, batch)
                except BaseException as e:  # the thread pool itself failed: fail the batch
                    done = _Done([_Refused(e)] * len(batch))
                outcomes = done.outcomes
                self._keep(done.proven)
                for item, outcome in zip(batch, outcomes, strict=True):
                    if item.future.done():  # the client went away; its write stands
                        continue
                    if isinstance(outcome, _Refused):
                        item.future.set_exception(outcome.error)
                    else:
                        item.future.set_result(outcome)
                self._report_sequenced(outcomes)
                if done.heads is not None:
                    await self.signed(done.heads)
            if self._stopping:
                return

    def _report_sequenced(self, outcomes: Sequence[Any]) -> None:
        if self.integrator is None:
            return
        created = [o.index for o in outcomes if isinstance(o, Sequenced) and o.created]
        if created:
            self.integrator.sequenced(max(created))

    def _keep(self, proven: dict[int, Integrated]) -> None:
        """Keep what a batch's own integration proved, for its waiters' :meth:`integrated`
        (bounded: a caller that went away leaves its proof behind)."""
        self._proofs.update(proven)
        while len(self._proofs) > MAX_KEPT_PROOFS:
            del self._proofs[next(iter(self._proofs))]

    def _run_batch(self, batch: Sequence[_Item]) -> _Done:
        """On the database thread: the whole batch in one write transaction (module
        docstring); one outcome per item (a result, or :class:`_Refused`); then, when someone
        waits, :meth:`Integrator.integrate_inline` and the waiters' inclusion paths."""
        outcomes = self._write_batch(batch)
        waiting: dict[int, Sequenced] = {}
        for item, outcome in zip(batch, outcomes, strict=True):
            if not item.wait or isinstance(outcome, _Refused):
                continue
            job = item.job
            leaf = outcome if job is None else job.leaf(outcome) if job.leaf else None
            if isinstance(leaf, Sequenced):
                waiting[leaf.index] = leaf
        if not waiting or self.integrator is None:
            return _Done(outcomes)
        try:
            heads = self.integrator.integrate_inline(max(waiting))
            if heads is None:
                return _Done(outcomes)
            covered = [waiting[i] for i in sorted(waiting) if i < heads.tree_size]
            proven = _proven(self.state.log, covered, heads)
        except errors.AffidavitError as e:  # the integrator's rounds
            _LOG.warning("integrating for waiting writers failed: %s", e)  # take over
            return _Done(outcomes)
        return _Done(outcomes, heads, {p.index: p for p in proven})

    def _write_batch(self, batch: Sequence[_Item]) -> list[Any]:
        """The batch's one write transaction: one outcome per item."""
        outcomes: list[Any] = [None] * len(batch)
        scratch: Batch = {}
        finishes: dict[Callable[[Batch], Callable[[], None] | None], None] = {}
        after: list[Callable[[], None]] = []
        self.batch = scratch
        for item in batch:
            if item.job is not None and item.job.gather is not None:
                item.job.gather(scratch)
        try:
            with self.state.tables.transaction():
                start = 0
                for entries, run in groupby(batch, key=lambda item: item.data is not None):
                    items = list(run)
                    if entries:  # a run of entries: sequenced in one statement
                        data = [item.data for item in items if item.data is not None]
                        outcomes[start : start + len(items)] = self.state.log.sequence(data)
                    for position, job in enumerate((item.job for item in items), start):
                        if job is None:
                            continue
                        try:
                            prepared = job.prepare()
                            for entry in job.entries(prepared) if job.entries else ():
                                check_entry(entry)  # the one limit of every entry made
                        except errors.AffidavitError as e:  # this item only: it wrote nothing
                            outcomes[position] = _Refused(e)
                        else:
                            outcomes[position] = job.apply(prepared, scratch)
                            if job.finish is not None:
                                finishes[job.finish] = None
                    start += len(items)
                for finish in finishes:  # once each, before COMMIT
                    then = finish(scratch)
                    if then is not None:
                        after.append(then)
        except BaseException as e:  # rolled back: nothing of the batch was written
            self.batch = None
            _LOG.warning("a write batch of %d failed and was rolled back: %s", len(batch), e)
            for item in batch:
                if item.job is not None and item.job.aborted is not None:
                    item.job.aborted()
            return [o if isinstance(o, _Refused) else _Refused(e) for o in outcomes]
        self.batch = None
        for then in after:
            then()
        return outcomes

    # -- waiting for integration ----------------------------------------------------------

    async def integrated(self, placed: Sequenced) -> Integrated:
        """Wait until a signed checkpoint covers ``placed``; its proof (module docstring).

        Raises:
            ``registry.integration_pending``: none did within ``integration_wait_s`` (503).
            ``log.unhealthy``: the log stopped signing meanwhile (503).
        """
        if self.state.unhealthy is not None:  # docs/adr/0005: no head is signed any more
            raise LogError("log.unhealthy", self.state.unhealthy, details={"retry": False})
        kept = self._proofs.pop(placed.index, None)
        if kept is not None:  # proved on the database thread right after its batch
            return kept
        signed = self._signed
        if signed is not None and placed.index < signed.tree_size:
            return (await self._prove([placed], signed))[0]
        future: asyncio.Future[Integrated] = asyncio.get_running_loop().create_future()
        self._waiters.append(_Waiter(placed, future))
        if self.integrator is not None:
            self.integrator.kick()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.wait_s)
        except TimeoutError:
            raise RegistryError(
                "registry.integration_pending",
                f"entry {placed.index} is sequenced (durable) but no signed checkpoint covers it "
                f"after {self.wait_s:g} s; send it again to wait again",
                details={"index": placed.index, "leaf_hash": placed.leaf_hash.hex()},
            ) from None
        finally:
            self._waiters = [w for w in self._waiters if w.future is not future]

    async def current(self) -> SignedHeads:
        """The heads of the tree's current size, as the GETs serve them (docs/adr/0024: a GET
        never signs or writes). From memory when this process holds the heads of the size read
        (one statement on a reader); else as recorded (another instance, or this one, signed
        them); else the tree grew outside this writer (another process appended to its
        database): the integrator is asked to sign it, and this waits for it, as a writer waits.
        Past ``integration_wait_s`` the largest recorded heads are served.

        Raises:
            ``log.unhealthy``: the log refuses to sign (docs/adr/0005; 503).
            ``registry.integration_pending``: no head was ever signed (503).
        """
        if self.state.unhealthy is not None:  # docs/adr/0005: no head is signed any more
            raise LogError("log.unhealthy", self.state.unhealthy)
        size = await self.state.read_single(_size)
        signed = self._signed
        if signed is not None and signed.tree_size >= size:
            return signed
        seen = await self.state.read(lambda view: largest_signed(view.log))
        if seen is not None:
            await self.signed(seen)
            if seen.tree_size >= size:
                return seen
        future: asyncio.Future[SignedHeads] = asyncio.get_running_loop().create_future()
        self._head_waiters.append((size, future))
        if self.integrator is not None:
            self.integrator.kick()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.wait_s)
        except TimeoutError:
            if self._signed is not None:
                return self._signed
            raise RegistryError(
                "registry.integration_pending",
                f"no signed checkpoint covers the tree after {self.wait_s:g} s; ask again",
                details={"tree_size": size},
            ) from None
        finally:
            self._head_waiters = [w for w in self._head_waiters if w[1] is not future]

    def cosigned(self, tree_size: int, note: str) -> None:
        """Witnesses cosigned the checkpoint of ``tree_size``: serve ``note`` (with their lines)
        from now on, when it is still the largest."""
        signed = self._signed
        if signed is not None and signed.tree_size == tree_size:
            self._signed = SignedHeads(tree_size, note, signed.signed_tree_head)

    async def signed(self, heads: SignedHeads) -> None:
        """The integrator (here, or another instance's, seen by a round) signed ``heads``: answer
        the waiters it covers."""
        if self._signed is None or heads.tree_size > self._signed.tree_size:
            self._signed = heads
        signed = self._signed
        for size, future in self._head_waiters:
            if size <= signed.tree_size and not future.done():
                future.set_result(signed)
        covered = [w for w in self._waiters if w.placed.index < heads.tree_size]
        if not covered:
            return
        self._waiters = [w for w in self._waiters if w.placed.index >= heads.tree_size]
        try:
            proven = await self._prove([w.placed for w in covered], heads)
        except BaseException as e:
            for waiter in covered:
                if not waiter.future.done():
                    waiter.future.set_exception(e)
            raise
        for waiter, result in zip(covered, proven, strict=True):
            if not waiter.future.done():
                waiter.future.set_result(result)

    def fail_waiters(self, error: errors.AffidavitError) -> None:
        """Answer every waiter with ``error`` (the log stopped signing)."""
        waiting, self._waiters = self._waiters, []
        futures = [w.future for w in waiting] + [future for _, future in self._head_waiters]
        for future in futures:
            if not future.done():
                future.set_exception(error)

    async def _prove(self, placed: Sequence[Sequenced], heads: SignedHeads) -> list[Integrated]:
        """:func:`_proven` on a reader thread."""
        return await self.state.read(lambda view: _proven(view.log, placed, heads))


def check_entry(data: bytes) -> None:
    """The one check of a log entry's size, for every kind of entry the registry makes: raw
    entries (:meth:`Sequencer.submit`) and every :class:`Job` that appends a leaf (its
    ``entries``: contract publications and lifecycle changes, SCITT registrations).

    Raises:
        ``usage.invalid``: ``data`` is empty.
        ``registry.entry_too_large``: over :data:`MAX_ENTRY_BYTES` (docs/adr/0018: tlog-tiles
            entry bundles hold each entry behind a uint16 length; 422).
    """
    if not data:
        raise errors.UsageError("a log entry is 1 to 65,535 bytes, not empty")
    if len(data) > MAX_ENTRY_BYTES:
        raise RegistryError(
            "registry.entry_too_large",
            f"the log entry this makes is {len(data):,} bytes; the limit is {MAX_ENTRY_BYTES:,}"
            " (tlog-tiles entry bundles, docs/adr/0018): nothing was written",
            details={"entry_bytes": len(data), "limit": MAX_ENTRY_BYTES},
        )


def _proven(
    log: TransparencyLog, placed: Sequence[Sequenced], heads: SignedHeads
) -> list[Integrated]:
    """Every entry of ``placed`` under ``heads``: their inclusion paths at its size, in one read."""
    size = heads.tree_size
    paths = log.inclusion_paths([p.index for p in placed], size)
    return [
        Integrated(p.index, p.leaf_hash, size, heads.checkpoint, heads.signed_tree_head, path)
        for p, path in zip(placed, paths, strict=True)
    ]


def _size(view: ReadView) -> int:
    size: int = view.log.size
    return size


def largest_signed(log: TransparencyLog) -> SignedHeads | None:
    """The checkpoint of the largest size ``log`` recorded (its latest, cosigned copy) and the
    signed tree head of that size, if one was recorded; None before the first checkpoint."""
    recorded = log.largest_head("checkpoint")
    if recorded is None:
        return None
    sth = log.recorded_head("sth", recorded.tree_size)
    document = load_object(sth.document, what="recorded head") if sth is not None else None
    return SignedHeads(recorded.tree_size, recorded.document, document)
