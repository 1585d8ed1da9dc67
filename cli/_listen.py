"""A bound, listening TCP socket for a server command (``registry serve``, ``witness serve``).

The socket is bound before anything else starts, so a busy or invalid address is one error line
(style.md §11), the same code from every server (``registry.bind_failed``), and handed to uvicorn
(``Server.run(sockets=[...])``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from affidavit.registry.errors import RegistryError
from affidavit.verify.errors import AffidavitError

__all__ = ["bind_failed", "listen"]


def bind_failed(message: str, port: int) -> AffidavitError:
    """``registry.bind_failed``: what a server that cannot listen says, whichever it is."""
    return RegistryError("registry.bind_failed", message, details={"port": port})


def listen(
    host: str,
    port: int,
    *,
    backlog: int,
    refused: Callable[[str, int], AffidavitError] = bind_failed,
) -> Any:
    """A bound, listening, inheritable TCP socket for ``host:port``.

    Raises:
        ``registry.bind_failed`` (or what ``refused`` makes of the message and port): the
            address is in use, not permitted or not valid.
    """
    import socket  # noqa: PLC0415 - lazy: ~2 ms, only serve listens

    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listener = socket.socket(info[0], socket.SOCK_STREAM)
    except OSError as e:
        raise refused(f"cannot listen on {host}:{port}: {e}", port) from e
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(info[4])
        listener.listen(backlog)
    except OSError as e:
        listener.close()
        raise refused(f"cannot listen on {host}:{port}: {e.strerror or e}", port) from e
    listener.set_inheritable(True)
    return listener
