"""One check over many inputs: in this process or in a process pool, with a progress bar on a
terminal. Shared by ``verify bundle`` and ``verify receipt DIR``.

Nothing here imports anything heavy: ``verify bundle``'s cold start loads it
(docs/adr/0003-cold-start.md); the pool is imported only when one is started.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["Progress", "map_in_workers"]

T = TypeVar("T")
R = TypeVar("R")


def map_in_workers(
    work: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    max_chunk: int,
    chunks_per_worker: int,
) -> Iterator[R]:
    """``work`` of each item, in order. With ``jobs`` > 1 (capped at the CPU count) and more
    than one item, in a pool of that many processes, each set up by ``initializer(*initargs)``
    and handed items in chunks of ``len(items) // (jobs * chunks_per_worker)`` (1 to
    ``max_chunk``); else in this process, set up the same way."""
    jobs = min(jobs, os.cpu_count() or 1)
    if jobs <= 1 or len(items) < 2:
        initializer(*initargs)
        yield from map(work, items)
        return
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - lazy (cold start)

    chunk = max(1, min(max_chunk, len(items) // (jobs * chunks_per_worker)))
    with ProcessPoolExecutor(jobs, initializer=initializer, initargs=initargs) as pool:
        yield from pool.map(work, items, chunksize=chunk)


class Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal and there is more than
    one item; redrawn every 1% and at the end. ``unit`` follows the count (``" receipts"``)."""

    def __init__(self, total: int, *, unit: str = "") -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.enabled = total > 1 and sys.stderr.isatty()
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
