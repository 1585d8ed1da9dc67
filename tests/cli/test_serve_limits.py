"""Idle connections do not take a server offline (issue 38, item 1): ``cli/_serve.py`` closes a
connection that has not sent a whole request head within the request-head timeout, keeps the
connections it holds below the descriptor limit, and logs a refusal or an accept failure as one
line per cause per second, never a traceback per connection.

Both servers that run on it, ``witness serve`` and ``registry serve``, as real processes with a
descriptor limit of 256 set for the child: more idle or half-sent connections than that, then a
normal request must still be answered, every idle connection closed by the server, and stderr
short. Bounded: 300 connections, every wait has a deadline, the server is stopped at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.cli._serve import _Guard, connection_cap
from affidavit.registry.settings import Settings
from affidavit.verify import errors

from tests.processes import AFFIDAVIT, free_port
from tests.witness.helpers import Tree, write_key

pytestmark = pytest.mark.network_local

NOFILE = 256  # the child's descriptor limit, soft and hard
IDLE = 300  # more connections than the child has descriptors
HEADER_TIMEOUT = 2  # seconds, through each server's own setting
HALF_LINE = b"GET /v1/health HT"  # half a request line, then nothing


def _low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


# The runner under uvicorn's h11 protocol (the fallback when httptools is not installed): a
# Starlette app on cli/_serve.run, with the limits' defaults but the head timeout.
H11_SERVER = """
import socket, sys
from affidavit.cli import _serve
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

_serve._protocol_class = lambda: H11Protocol
app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok"))])
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])), backlog=1024)
limits = _serve.Limits(header_timeout_s=float(sys.argv[2]))
_serve.run(app, listener, host="127.0.0.1", port=int(sys.argv[1]), limits=limits)
"""


def _command(kind: str, folder: Path, port: int) -> tuple[list[str], dict[str, str], str]:
    """The server's command line, environment and the path of a request it answers."""
    env = {**os.environ, "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(folder / "none")}
    address = ["--host", "127.0.0.1", "--port", str(port)]
    if kind == "h11":
        return [sys.executable, "-c", H11_SERVER, str(port), str(HEADER_TIMEOUT)], env, "/"
    if kind == "witness":
        log = Tree(1, derive_test_key("serve limits: log"))
        key = write_key(folder / "w.key", derive_test_key("serve limits: witness"))
        args = [AFFIDAVIT, "witness", "serve", "--name", "witness.example/w1", "--key", str(key)]
        args += ["--log-vkey", log.vkey, "--state", str(folder / "state"), *address]
        args += ["--header-timeout", str(HEADER_TIMEOUT)]
        return args, env, f"/{'0' * 64}/checkpoint"
    env["AFFIDAVIT_HEADER_TIMEOUT"] = str(HEADER_TIMEOUT)
    data = ["--data-dir", str(folder / "data"), "--no-access-log"]
    return [AFFIDAVIT, "registry", "serve", *address, *data], env, "/v1/health"


@contextlib.contextmanager
def _serving(kind: str, folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, str, Path]]:
    port = free_port()
    args, env, path = _command(kind, folder, port)
    log = folder / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=_low_descriptor_limit,  # noqa: PLW1509 - a resource limit, no threads yet
        )
    url = f"http://127.0.0.1:{port}{path}"
    try:
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(url, timeout=1)
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the {kind} server did not start: {log.read_bytes()[-2000:]!r}")
        yield process, port, url, log
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def _answered(url: str, bound: float) -> int | None:
    """The status of one GET of ``url``, retried on transport errors for ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=2).status_code
        except httpx.HTTPError:
            time.sleep(0.1)
    return None


def _closed_by_server(conn: socket.socket, deadline: float) -> bool:
    """True once the server closed ``conn`` (end of stream or a reset), before ``deadline``."""
    while (left := deadline - time.monotonic()) > 0:
        conn.settimeout(left)
        try:
            if conn.recv(4096) == b"":
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
    return False


@pytest.mark.parametrize("kind", ["witness", "registry", "h11"])
def test_idle_connections_beyond_the_descriptor_limit_do_not_stop_the_server(
    kind: str, tmp_path: Path
) -> None:
    with _serving(kind, tmp_path) as (process, port, url, log):
        idle: list[socket.socket] = []
        try:
            for n in range(IDLE):
                conn = socket.create_connection(("127.0.0.1", port), 5)
                if n % 2:
                    conn.sendall(HALF_LINE)
                idle.append(conn)
            held = len(os.listdir(f"/proc/{process.pid}/fd"))
            assert held < NOFILE, f"the server holds {held} descriptors of {NOFILE}"
            assert _answered(url, bound=10) in {200, 404}, log.read_bytes()[-2000:]
            deadline = time.monotonic() + HEADER_TIMEOUT + 15
            still_open = [n for n, c in enumerate(idle) if not _closed_by_server(c, deadline)]
            assert not still_open, f"{len(still_open)} idle connections were never closed"
            assert _answered(url, bound=10) in {200, 404}
            assert process.poll() is None
        finally:
            for conn in idle:
                conn.close()
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]
    assert len(text.splitlines()) <= 40, text[-3000:]


@pytest.mark.parametrize("kind", ["witness", "h11"])
def test_half_a_further_request_on_a_kept_alive_connection_is_closed(
    kind: str, tmp_path: Path
) -> None:
    """The head timeout starts again with the first byte of each further request (uvicorn's
    keep-alive timer stops at that byte)."""
    with _serving(kind, tmp_path) as (_, port, url, _log):
        path = url.split(str(port), 1)[1]
        with socket.create_connection(("127.0.0.1", port), 5) as conn:
            conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            conn.settimeout(10)
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += conn.recv(4096)
            assert answer.startswith(b"HTTP/1.1 "), answer
            conn.sendall(HALF_LINE)  # a further request begins, and stops
            time.sleep(0.2)
            while conn.recv(4096) != b"":  # the rest of the first answer, then the close
                pass


def test_failed_accepts_are_one_line_per_cause_per_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the loop reports when an accept finds no descriptor (asyncio and uvloop both call the
    loop's exception handler): one line, then the count a second later, no traceback."""
    guard = _Guard(HEADER_TIMEOUT, 8)
    context = {
        "message": "socket.accept() out of system resource",
        "exception": OSError(errno.EMFILE, "Too many open files"),
    }
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
            for _ in range(500):
                guard.loop_exception(loop, context)
            loop.run_until_complete(asyncio.sleep(1.2))
    finally:
        loop.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "socket.accept() out of system resource: Too many open files",
        "socket.accept() out of system resource: Too many open files: 499 more in the last second",
    ]
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.parametrize(
    ("wanted", "descriptors", "cap"),
    [(None, 1024, 896), (None, 256, 192), (100, 1024, 100), (5000, 1024, 896), (None, 40, 1)],
)
def test_the_connection_cap_stays_below_the_descriptor_limit(
    wanted: int | None, descriptors: int, cap: int
) -> None:
    assert connection_cap(wanted, descriptors) == cap


def test_the_registry_reads_its_limits_from_the_environment() -> None:
    env = {"AFFIDAVIT_HEADER_TIMEOUT": "2.5", "AFFIDAVIT_MAX_CONNECTIONS": "50"}
    settings = Settings.from_env(env)
    assert (settings.header_timeout_s, settings.max_connections) == (2.5, 50)
    assert (Settings().header_timeout_s, Settings().max_connections) == (10.0, None)
    for bad in ({"AFFIDAVIT_HEADER_TIMEOUT": "0"}, {"AFFIDAVIT_MAX_CONNECTIONS": "0"}):
        with pytest.raises(errors.UsageError):
            Settings.from_env(bad)
