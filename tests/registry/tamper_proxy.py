"""A man in the middle for tests: an HTTP server on 127.0.0.1 that forwards every GET to a real
registry and hands each answer to ``tamper(path, body) -> body`` before the client sees it.

What a client (``affidavit lookup``, the explorer in Chromium) must do when the bytes it is
served are not the registry's: say "not verified", never "found".
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

Tamper = Callable[[str, bytes], bytes]
_KEPT = ("content-type", "content-security-policy", "x-content-type-options", "referrer-policy")


def untouched(path: str, body: bytes) -> bytes:
    """Forward as is."""
    return body


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:
        upstream = self.server.upstream + self.path
        answer = httpx.get(
            upstream, timeout=10, headers={"accept": self.headers.get("accept", "*/*")}
        )
        body = self.server.tamper(self.path, answer.content)
        self.send_response(answer.status_code)
        for name in _KEPT:
            if name in answer.headers:
                self.send_header(name, answer.headers[name])
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def tamper_proxy(upstream: str) -> Iterator[ThreadingHTTPServer]:
    """A proxy of ``upstream`` on a free port; set ``server.tamper`` to change what it serves
    (``server.url`` is its address). Stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.upstream = upstream  # type: ignore[attr-defined]
    server.tamper = untouched  # type: ignore[attr-defined]
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
