"""Running a server command's ASGI app (``registry serve``, ``witness serve``): uvicorn on the
socket :func:`affidavit.cli._listen.listen` bound, its logs on stderr, until SIGTERM or Ctrl-C.

uvicorn is imported only when a server runs (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from typing import Any

__all__ = ["run", "send_logs", "stderr_handler"]


def run(app: Any, listener: Any, *, host: str, port: int, keep_alive_s: float = 5) -> None:
    """Serve ``app`` on ``listener`` until SIGTERM or Ctrl-C (graceful shutdown, at most 10 s):
    uvloop and httptools when installed; uvicorn's access log off (a service logs its own and
    never headers: API keys live there) and its logging left as the command set it."""
    import uvicorn  # noqa: PLC0415 - lazy: the server stack (~100 ms) only for serve

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop=_best("uvloop", "auto"),
        http=_best("httptools", "h11"),
        access_log=False,
        log_config=None,
        timeout_graceful_shutdown=10,
        timeout_keep_alive=max(1, round(keep_alive_s)),
        lifespan="on",
    )
    uvicorn.Server(config).run(sockets=[listener])


def stderr_handler(form: str) -> logging.Handler:
    """A handler writing records to stderr as ``form`` (a :class:`logging.Formatter` format)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(form))
    return handler


def send_logs(handler: logging.Handler, *names: str) -> None:
    """The loggers ``names`` write through ``handler`` only, from INFO up; ``uvicorn.error``
    propagates to ``uvicorn`` (name that one among them)."""
    for name in names:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False
    logging.getLogger("uvicorn.error").handlers[:] = []


def _best(module: str, fallback: str) -> str:
    return module if importlib.util.find_spec(module) is not None else fallback
