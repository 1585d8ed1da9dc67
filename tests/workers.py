"""Threads and tasks whose failures reach the test (issue 36: "every assertion can fail").

An assertion inside a ``threading.Thread`` target, or inside a task awaited by
``asyncio.gather(..., return_exceptions=True)`` whose results are dropped, fails nobody: the
thread prints a traceback and ends, the gathered exception is discarded, and the test goes on to
pass. :class:`Worker` keeps what its target raised and :meth:`Worker.check` raises it in the
test; :func:`gather_all` awaits every task (one failing does not cancel the others) and then
raises whatever any of them raised.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any


class Worker(threading.Thread):
    """A daemon thread running ``target(*args)``; :meth:`check` hands its failure to the test."""

    def __init__(self, target: Callable[..., Any], *args: Any, name: str | None = None) -> None:
        super().__init__(name=name or getattr(target, "__name__", None), daemon=True)
        self._call = target
        self._args = args
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._call(*self._args)
        except BaseException as e:  # handed to the test thread by check()
            self.error = e

    def check(self, timeout: float) -> Any:
        """Join (at most ``timeout`` seconds); fail if it still runs, raise what it raised, else
        return what it returned."""
        self.join(timeout)
        if self.is_alive():
            raise AssertionError(f"thread {self.name} still runs after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


async def gather_all(*awaitables: Awaitable[Any]) -> list[Any]:
    """``asyncio.gather`` that lets every awaitable finish, then raises what any raised (the one
    exception, or a group of them); else the results in order."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise BaseExceptionGroup(f"{len(failures)} of {len(results)} tasks failed", failures)
    return list(results)
