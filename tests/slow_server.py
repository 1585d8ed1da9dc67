"""A real HTTP server on 127.0.0.1 that answers too slowly, for the clients' deadline tests.

Each connection gets its own thread: the request's head is read, then the answer is sent as the
``mode`` says:

- ``drip-body``: a 200 head with ``Content-Length: 1000``, then one body byte every ``interval``;
- ``drip-head``: the status line and headers themselves, one byte every ``interval``;
- ``huge-length``: a 200 head announcing ``Content-Length`` of 1 TiB, then nothing (held open);
- ``silent``: nothing at all (held open).

Nothing is held longer than ``hold`` seconds; :meth:`close` (or leaving the ``with``) stops every
thread.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Final

__all__ = ["SlowServer"]

_HEAD: Final = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
_HUGE: Final = b"HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n"


class SlowServer:
    """A listening socket on 127.0.0.1 and a thread per connection (module docstring)."""

    def __init__(self, mode: str = "drip-body", *, interval: float = 0.4, hold: float = 30.0):
        self.mode = mode
        self.interval = interval
        self.hold = hold
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = int(self._listener.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def __enter__(self) -> SlowServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting and end every connection's thread."""
        self._stop.set()
        self._accepting.join(5)
        self._listener.close()
        for thread in self._threads:
            thread.join(5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(self.hold)
            received = b""
            try:
                while b"\r\n\r\n" not in received:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    received += chunk
                if self.mode == "drip-head":
                    self._drip(conn, _HEAD)
                elif self.mode == "drip-body":
                    conn.sendall(_HEAD)
                    self._drip(conn, b"x" * 1000)
                else:
                    if self.mode == "huge-length":
                        conn.sendall(_HUGE)
                    self._stop.wait(self.hold)
            except OSError:
                return

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        ends = time.monotonic() + self.hold
        for i in range(len(data)):
            if self._stop.wait(self.interval) or time.monotonic() > ends:
                return
            conn.sendall(data[i : i + 1])
