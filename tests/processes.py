"""Real processes on 127.0.0.1 for tests: a free port, ``affidavit registry serve`` (one, or
several on one database), and the fault helpers that pause them.

Every process is started for real and stopped by the test that started it (SIGTERM, or SIGKILL
for fault tests); nothing listens beyond 127.0.0.1. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

AFFIDAVIT = str(Path(sys.executable).parent / "affidavit")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that refuses connections for the length of the block: bound here
    and never listening, so no other process can take it meanwhile (a port merely found free a
    moment ago may be listening by the time the test connects: issue 36)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def stderr_until(
    process: subprocess.Popen[bytes], marker: bytes, bound: float
) -> tuple[bool, bytes]:
    """Read ``process``'s stderr pipe until ``marker`` appears (True) or the process exits or
    ``bound`` seconds pass (False); with what was read (the rest stays in the pipe)."""
    assert process.stderr is not None
    fd = process.stderr.fileno()
    seen = b""
    os.set_blocking(fd, False)
    try:
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            with contextlib.suppress(BlockingIOError):
                seen += os.read(fd, 65536)
            if marker in seen:
                return True, seen
            if process.poll() is not None:
                with contextlib.suppress(BlockingIOError):
                    seen += os.read(fd, 65536)
                return marker in seen, seen
            time.sleep(0.02)
        return False, seen
    finally:
        os.set_blocking(fd, True)


def api_key(
    data_dir: Path, *scopes: str, publisher: str = "acme", database_url: str | None = None
) -> str:
    """A registry API key with ``scopes`` (``affidavit registry keys create``), shown once."""
    args = [AFFIDAVIT, "registry", "keys", "create", "--data-dir", str(data_dir), "--json"]
    if database_url is not None:
        args += ["--database-url", database_url]
    for scope in scopes:
        args += ["--scope", scope]
    if "publish" in scopes:
        args += ["--publisher", publisher]
    return str(json.loads(subprocess.run(args, check=True, capture_output=True).stdout)["api_key"])


class RegistryProcess:
    """``affidavit registry serve`` in a subprocess on 127.0.0.1, with extra environment."""

    stderr_text = b""
    launch_output = b""  # the stderr of the last start that failed

    def __init__(
        self,
        data_dir: Path,
        env: Mapping[str, str] | None = None,
        *,
        log_file: Path | None = None,
        access_log: bool = False,
        command: str = AFFIDAVIT,
    ) -> None:
        """``log_file``: stderr goes there instead of a pipe (a pipe can fill up under a long
        load and stall the server; the benchmarks use a file). ``access_log``: a line per
        request (off unless asked). ``command``: the ``affidavit`` to run (the benchmarks run
        a user's install, bench/_install.py; default this virtualenv's)."""
        self.command = command
        self.data_dir = data_dir
        self.log_file = log_file
        self.access_log = access_log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(data_dir / "none"),
            **(env or {}),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.token = ""  # an API key, for the tests that set one

    def start(self, attempts: int = 3) -> None:
        """Start it and wait (at most 20 s) until ``/v1/health`` answers 200.

        The port was picked free a moment before; another process on this host may take it
        before this one binds (issue 36). Then the instance exits with ``net.bind_failed`` and is
        started again on another free port (``port`` and ``url`` follow). Health is asked only
        once its own banner line said it listens, so another process's answer is never taken
        for this one's."""
        for _ in range(attempts):
            if self._launch():
                break
            if b"net.bind_failed" not in self.launch_output:
                raise AssertionError(f"the registry did not start: {self.stderr_text[-2000:]!r}")
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        else:
            raise AssertionError(f"no free port held in {attempts} tries: {self.stderr_text!r}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                break
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError(f"the registry did not start: {self.stderr_text[-2000:]!r}")

    def _launch(self) -> bool:
        """Start the process on ``self.port``; True once its banner says it listens there,
        False when it exited first (reaped; its stderr in ``stderr_text``)."""
        stderr: Any = subprocess.PIPE
        offset = len(self.stderr_text)  # where this run's stderr begins
        if self.log_file is not None:
            offset = self.log_file.stat().st_size if self.log_file.exists() else 0
            stderr = self.log_file.open("ab")
        self.process = subprocess.Popen(
            [
                self.command,
                "registry",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
                "--access-log" if self.access_log else "--no-access-log",
            ],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        if self.log_file is not None:
            stderr.close()  # the child holds its own descriptor
        banner = f"registry on {self.url} ".encode()  # printed once bound (cli/registry.py)
        if self.log_file is None:
            bound, seen = stderr_until(self.process, banner, 20)
            self.stderr_text += seen  # the rest is read when it is reaped
        else:
            bound, deadline = False, time.monotonic() + 20
            while not bound and self.process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
                bound = banner in self.log_file.read_bytes()[offset:]
            bound = bound or banner in self.log_file.read_bytes()[offset:]
        if bound:
            return True
        if self.process.poll() is None:
            self.stop()
            raise AssertionError(f"the registry printed no banner: {self.stderr_text[-2000:]!r}")
        self._reap(10)
        self.launch_output = self.stderr_text[offset:]
        return False

    def _reap(self, timeout: float) -> int:
        assert self.process is not None
        code = self.process.wait(timeout)
        if self.log_file is not None:
            self.stderr_text = self.log_file.read_bytes()
        elif self.process.stderr is not None and not self.process.stderr.closed:
            self.stderr_text += self.process.stderr.read()
            self.process.stderr.close()
        return code

    def kill(self) -> None:
        """SIGKILL, no shutdown at all."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self._reap(10)

    def stop(self) -> int:
        """SIGTERM (a graceful shutdown; SIGCONT first, should a fault test have paused it) and
        wait; returns the exit status."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
        return self._reap(30)


@contextlib.contextmanager
def serving(
    folder: Path,
    *scopes: str,
    count: int = 1,
    database_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[list[RegistryProcess]]:
    """``count`` registry instances on one store: SQLite in ``folder/data``, or the PostgreSQL
    database at ``database_url`` (then behind one public URL, as behind a load balancer). Each
    instance's stderr goes to ``folder/instance-N.log`` (a fault logs a line per refused request,
    and a full pipe stalls a server) and its ``token`` is one API key of ``scopes``. All are
    stopped at the end."""
    data = folder / "data"
    data.mkdir(exist_ok=True)
    shared = dict(env or {})
    if database_url is not None:
        shared |= {
            "AFFIDAVIT_DATABASE_URL": database_url,
            "AFFIDAVIT_PUBLIC_URL": "https://registry.example",
        }
    servers = [
        RegistryProcess(data, shared, log_file=folder / f"instance-{n}.log") for n in range(count)
    ]
    started: list[RegistryProcess] = []
    try:
        for server in servers:
            server.start()
            started.append(server)
        token = api_key(data, *scopes, database_url=database_url)
        for server in servers:
            server.token = token
        yield servers
    finally:
        for server in started:
            server.stop()


def until(check: Callable[[], bool], bound: float, step: float = 0.05, what: str = "") -> float:
    """Seconds until ``check()`` is true; fails (saying ``what``) after ``bound`` seconds."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > bound:
            pytest.fail(f"not within {bound} s{': ' + what if what else ''}")
        time.sleep(step)
    return time.monotonic() - started


def stop_inside(
    pid: int, inside: Callable[[], bool], bound: float = 60, settle: float = 0.2
) -> float:
    """SIGSTOP process ``pid`` at a moment ``inside()`` is true: look, stop, wait ``settle``
    seconds, look again, else resume it and try again. Returns how long catching took; fails
    after ``bound`` seconds. The wait lets what the process sent before it stopped land (a
    COMMIT already on the wire ends its transaction a moment after the stop; looking at once
    could catch it on its way out)."""
    started = time.monotonic()
    while time.monotonic() < started + bound:
        if not inside():
            continue
        os.kill(pid, signal.SIGSTOP)
        time.sleep(settle)
        if inside():  # stopped inside it
            return time.monotonic() - started
        os.kill(pid, signal.SIGCONT)
    pytest.fail(f"never caught process {pid} inside within {bound} s")
