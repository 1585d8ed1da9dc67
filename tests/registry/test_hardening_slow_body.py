"""Slow bodies against a real ``registry serve`` on 127.0.0.1: a request whose Content-Length
exceeds what is sent is answered 408 ``http.body_timeout`` and closed after the body-read timeout,
instead of holding a worker until the client gives up; idle keep-alive connections are closed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.verify.scitt.cbor import decode

from tests.processes import free_port

pytestmark = pytest.mark.network_local

AFFIDAVIT = str(Path(sys.executable).parent / "affidavit")
BODY_TIMEOUT = 1.0
KEEP_ALIVE = 1.0
BOUND = 15.0  # generous: the answer must come long before a client would give up


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, str]]:
    data = tmp_path / "data"
    token = json.loads(
        subprocess.run(
            [
                AFFIDAVIT,
                "registry",
                "keys",
                "create",
                "--scope",
                "facts:write",
                "--scope",
                "publish",
                "--publisher",
                "acme",
                "--data-dir",
                str(data),
                "--json",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        ).stdout
    )["api_key"]
    port = free_port()
    env = {
        **os.environ,
        "AFFIDAVIT_BODY_TIMEOUT": str(BODY_TIMEOUT),
        "AFFIDAVIT_KEEP_ALIVE_TIMEOUT": str(KEEP_ALIVE),
        "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(tmp_path / "none"),
    }
    process = subprocess.Popen(
        [
            AFFIDAVIT,
            "registry",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(data),
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the registry did not start"
                time.sleep(0.05)
        yield port, token
    finally:
        process.terminate()
        process.wait(20)


def _read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection (bounded by the socket timeout)."""
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


@pytest.mark.parametrize("path", ["/v1/facts", "/protocol/adapter-contracts"])
def test_short_body_is_408_and_closed(server: tuple[int, str], path: str) -> None:
    port, token = server
    method = "PUT" if path == "/v1/facts" else "POST"
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as sock:
        sock.sendall(head.encode() + b'{"entity": ')  # 11 of the 1000 bytes announced
        started = time.monotonic()
        answer = _read_all(sock)  # the server answers and closes; we never send the rest
        elapsed = time.monotonic() - started
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.split(b" ")[1] == b"408", answer[:200]
    body = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert body["code"] == "http.body_timeout"
    assert elapsed < BOUND


def test_a_short_scitt_body_is_408_problem_details_and_closed(server: tuple[int, str]) -> None:
    """The SCRAPI route answers in CBOR problem details, and closes as the JSON routes do
    (issue 22: ``Connection: close`` was missing there, so the unread body held the socket)."""
    port, _ = server
    head = (
        "POST /entries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/cose\r\n"
        "Content-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as sock:
        sock.sendall(head.encode() + b"\xd2\x84")  # 2 of the 1000 bytes announced
        answer = _read_all(sock)  # the server answers and closes; we never send the rest
    head_bytes, _, content = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.split(b"\r\n")
    headers = dict(line.lower().split(b": ", 1) for line in header_lines)
    assert status_line.split(b" ")[1] == b"408", answer[:200]
    assert headers[b"connection"] == b"close"
    assert headers[b"content-type"] == b"application/concise-problem-details+cbor"
    assert decode(content, what="problem")[-2].startswith("http.body_timeout: ")


def test_idle_keep_alive_connection_is_closed(server: tuple[int, str]) -> None:
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = _read_response(sock)  # the whole answer, however the bytes arrive
        assert first.startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        rest = _read_all(sock)  # returns once the server closes the idle connection
        assert rest == b""
        assert time.monotonic() - started < BOUND


def _read_response(sock: socket.socket) -> bytes:
    """One HTTP/1.1 response with a Content-Length body: headers, then exactly that many bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "closed before the headers ended"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")[1:]
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed before the body ended"
        body += chunk
    assert len(body) == length, "more bytes than announced"
    return head + b"\r\n\r\n" + body


def test_announced_body_on_a_route_without_body(server: tuple[int, str]) -> None:
    """A GET announcing a body it never sends is answered; the connection does not hold a
    worker forever (closed by the keep-alive or body timeout)."""
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n")
        started = time.monotonic()
        answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 200")
        assert time.monotonic() - started < BOUND
