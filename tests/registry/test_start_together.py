"""N instances started at once on a fresh data folder (issue 21, item 7): every one comes up,
with one publisher key, on SQLite and on PostgreSQL.

Operators start replicas together (compose, systemd, Kubernetes); the first start generates the
key. Four real ``affidavit registry serve`` processes on 127.0.0.1 are launched from four threads
released by one barrier, so they race to generate it.
"""

from __future__ import annotations

import concurrent.futures
import threading
from pathlib import Path

import httpx
import pytest

from tests.processes import RegistryProcess, free_port

pytestmark = pytest.mark.network_local

INSTANCES = 4


def _start_together(data: Path, env: dict[str, str]) -> None:
    logs = [data.parent / f"instance-{i}.log" for i in range(INSTANCES)]
    servers = [RegistryProcess(data, env, log_file=log) for log in logs]
    barrier = threading.Barrier(INSTANCES)

    def start(server: RegistryProcess) -> None:
        barrier.wait()
        try:
            server.start()
        except AssertionError:
            if b"net.bind_failed" not in server.stderr_text:
                raise
            server.port = free_port()  # another process on this host took the port meanwhile
            server.url = f"http://127.0.0.1:{server.port}"
            server.start()

    try:
        with concurrent.futures.ThreadPoolExecutor(INSTANCES) as pool:
            failures = [f.exception() for f in [pool.submit(start, s) for s in servers]]
        assert failures == [None] * INSTANCES, failures
        keys = {httpx.get(s.url + "/protocol/merkle/public-key", timeout=10).text for s in servers}
        heads = {httpx.get(s.url + "/tlog/checkpoint", timeout=10).status_code for s in servers}
    finally:
        for server in servers:
            server.stop()
    assert len(keys) == 1, keys  # one key, served by all
    assert heads == {200}
    key_files = sorted(p.name for p in (data / "keys").iterdir())
    assert [n for n in key_files if not n.startswith("registry-1.key.logstate-")] == [
        "affidavit-local-publisher.json",
        "registry-1.key",
        "registry-1.pub",
    ], key_files
    assert ((data / "keys" / "registry-1.key").stat().st_mode & 0o777) == 0o600


def test_four_instances_on_sqlite_start_together(tmp_path: Path) -> None:
    _start_together(tmp_path / "data", {"AFFIDAVIT_READ_THREADS": "1"})


def test_four_instances_on_postgresql_start_together(tmp_path: Path, pg_url: str) -> None:
    _start_together(
        tmp_path / "data", {"AFFIDAVIT_DATABASE_URL": pg_url, "AFFIDAVIT_READ_THREADS": "1"}
    )
