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
        page = self.server.pages.get(self.path)
        if page is not None:  # a page of the test's own, on the proxy's origin
            self._send(200, {"content-type": page[0]}, page[1])
            return
        upstream = self.server.upstream + self.path
        answer = httpx.get(
            upstream, timeout=10, headers={"accept": self.headers.get("accept", "*/*")}
        )
        body = self.server.tamper(self.path, answer.content)
        self._send(answer.status_code, answer.headers, body)

    def _send(self, status: int, headers: Any, body: bytes) -> None:
        self.send_response(status)
        for name in _KEPT:
            if name in headers:
                self.send_header(name, headers[name])
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def tamper_proxy(upstream: str) -> Iterator[ThreadingHTTPServer]:
    """A proxy of ``upstream`` on a free port; set ``server.tamper`` to change what it serves
    (``server.url`` is its address), and ``server.pages[path] = (content_type, body)`` to serve
    a page of the test's own at ``path`` instead of asking ``upstream``. Stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.upstream = upstream  # type: ignore[attr-defined]
    server.tamper = untouched  # type: ignore[attr-defined]
    server.pages = {}  # type: ignore[attr-defined]
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
