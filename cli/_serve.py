"""Running a server command's ASGI app (``registry serve``, ``witness serve``): uvicorn on the
socket :func:`listen` bound first (a busy or invalid address: one line, ``net.bind_failed``), its
logs on stderr, until SIGTERM or Ctrl-C, every connection under one guard (:class:`Limits`:
docs/transparency.md "Connections").

uvloop and httptools (the ``registry`` extra, docs/adr/0018) run when installed, else asyncio and
h11; uvicorn is imported only when a server runs (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import asyncio
import errno
import importlib.metadata
import json
import logging
import resource
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from affidavit.registry.errors import NetError

__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "JsonLines",
    "Limits",
    "connection_cap",
    "json_lines_everywhere",
    "listen",
    "run",
    "send_logs",
    "stderr_handler",
]

DEFAULT_HEADER_TIMEOUT_S: Final = 10.0
_RESERVE_MIN: Final = 64  # descriptors kept for databases, key files, logs, threads
_UNLIMITED: Final = 1 << 16  # the cap when RLIMIT_NOFILE is unlimited
_ACCEPT_ERRORS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_LOG = logging.getLogger("uvicorn.error")


@dataclass(frozen=True, slots=True)
class Limits:
    """The connection guard of :func:`run`: the request-head timeout in seconds and the most
    connections held at once (None: as many as the descriptor limit allows)."""

    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    max_connections: int | None = None


def connection_cap(wanted: int | None, descriptors: int | None = None) -> int:
    """The connections a server holds at most: ``wanted`` (None: no wish), never above the
    descriptor limit ``descriptors`` (default: this process's soft ``RLIMIT_NOFILE``) less a
    reserve of max(64, 1/8 of it), and at least 1."""
    if descriptors is None:
        descriptors = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if descriptors == resource.RLIM_INFINITY or descriptors < 0:
        descriptors = _UNLIMITED
    cap = descriptors - max(_RESERVE_MIN, descriptors // 8)
    if wanted is not None:
        cap = min(cap, wanted)
    return max(1, cap)


def listen(host: str, port: int, *, backlog: int) -> Any:
    """A bound, listening, inheritable TCP socket for ``host:port``.

    Raises:
        ``net.bind_failed``: the address is in use, not permitted or not valid (details:
            ``port``).
    """
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listener = socket.socket(info[0], socket.SOCK_STREAM)
    except OSError as e:
        raise _refused(f"cannot listen on {host}:{port}: {e}", port) from e
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(info[4])
        listener.listen(backlog)
    except OSError as e:
        listener.close()
        raise _refused(f"cannot listen on {host}:{port}: {e.strerror or e}", port) from e
    listener.set_inheritable(True)
    return listener


def _refused(message: str, port: int) -> NetError:
    return NetError("net.bind_failed", message, details={"port": port})


def run(
    app: Any,
    listener: Any,
    *,
    host: str,
    port: int,
    keep_alive_s: float = 5,
    limits: Limits = Limits(),
) -> None:
    """Serve ``app`` on ``listener`` until SIGTERM or Ctrl-C (graceful shutdown, at most 10 s),
    every connection under ``limits``. uvicorn's access log is off: a service logs its own, never
    headers (API keys live there)."""
    import uvicorn  # noqa: PLC0415 - lazy: the server stack (~100 ms) only for serve

    guard = _Guard(limits.header_timeout_s, connection_cap(limits.max_connections))
    loop_factory, loop_name = _loop_factory()
    protocol = _protocol_class()
    _LOG.info("%s", _stack_line(loop_name, _parser_name(protocol)))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=_guarded(protocol, guard),
        access_log=False,
        log_config=None,
        timeout_graceful_shutdown=10,
        timeout_keep_alive=max(1, round(keep_alive_s)),
        lifespan="on",
    )
    server = uvicorn.Server(config)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        guard.loop = loop
        loop.set_exception_handler(guard.loop_exception)
        await server.serve(sockets=[listener])

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve())


def stderr_handler(form: str) -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(form))
    return handler


class JsonLines(logging.Formatter):
    """Every record as one JSON object on one line (docs/postgresql.md "Operations", issue 33):
    ``ts`` (RFC 3339 UTC, milliseconds), ``level``, ``logger``, then the fields of a record
    whose message is a JSON object (the access log's) or else ``message``; a traceback is one
    string, ``exception``. Nothing here adds what the message does not say (no secrets)."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, UTC)
        document: dict[str, Any] = {
            "ts": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        message = record.getMessage()
        fields = _json_object(message) if message.startswith("{") else None
        if fields is None:
            document["message"] = message
        else:
            document.update((k, v) for k, v in fields.items() if k not in document)
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"), default=str)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_lines_everywhere(*names: str) -> logging.Handler:
    """Send the loggers ``names`` (from INFO up), uvicorn's, and every other logger's warnings
    (the root logger, Python's warnings included) to stderr as JSON lines (:class:`JsonLines`);
    returns the handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    send_logs(handler, *names, "uvicorn")
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    return handler


def send_logs(handler: logging.Handler, *names: str) -> None:
    """The loggers ``names`` write through ``handler`` only, from INFO up (``uvicorn.error``
    through ``uvicorn``)."""
    for name in names:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False
    logging.getLogger("uvicorn.error").handlers[:] = []


def _stack_line(loop: str, parser: str) -> str:
    """The start-up log line: event loop and HTTP parser, and what to install for the fast ones."""
    line = f"server: event loop {loop}, HTTP parser {parser}"
    if not (loop.startswith("uvloop") and parser.startswith("httptools")):
        line += " (install the registry extra, 'affidavit[registry]', for uvloop and httptools)"
    return line


def _named(distribution: str) -> str:
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return distribution


def _loop_factory() -> tuple[Callable[[], asyncio.AbstractEventLoop], str]:
    """uvloop's loop when it imports (a wheel for another platform does not), else asyncio's."""
    try:
        import uvloop  # noqa: PLC0415 - lazy, optional (the registry extra)
    except ImportError:
        return asyncio.new_event_loop, "asyncio"
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory, _named("uvloop")


def _protocol_class() -> Any:
    """uvicorn's HTTP/1.1 protocol: httptools' when httptools imports, else h11's."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: PLC0415
    except ImportError:  # uvicorn imports httptools there
        from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

        return H11Protocol
    return HttpToolsProtocol


# The parser each of uvicorn's HTTP/1.1 protocol modules runs on.
_PARSERS: Final = {
    "uvicorn.protocols.http.httptools_impl": "httptools",
    "uvicorn.protocols.http.h11_impl": "h11",
}


def _parser_name(protocol: Any) -> str:
    parser = _PARSERS.get(protocol.__module__)
    return _named(parser) if parser else f"{protocol.__module__}.{protocol.__qualname__}"


class _Tally:
    """Events counted per cause and logged as one line per cause per second: the first at once,
    then each second the number that came meanwhile, until a second passes without one."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.pending: set[str] = set()

    def note(self, loop: asyncio.AbstractEventLoop | None, cause: str) -> None:
        if cause in self.pending:
            self.counts[cause] = self.counts.get(cause, 0) + 1
            return
        _LOG.warning("%s", cause)
        self._again(loop, cause)

    def _flush(self, loop: asyncio.AbstractEventLoop | None, cause: str) -> None:
        count = self.counts.pop(cause, 0)
        if not count:
            self.pending.discard(cause)
            return
        _LOG.warning("%s: %d more in the last second", cause, count)
        self._again(loop, cause)

    def _again(self, loop: asyncio.AbstractEventLoop | None, cause: str) -> None:
        self.pending.add(cause)
        if loop is not None and not loop.is_closed():
            loop.call_later(1.0, self._flush, loop, cause)
        else:  # pragma: no cover - a note before the loop runs
            self.pending.discard(cause)


class _Guard:
    """The connections of one server: how many are open and which still wait for a request
    head, oldest first."""

    def __init__(self, header_timeout_s: float, cap: int) -> None:
        self.header_timeout_s = header_timeout_s
        self.cap = cap
        self.open = 0
        self.waiting: dict[Any, None] = {}  # insertion order: the oldest first
        self.tally = _Tally()
        self.loop: asyncio.AbstractEventLoop | None = None

    def admit(self, newcomer: Any) -> bool:
        """Count ``newcomer`` in; at the cap, close the oldest connection still waiting for its
        head in its place, or refuse the newcomer (False) when none is waiting."""
        self.open += 1
        if self.open <= self.cap:
            return True
        oldest = next((c for c in self.waiting if c is not newcomer), None)
        if oldest is None:
            self.tally.note(
                self.loop,
                f"refused connections: {self.cap} open, every one in a request "
                "(the connection limit)",
            )
            return False
        self.tally.note(
            self.loop,
            f"closed connections that had not sent a whole request head to admit new ones: "
            f"{self.cap} open (the connection limit)",
        )
        oldest.close_waiting()
        return True

    def timed_out(self) -> None:
        self.tally.note(
            self.loop,
            "closed connections that sent no whole request head within "
            f"{self.header_timeout_s:g} s (the request-head timeout)",
        )

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's exception handler: an accept that failed for want of descriptors or
        memory is one line per cause per second; anything else goes to the default handler."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _ACCEPT_ERRORS:
            self.tally.note(loop, f"{context.get('message', 'accept failed')}: {exc.strerror}")
            return
        loop.default_exception_handler(context)


def _guarded(base: Any, guard: _Guard) -> Any:

    class Guarded(base):  # type: ignore[misc]
        _head_timer: asyncio.TimerHandle | None = None
        _admitted = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._admitted = True
            if not guard.admit(self):
                transport.abort()
                return
            self._wait_for_head()

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a whole request head arrived
                self._head_arrived()
            if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._wait_for_head()  # the first bytes of a further request on this connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            if self._admitted:
                self._admitted = False
                guard.open -= 1
            super().connection_lost(exc)

        def _wait_for_head(self) -> None:
            if self.transport.is_closing():
                return
            self._head_timer = self.loop.call_later(guard.header_timeout_s, self._head_late)
            guard.waiting[self] = None

        def _head_arrived(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            guard.waiting.pop(self, None)

        def _head_late(self) -> None:
            self._head_timer = None
            guard.timed_out()
            self.close_waiting()

        def close_waiting(self) -> None:
            self._head_arrived()
            if not self.transport.is_closing():
                self.transport.abort()

    return Guarded
