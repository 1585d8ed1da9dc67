"""The log's write path (docs/adr/0024; drawn in docs/architecture.md "The log's write path"):
:class:`LogWriter` sequences entries and :class:`Job` writes in group-commit batches, integrates
and signs both heads (the only place a head is signed), and proves entries for waiting callers.

Integration reads the size under the store's one writer lock, so integrations never overlap on
any instance (docs/adr/0013 §3), and a crash between integrating and signing leaves a tree the
next round signs. Past ``integration_wait_s`` a waiter gets ``registry.integration_pending``
(503; the entry stays sequenced).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any, Final, Generic, TypeVar

from affidavit.attest.errors import LogError
from affidavit.attest.log.sequencing import LogStatus, Sequenced
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.db import RegistryTables
from affidavit.registry.errors import RegistryError
from affidavit.registry.settings import Settings
from affidavit.registry.threads import DbThread, ReadPool
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import parse_note
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.json.strict import load_object

__all__ = [
    "MAX_ENTRY_BYTES",
    "MAX_QUEUED_BYTES",
    "Batch",
    "Integrated",
    "Job",
    "LogWriter",
    "SignedHeads",
]

_LOG = logging.getLogger("affidavit.registry")
P = TypeVar("P")
T = TypeVar("T")

MAX_QUEUED_BYTES: Final = 64 * 1024 * 1024
MAX_KEPT_PROOFS: Final = 100_000  # proofs kept for waiters (a few MB at most)
WATCH_INTERVAL_S: Final = 0.05  # between integration rounds while anyone waits
_FAILURE_PAUSE_S: Final = 0.5
_INLINE_ROUNDS: Final = 4

# tlog-tiles "Log entries": an entry bundle holds each entry behind a big-endian uint16 length,
# so 65,535 bytes (64 KiB less one) is the largest entry a mirror can read from the tiles.
MAX_ENTRY_BYTES: Final = 65_535


Batch = dict[str, Any]
"""Scratch space shared by the jobs of one batch (what their ``finish`` needs)."""


@dataclass(frozen=True, slots=True)
class Job(Generic[P, T]):
    """A write run inside a group-commit transaction on the database thread.

    ``prepare`` reads and checks (an :class:`AffidavitError` refuses this item only);
    ``apply(prepared, batch)`` writes. ``finish(batch)`` runs once per batch per function, before
    COMMIT; what it returns runs after COMMIT. ``aborted`` runs when the batch rolled back.
    """

    prepare: Callable[[], P]
    apply: Callable[[P, Batch], T]
    finish: Callable[[Batch], Callable[[], None] | None] | None = None
    aborted: Callable[[], None] | None = None
    leaf: Callable[[T], Sequenced | None] | None = None  # the leaf a waiting caller proves
    # The log entries ``apply`` will sequence, checked by the writer first (docs/adr/0018)
    entries: Callable[[P], Sequence[bytes]] | None = None
    # Before any job of the batch prepares: note what it will read, so the batch reads it once
    gather: Callable[[Batch], None] | None = None


@dataclass(frozen=True, slots=True)
class SignedHeads:
    """What an integration signed: the checkpoint note and the tree head (JSON) of one size."""

    tree_size: int
    checkpoint: str
    signed_tree_head: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Integrated:
    """An entry under a signed checkpoint, with its RFC 9162 §2.1.3 inclusion path at
    ``tree_size``, leaf end first."""

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


def check_entry(data: bytes) -> None:
    """The one check of a log entry's size, for every entry the registry makes.

    Raises:
        ``usage.invalid``: ``data`` is empty.
        ``registry.entry_too_large``: over :data:`MAX_ENTRY_BYTES` (docs/adr/0018; 422).
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


def proven(
    log: TransparencyLog, placed: Sequence[Sequenced], heads: SignedHeads
) -> list[Integrated]:
    """Every entry of ``placed`` under ``heads``: their inclusion paths at its size, in one read."""
    size = heads.tree_size
    paths = log.inclusion_paths([p.index for p in placed], size)
    return [
        Integrated(p.index, p.leaf_hash, size, heads.checkpoint, heads.signed_tree_head, path)
        for p, path in zip(placed, paths, strict=True)
    ]


def largest_signed(log: TransparencyLog) -> SignedHeads | None:
    """The largest recorded checkpoint (its latest, cosigned copy) and the tree head of its
    size, if recorded."""
    recorded = log.largest_head("checkpoint")
    if recorded is None:
        return None
    sth = log.recorded_head("sth", recorded.tree_size)
    document = load_object(sth.document, what="recorded head") if sth is not None else None
    return SignedHeads(recorded.tree_size, recorded.document, document)


@dataclass(slots=True)
class _Item:
    data: bytes | None
    job: Job[Any, Any] | None
    future: asyncio.Future[Any]
    wait: bool = False  # its caller waits for integration


@dataclass(frozen=True, slots=True)
class _Done:
    """A batch's outcomes, and the heads signed right after it with its waiters' proofs."""

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


class LogWriter:
    """The write path of one registry process (module docstring), and the heads GETs serve."""

    def __init__(  # the services the write path uses, passed explicitly
        self,
        *,
        db: DbThread,
        readers: ReadPool,
        tables: RegistryTables,
        log: TransparencyLog,
        clock: Callable[[], datetime],
        settings: Settings,
        after_integration: Callable[[], object] | None = None,
    ) -> None:
        self.db, self.readers, self.tables, self.log = db, readers, tables, log
        self.clock = clock
        self.after_integration = after_integration  # in integration's transaction (the index)
        self.max_queue, self.max_batch = settings.log_queue, settings.write_batch
        self.wait_s, self.interval = settings.integration_wait_s, settings.integrate_interval_s
        self.integrate_batch = settings.integrate_batch
        # Why the log refuses to sign (docs/adr/0005), else None: set once, never cleared.
        self.unhealthy: str | None = None
        # The scratch of the batch being written (database thread only; None between batches):
        # what a job's prepare may consult to do once per batch what it would do per request.
        self.batch: Batch | None = None
        self._queue: deque[_Item] = deque()
        self._queued_bytes = 0
        self._proofs: dict[int, Integrated] = {}
        self._waiters: list[_Waiter] = []
        # GETs of the heads waiting for the writer to sign the tree's size (:meth:`current`)
        self._head_waiters: list[tuple[int, asyncio.Future[SignedHeads]]] = []
        self._signed: SignedHeads | None = None
        self._known_next = 0  # the highest index this process sequenced, plus one
        self._wake: asyncio.Event | None = None  # the writer loop's
        self._round: asyncio.Event = asyncio.Event()  # the integration loop's
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False  # the writer loop: no new writes, write what is queued
        self._finishing = False  # the integration loop: integrate what is left, then stop

    # -- life cycle -----------------------------------------------------------------------

    @property
    def heads(self) -> SignedHeads | None:
        """The largest heads this process signed or saw recorded."""
        return self._signed

    @property
    def waiting(self) -> bool:
        return bool(self._waiters or self._head_waiters)

    async def start(self) -> None:
        """Sign the tree's size if no head of the current key covers it, learn the largest
        recorded heads, and run the writer and integration loops until :meth:`stop`."""
        if self.unhealthy is None:
            with contextlib.suppress(LogError):  # log.unhealthy: marked, and the routes say so
                await self.db.run(self._sign_at_start)
        self._signed = await self.readers.run(lambda view: largest_signed(view.log))
        self._wake, self._round = asyncio.Event(), asyncio.Event()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._write_loop(), name="log writer"),
            loop.create_task(self._integrate_loop(), name="log integrator"),
        ]

    async def stop(self) -> None:
        """Refuse new writes, write what is queued, integrate and sign it, then answer the
        waiters left with ``registry.unavailable``."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        writing, integrating = self._tasks or (None, None)
        if writing is not None:
            with contextlib.suppress(Exception):
                await writing
        self._finishing = True  # read by the integration loop: its last rounds, then stop
        self._round.set()
        if integrating is not None:
            with contextlib.suppress(Exception):
                await integrating
        self.fail_waiters(RegistryError("registry.unavailable", "the registry is shutting down"))

    # -- health (docs/adr/0005) -----------------------------------------------------------

    def mark_unhealthy(self, error: errors.AffidavitError) -> None:
        """Stop signing: the stored tree contradicts a head this log signed (docs/adr/0005)."""
        if self.unhealthy is None:
            _LOG.error("log unhealthy, refusing to sign: %s: %s", error.code, error.message)
            self.unhealthy = f"the log refuses to sign: {error.message}"

    def signing(self, sign: Callable[[], T]) -> T:
        """Run ``sign`` only while healthy; ``log.integrity`` marks the log unhealthy.

        Raises:
            ``log.unhealthy``: 503, now or from an earlier failure.
        """
        if self.unhealthy is None:
            try:
                return sign()
            except LogError as e:
                if e.code != "log.integrity":
                    raise
                self.mark_unhealthy(e)
        raise LogError("log.unhealthy", self.unhealthy or "the log refuses to sign")

    # -- submit ---------------------------------------------------------------------------

    async def submit(self, data: bytes, *, wait: bool = False) -> Sequenced:
        """Sequence one log entry. ``wait``: the caller will wait for :meth:`integrated`, so its
        batch is integrated and signed at once, on the same database thread call.

        Raises:
            ``usage.invalid``: ``data`` is empty.
            ``registry.entry_too_large``: ``data`` is over :data:`MAX_ENTRY_BYTES` (422).
            ``log.unhealthy``: the log refuses to sign (docs/adr/0005): nothing is sequenced (503).
            ``registry.queue_full``: the queue is full (503, ``Retry-After``).
            ``store.*``: the batch's transaction failed (503).
        """
        check_entry(data)
        if self.unhealthy is not None:
            raise LogError("log.unhealthy", self.unhealthy, details={"retry": False})
        placed: Sequenced = await self._enqueue(bytes(data), None, wait)
        return placed

    async def run(self, job: Job[Any, T], *, wait: bool = False) -> T:
        """Run ``job`` in the next group-commit transaction; its result once committed.
        ``wait``: as :meth:`submit` (the leaf is ``job.leaf(result)``).

        Raises:
            whatever ``prepare`` refuses with; ``registry.queue_full``; the batch's failure.
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

    # -- sequence (group commit) ----------------------------------------------------------

    async def _write_loop(self) -> None:
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
                    done = await self.db.run(self._run_batch, batch)
                except BaseException as e:  # the thread pool itself failed: fail the batch
                    done = _Done([_Refused(e)] * len(batch))
                self._keep(done.proven)
                for item, outcome in zip(batch, done.outcomes, strict=True):
                    if item.future.done():  # the client went away; its write stands
                        continue
                    if isinstance(outcome, _Refused):
                        item.future.set_exception(outcome.error)
                    else:
                        item.future.set_result(outcome)
                self._sequenced(done.outcomes)
                if done.heads is not None:
                    await self._signed_heads(done.heads)
            if self._stopping:
                return

    def _sequenced(self, outcomes: Sequence[Any]) -> None:
        """Integrate now when a batch is full or someone waits."""
        created = [o.index for o in outcomes if isinstance(o, Sequenced) and o.created]
        if not created:
            return
        self._known_next = max(self._known_next, max(created) + 1)
        floor = 0 if self._signed is None else self._signed.tree_size
        if self.waiting or self._known_next - floor >= self.integrate_batch:
            self._round.set()

    def _keep(self, proven: dict[int, Integrated]) -> None:
        """Keep a batch's proofs for :meth:`integrated` (bounded: a caller may have gone)."""
        self._proofs.update(proven)
        while len(self._proofs) > MAX_KEPT_PROOFS:
            del self._proofs[next(iter(self._proofs))]

    def _run_batch(self, batch: Sequence[_Item]) -> _Done:
        """On the database thread: the batch's transaction, then, when someone waits,
        integration, signing and the waiters' inclusion paths."""
        outcomes = self._write_batch(batch)
        waiting: dict[int, Sequenced] = {}
        for item, outcome in zip(batch, outcomes, strict=True):
            if not item.wait or isinstance(outcome, _Refused):
                continue
            job = item.job
            leaf = outcome if job is None else job.leaf(outcome) if job.leaf else None
            if isinstance(leaf, Sequenced):
                waiting[leaf.index] = leaf
        if not waiting:
            return _Done(outcomes)
        try:
            heads = self._integrate_inline(max(waiting))
            if heads is None:
                return _Done(outcomes)
            covered = [waiting[i] for i in sorted(waiting) if i < heads.tree_size]
            answers = proven(self.log, covered, heads)
        except errors.AffidavitError as e:  # the integration rounds take over
            _LOG.warning("integrating for waiting writers failed: %s", e)
            return _Done(outcomes)
        return _Done(outcomes, heads, {p.index: p for p in answers})

    def _write_batch(self, batch: Sequence[_Item]) -> list[Any]:
        """The batch's one write transaction: one outcome per item (or :class:`_Refused`)."""
        outcomes: list[Any] = [None] * len(batch)
        scratch: Batch = {}
        finishes: dict[Callable[[Batch], Callable[[], None] | None], None] = {}
        after: list[Callable[[], None]] = []
        self.batch = scratch
        for item in batch:
            if item.job is not None and item.job.gather is not None:
                item.job.gather(scratch)
        try:
            with self.tables.transaction():
                start = 0
                for entries, run in groupby(batch, key=lambda item: item.data is not None):
                    items = list(run)
                    if entries:  # a run of entries: sequenced in one statement
                        data = [item.data for item in items if item.data is not None]
                        outcomes[start : start + len(items)] = self.log.sequence(data)
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

    # -- integrate, index, sign -------------------------------------------------------------

    async def _integrate_loop(self) -> None:
        while True:
            pause = min(self.interval, WATCH_INTERVAL_S) if self.waiting else self.interval
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._round.wait(), pause)
            self._round.clear()
            stopping = self._finishing
            try:
                signed = await self.integrate_round()
                while stopping and signed is not None:  # at the stop: until nothing is left
                    signed = await self.integrate_round()
            except Exception as e:  # the loop must survive; the next round tries again
                _LOG.exception("integration round failed: %s", e)
                await asyncio.sleep(_FAILURE_PAUSE_S)
            if stopping:
                return

    async def integrate_round(self) -> SignedHeads | None:
        """Integrate and sign when there is something to; returns what was signed."""
        if self.unhealthy is not None:
            self.fail_waiters(LogError("log.unhealthy", self.unhealthy))
            return None
        status: LogStatus = await self.readers.run_single(lambda view: view.log.status())
        heads = None
        started = time.perf_counter()
        if status.pending or status.signed_size < status.tree_size:
            try:
                heads = await self.db.run(self._integrate_and_sign)
            except LogError as e:
                if e.code == "log.unhealthy":
                    self.fail_waiters(e)
                raise
        if heads is None:
            if self.waiting:  # signed elsewhere, perhaps
                seen = await self.readers.run(lambda view: largest_signed(view.log))
                if seen is not None:
                    await self._signed_heads(seen)
            return None
        _LOG.debug(
            "integrated to size %d in %.1f ms",
            heads.tree_size,
            1000 * (time.perf_counter() - started),
        )
        await self._signed_heads(heads)
        return heads

    def _integrate_inline(self, highest: int) -> SignedHeads | None:
        """Right after a batch someone waits on: integrate and sign until the tree covers
        ``highest`` (at most a few rounds), so waiters need no other trip to the database thread."""
        heads: SignedHeads | None = None
        for _ in range(_INLINE_ROUNDS):
            heads = self._integrate_and_sign() or largest_signed(self.log)
            if heads is None or heads.tree_size > highest:
                break
        return heads

    def _integrate_and_sign(self) -> SignedHeads | None:
        """Integrate (verified, indexed) and sign; None when nothing needed either."""
        log = self.log
        with self.tables.transaction():  # step 1, under the writer lock
            self.signing(log.verify_integrity)  # docs/adr/0005: never integrate a damaged tree
            old, new = log.integrate()
            if self.after_integration is not None:
                self.after_integration()  # the index files the new leaves (registry/lookup.py)
        status = log.status()
        if old == new and status.signed_size >= status.tree_size:
            return None
        return self._sign()

    def _sign(self) -> SignedHeads:
        """Step 2: the one place the registry signs a head (docs/adr/0024)."""
        note, head = self.signing(lambda: self.log.sign_heads(timestamp=self.clock()))
        return SignedHeads(head.tree_size, note, head.to_json())

    def _sign_at_start(self) -> SignedHeads | None:
        """Integrate what is sequenced, and sign the tree's size unless both heads are recorded
        under the current key (a new log, a tree grown offline, a rotated key: docs/adr/0011).
        Under the writer lock: instances starting together sign once."""
        log = self.log
        with self.tables.transaction():
            heads = self._integrate_and_sign()
            if heads is not None:
                return heads
            size = log.size
            note = log.recorded_head("checkpoint", size)
            sth = log.recorded_head("sth", size)
            document = load_object(sth.document, what="recorded head") if sth else None
            if note is None or document is None or document.get("key_id") != log.key_id:
                return self._sign()
            signatures = parse_note(note.document).signatures  # by the current key? (adr/0011)
            own = signatures[0] if signatures else None
            if own is None or own.key_id != key_id_c2sp(own.name, log.public_key.raw):
                return self._sign()
        return None

    # -- prove ----------------------------------------------------------------------------

    async def integrated(self, placed: Sequenced) -> Integrated:
        """Wait until a signed checkpoint covers ``placed``; its proof.

        Raises:
            ``registry.integration_pending``: none did within ``integration_wait_s`` (503).
            ``log.unhealthy``: the log stopped signing meanwhile (503).
        """
        if self.unhealthy is not None:  # docs/adr/0005: no head is signed any more
            raise LogError("log.unhealthy", self.unhealthy, details={"retry": False})
        kept = self._proofs.pop(placed.index, None)
        if kept is not None:  # proved on the database thread right after its batch
            return kept
        signed = self._signed
        if signed is not None and placed.index < signed.tree_size:
            return (await self._prove([placed], signed))[0]
        future: asyncio.Future[Integrated] = asyncio.get_running_loop().create_future()
        self._waiters.append(_Waiter(placed, future))
        self._round.set()
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
        """The heads of the tree's current size, as GETs serve them (a GET never signs or
        writes: docs/adr/0024): from memory, else as recorded, else (the tree grew outside this
        writer) after the integration loop signs it; past ``integration_wait_s``, the largest.

        Raises:
            ``log.unhealthy``: the log refuses to sign (docs/adr/0005; 503).
            ``registry.integration_pending``: no head was ever signed (503).
        """
        if self.unhealthy is not None:  # docs/adr/0005: no head is signed any more
            raise LogError("log.unhealthy", self.unhealthy)
        size: int = await self.readers.run_single(lambda view: view.log.size)
        signed = self._signed
        if signed is not None and signed.tree_size >= size:
            return signed
        seen = await self.readers.run(lambda view: largest_signed(view.log))
        if seen is not None:
            await self._signed_heads(seen)
            if seen.tree_size >= size:
                return seen
        future: asyncio.Future[SignedHeads] = asyncio.get_running_loop().create_future()
        self._head_waiters.append((size, future))
        self._round.set()
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
        """Serve ``note``, the cosigned checkpoint of ``tree_size``, while it is the largest."""
        signed = self._signed
        if signed is not None and signed.tree_size == tree_size:
            self._signed = SignedHeads(tree_size, note, signed.signed_tree_head)

    async def _signed_heads(self, heads: SignedHeads) -> None:
        """``heads`` were signed (here or elsewhere): answer the waiters they cover."""
        if self._signed is None or heads.tree_size > self._signed.tree_size:
            self._signed = heads
        signed = self._signed
        for size, head_waiter in self._head_waiters:
            if size <= signed.tree_size and not head_waiter.done():
                head_waiter.set_result(signed)
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
        waiting, self._waiters = self._waiters, []
        futures = [w.future for w in waiting] + [future for _, future in self._head_waiters]
        for future in futures:
            if not future.done():
                future.set_exception(error)

    async def _prove(self, placed: Sequence[Sequenced], heads: SignedHeads) -> list[Integrated]:
        return await self.readers.run(lambda view: proven(view.log, placed, heads))
