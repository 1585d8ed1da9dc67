"""Real processes on 127.0.0.1 for tests: a free port, and ``affidavit registry serve``.

Every process is started for real and stopped by the test that started it (SIGTERM, or SIGKILL
for fault tests); nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

AFFIDAVIT = str(Path(sys.executable).parent / "affidavit")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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

    def __init__(
        self, data_dir: Path, env: Mapping[str, str] | None = None, *, log_file: Path | None = None
    ) -> None:
        """``log_file``: stderr goes there instead of a pipe (a pipe can fill up under a long
        load and stall the server; the benchmarks use a file)."""
        self.data_dir = data_dir
        self.log_file = log_file
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(data_dir / "none"),
            **(env or {}),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.token = ""  # an API key, for the tests that set one

    def start(self) -> None:
        """Start it and wait (at most 20 s) until ``/v1/health`` answers 200."""
        stderr: Any = subprocess.PIPE
        if self.log_file is not None:
            stderr = self.log_file.open("ab")
        self.process = subprocess.Popen(
            [
                AFFIDAVIT,
                "registry",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
                "--no-access-log",
            ],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        if self.log_file is not None:
            stderr.close()  # the child holds its own descriptor
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError(f"the registry did not start: {self.stderr_text[-2000:]!r}")

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
        """SIGTERM (a graceful shutdown) and wait; returns the exit status."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self._reap(30)
