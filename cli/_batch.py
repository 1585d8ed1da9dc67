"""One check over many inputs, in this process or a process pool, in input order and constant
memory, with a progress bar on a terminal (``verify bundle``, ``verify receipt DIR``;
docs/adr/0023-streamed-bulk-verification.md). Nothing heavy is imported here: ``verify bundle``'s
cold start loads it (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

from affidavit.verify import errors

__all__ = ["Progress", "cores", "default_jobs", "map_in_workers"]

T = TypeVar("T")
R = TypeVar("R")

# Chunks handed out but not yet given back, per worker: enough that no worker waits for the
# next chunk while its last result travels back, few enough that results held stay bounded.
_IN_FLIGHT_PER_WORKER = 3


def cores() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1  # pragma: no cover - systems without an affinity mask


def default_jobs(count: int, *, min_per_worker: int) -> int:
    """How many workers ``count`` items pay for: at most every core, each with at least
    ``min_per_worker`` items (a worker costs a process start and a verifier's set-up)."""
    return max(1, min(cores(), count // max(1, min_per_worker)))


def map_in_workers(
    work: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    max_chunk: int,
    chunks_per_worker: int,
) -> Generator[R, None, None]:
    """``work`` of each item, yielded in input order as soon as it and every item before it are
    done: with ``jobs`` > 1 (capped at :func:`cores`) in a pool of that many processes, each set
    up by ``initializer(*initargs)`` and handed chunks of ``len(items) // (jobs *
    chunks_per_worker)`` items (1 to ``max_chunk``), a few chunks per worker out at once so memory
    stays flat; else in this process, set up the same way.

    Raises:
        ``io.worker_failed``: a worker process ended without giving back its chunk (killed, out
            of memory); the items from that chunk on get no result. The pool is shut down, and
            its other workers with it: never a hang.
    """
    jobs = min(jobs, cores())
    if jobs <= 1 or len(items) < 2:
        initializer(*initargs)
        yield from map(work, items)
        return
    from concurrent.futures import Future, ProcessPoolExecutor  # noqa: PLC0415 - lazy (cold start)
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415 - lazy

    # Set up here first: workers forked from this process start with the modules it imported
    # (the verifier's), instead of each importing them again (issue 34: ~0.1 CPU s a worker).
    initializer(*initargs)
    chunk = max(1, min(max_chunk, len(items) // (jobs * chunks_per_worker)))
    starts = iter(range(0, len(items), chunk))
    pool = ProcessPoolExecutor(jobs, initializer=initializer, initargs=initargs)
    pending: deque[Future[list[R]]] = deque()
    try:
        for start in starts:  # fill the window, then one new chunk per chunk given back
            pending.append(pool.submit(_run_chunk, work, items[start : start + chunk]))
            if len(pending) >= jobs * _IN_FLIGHT_PER_WORKER:
                break
        while pending:
            done = pending.popleft().result()
            following = next(starts, None)
            if following is not None:
                pending.append(pool.submit(_run_chunk, work, items[following : following + chunk]))
            yield from done
    except BrokenProcessPool:
        pool.shutdown(wait=False, cancel_futures=True)
        raise errors.ParseError(
            "io.worker_failed",
            f"a worker process ended unexpectedly (killed, or out of memory); "
            f"{len(items)} inputs were given, the results above are all that were decided",
        ) from None
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_chunk(work: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    return [work(item) for item in chunk]


class Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal, stdout is not (a
    command that prints a line per item shows its own progress there) and there is more than
    one item; redrawn every 1% and at the end. ``unit`` follows the count (``" receipts"``)."""

    def __init__(self, total: int, *, unit: str = "", lines_on_stdout: bool = False) -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.enabled = total > 1 and sys.stderr.isatty()
        if lines_on_stdout and sys.stdout.isatty():
            self.enabled = False
        self.step = max(1, total // 100)

    def tick(self) -> None:
        """Count one item done."""
        self.done += 1
        if self.enabled and (self.done == self.total or self.done % self.step == 0):
            filled = 30 * self.done // self.total
            bar = "#" * filled + "." * (30 - filled)
            sys.stderr.write(f"\r[{bar}] {self.done}/{self.total}{self.unit}")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
