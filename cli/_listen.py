"""A bound, listening TCP socket for a server command (``registry serve``, ``witness serve``),
bound before anything else starts so a busy or invalid address is one line, ``net.bind_failed``
from every server, and handed to uvicorn.
"""

from __future__ import annotations

import socket
from typing import Any

from affidavit.registry.errors import NetError

__all__ = ["listen"]


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
