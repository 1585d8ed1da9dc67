"""The suite's own rules (issue 36, docs/testing.md): under CI a skip fails unless the test is a
marked vector generator; no test reads a path outside the checkout or ../shared; Hypothesis runs
on example budgets, not a wall-clock deadline; a failure in a worker thread or task reaches the
test."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from hypothesis import HealthCheck, settings

from tests.budget import PROFILE
from tests.conftest import ROOT
from tests.processes import RegistryProcess, free_port, refused_port
from tests.witness.helpers import Tree, WitnessProcess, write_key
from tests.workers import Worker, gather_all

_CONFTEST = """
from tests.conftest import pytest_make_collect_report, pytest_runtest_makereport


def pytest_configure(config):
    config.addinivalue_line("markers", "generator: a vector generator")
"""

_TESTS = """
import pytest


def test_a_tool_is_missing():
    pytest.skip("the frobnicate CLI is not installed")


@pytest.mark.generator
def test_a_generator():
    pytest.skip("set UPDATE_FROB=1 to make a new vector set")


@pytest.mark.parametrize("vector", [])
def test_an_empty_vector_set(vector):
    pass


@pytest.mark.xfail(reason="known", strict=False)
def test_an_expected_failure():
    raise AssertionError


def test_passes():
    pass
"""

_MODULE_SKIP = """
import pytest

pytest.importorskip("affidavit_no_such_oracle")


def test_never_collected():
    pass
"""


def _outcomes(folder: Path, ci: str | None, *files: str) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfEsx", *files],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    summary = done.stdout.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary)}
    counts["stdout"] = done.stdout  # type: ignore[assignment]
    return counts


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(_CONFTEST)
    (tmp_path / "test_sample.py").write_text(_TESTS)
    (tmp_path / "test_module_skip.py").write_text(_MODULE_SKIP)
    return tmp_path


def test_under_ci_a_skip_is_a_failure_unless_a_generator(sample: Path) -> None:
    # (a module that skips itself is a collection error, which stops a run: let this one go on)
    seen = _outcomes(sample, "true", "--continue-on-collection-errors")
    out = seen.pop("stdout")
    # failed: the missing tool; errors: the empty vector set (at setup) and the module
    assert seen == {"failed": 1, "passed": 1, "skipped": 1, "xfailed": 1, "errors": 2}, out
    refused = "skipped under CI=true, which forbids it: Skipped: "
    assert f"{refused}the frobnicate CLI is not installed" in out
    assert f"{refused}got empty parameter set" in out
    assert f"{refused}could not import 'affidavit_no_such_oracle'" in out
    assert "SKIPPED [1] test_sample.py:11: set UPDATE_FROB=1" in out


def test_outside_ci_a_skip_stays_a_skip(sample: Path) -> None:
    seen = _outcomes(sample, None)
    out = seen.pop("stdout")
    assert seen == {"passed": 1, "skipped": 4, "xfailed": 1}, out


# A data path outside the checkout and ../shared exists on one machine only: a test reading it
# skips everywhere else (tests/verify/tlog/test_proof.py read a spec mirror so).
_ELSEWHERE = re.compile(r"^/(work|home|root|opt|mnt|srv|Users|var/lib)(/|$)|[.]mirror")


def test_no_test_reads_a_path_outside_the_checkout_or_shared() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _ELSEWHERE.search(node.value)
    ]
    assert not found, found


def test_hypothesis_runs_on_budgets_not_a_deadline() -> None:
    assert settings.get_current_profile_name() == PROFILE
    assert settings.default.deadline is None
    # a test's own settings keep what they do not name from the profile
    assert settings(max_examples=5).deadline is None
    assert HealthCheck.too_slow in settings(max_examples=5).suppress_health_check


def test_a_failure_in_a_worker_thread_reaches_the_test() -> None:
    def fails() -> None:
        raise AssertionError("index 7 twice")

    worker = Worker(fails)
    worker.start()
    with pytest.raises(AssertionError, match="index 7 twice"):
        worker.check(10)
    done = Worker(lambda: 42)
    done.start()
    assert done.check(10) == 42


def test_gather_all_raises_what_a_task_raised_after_all_ended() -> None:
    ended: list[int] = []

    async def one(n: int) -> int:
        await asyncio.sleep(0.01 * n)
        ended.append(n)
        if n == 1:
            raise AssertionError("index 3 twice")
        return n

    with pytest.raises(AssertionError, match="index 3 twice"):
        asyncio.run(gather_all(*(one(n) for n in range(4))))
    assert sorted(ended) == [0, 1, 2, 3]  # none was cancelled
    assert asyncio.run(gather_all(*(one(n) for n in (0, 2)))) == [0, 2]

    async def two_fail() -> list[object]:
        return await gather_all(one(1), one(1))

    with pytest.raises(BaseExceptionGroup) as group:
        asyncio.run(two_fail())
    assert len(group.value.exceptions) == 2


# -- ports: picked free, taken by another process before the server binds ------------------------


class _Stranger(BaseHTTPRequestHandler):
    """Another process's server on the port: answers 200 to anything."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _stranger_on(port: int) -> Iterator[None]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _Stranger)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.network_local
def test_a_registry_whose_port_was_taken_starts_on_another(tmp_path: Path) -> None:
    server = RegistryProcess(tmp_path / "data")
    taken = server.port
    with _stranger_on(taken):
        server.start()
        try:
            assert server.port != taken
            assert server.url == f"http://127.0.0.1:{server.port}"
            # this instance answers there, not the stranger (which has no log key)
            key = httpx.get(server.url + "/protocol/merkle/public-key", timeout=10)
            assert key.status_code == 200
            assert "public_key_base64" in key.json()
        finally:
            server.stop()


@pytest.mark.network_local
def test_a_witness_whose_port_was_taken_starts_on_another(tmp_path: Path) -> None:
    tree = Tree(3)
    key = write_key(tmp_path / "w.key", derive_test_key("suite rules: witness"))
    witness = WitnessProcess(key, tmp_path / "state", [tree.vkey])
    taken = witness.port
    with _stranger_on(taken):
        witness.start()
        try:
            assert witness.port != taken
            answer = httpx.post(witness.url + "/add-checkpoint", content=tree.body(0, 3))
            assert answer.status_code == 200, answer.text  # a cosignature: the witness itself
        finally:
            witness.stop()


def test_a_refused_port_refuses_and_cannot_be_taken_meanwhile() -> None:
    with refused_port() as port:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        with socket.socket() as other, pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))
    # a port merely found free is free to take before the test connects (the old way)
    picked = free_port()
    with socket.socket() as other:
        other.bind(("127.0.0.1", picked))
        other.listen()
        socket.create_connection(("127.0.0.1", picked), timeout=5).close()
