"""A deadline for a whole HTTP exchange, enforced under httpx on every socket operation.

httpx's ``timeout`` bounds each connect, write and read on its own: a server sending one byte
every 0.4 s never trips a 1 s read timeout (issue 21, item 5). Here every socket operation is
bounded by the time left before the deadline :func:`deadline` sets, through the connection pool
of :func:`transport`; a timeout is httpcore's own, so httpx reports it as
``httpx.TimeoutException``. Not bounded: name resolution, and transports httpx builds from
``HTTP_PROXY``-style variables (the fetcher still checks the clock between body chunks).
"""

from __future__ import annotations

import contextlib
import contextvars
import ssl
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

__all__ = ["deadline", "transport"]

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "affidavit_http_deadline", default=None
)


@contextlib.contextmanager
def deadline(at: float) -> Iterator[None]:
    """Every socket operation of the deadline transports inside ends by ``at``
    (``time.monotonic()``)."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded(timeout: float | None, late: type[Exception]) -> float | None:
    """``timeout`` cut to the time left; ``late`` when none is left (never 0: that would make
    the socket non-blocking)."""
    at = _DEADLINE.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise late("the exchange's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every read, write and TLS handshake ends by the deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's backend with every stream it opens bounded by the deadline."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, bounded, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:  # pragma: no cover - the clients speak TCP
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:  # pragma: no cover - httpcore's connect retries
        self._inner.sleep(seconds)


def transport() -> httpx.HTTPTransport:
    """An ``httpx.HTTPTransport`` (httpx's defaults) whose sockets keep :func:`deadline`.

    httpx takes no network backend, so the one its pool holds is wrapped in place; the deadline
    tests (tests/registry/test_http_rule.py) fail if a new httpx or httpcore moves it.

    Raises:
        TypeError: this httpx or httpcore keeps its pool or backend elsewhere.
    """
    made = httpx.HTTPTransport()
    pool = getattr(made, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(pool, httpcore.ConnectionPool) or not isinstance(
        backend, httpcore.NetworkBackend
    ):  # pragma: no cover - guards an httpx upgrade
        raise TypeError("this httpx/httpcore cannot be given a deadline; see registry/clients")
    pool._network_backend = _Backend(backend)  # httpx takes no backend: see the docstring
    return made
