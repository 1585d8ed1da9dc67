"""Database faults under real registry processes on a real PostgreSQL cluster (issue 27, items
1, 2, 3 and 8): the server restarted (fast and immediate), the registry's backends terminated,
the server stopped for 5 s, and an instance SIGSTOPped while it holds the writer lock.

For each: the registry recovers within a few seconds without being restarted, health says
``degraded`` (503) while the store is unusable and ``ok`` after, error bodies name no host, port,
user, database or path, and every write acknowledged before, during or after the fault is still
served. Recovery times are printed (run with ``-s``) and bounded by the asserts.

The module has its own cluster (the faults stop it); every loop and request is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.stores.postgres import WRITER_LEASE_S

from tests.conftest import postgres_bindir
from tests.pg import LockWatch, PgCluster, database_name
from tests.processes import RegistryProcess, serving, stop_inside, until
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.test_load import Record, _check_heads, _check_readable, _worker
from tests.workers import Worker

pytestmark = pytest.mark.network_local

RECOVERY_BOUND_S = 5.0  # from the moment the database accepts connections again
DOWN_S = 5.0  # "PostgreSQL unreachable for 5 s"
LOAD_CLIENTS = 4


@pytest.fixture(scope="module")
def cluster() -> Iterator[PgCluster]:
    """This module's own cluster: its tests stop and restart it."""
    own = PgCluster(postgres_bindir())
    try:
        yield own.start()
    finally:
        own.stop()


@pytest.fixture
def database(cluster: PgCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    name = cluster.new_database_name(request.node.name)
    url = cluster.create_database(name)
    yield url
    if not cluster.running:
        cluster.start()
    cluster.drop_database(name)


def _serving(
    tmp_path: Path, url: str, count: int
) -> contextlib.AbstractContextManager[list[RegistryProcess]]:
    scopes = ("publish", "facts:write", "facts:read:*")
    env = {"AFFIDAVIT_READ_THREADS": "2"}
    return serving(tmp_path, *scopes, count=count, database_url=url, env=env)


class Background:
    """A light mixed load (tests/registry/test_load.py's workers) on one instance, in a thread,
    until :meth:`stop`; what it saw acknowledged is in ``record``."""

    def __init__(self, server: RegistryProcess, record: Record) -> None:
        self.server, self.record = server, record
        self.thread = Worker(self._run)  # its failure reaches the test: stop()

    def _run(self) -> None:
        stop = time.monotonic() + 120
        port, token = self.server.port, self.server.token

        async def workers() -> None:
            await asyncio.gather(
                *(_worker(port, 1000 + n, stop, self.record, token) for n in range(LOAD_CLIENTS))
            )

        asyncio.run(workers())

    def start(self) -> Background:
        self.thread.start()
        until(lambda: len(self.record.contracts) >= 2 and len(self.record.facts) >= 2, 30)
        return self

    def stop(self) -> None:
        self.record.done = True
        self.thread.check(60)


def _auth(server: RegistryProcess) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


_serial = iter(range(1_000_000))


def _publish(server: RegistryProcess, record: Record, timeout: float = 10) -> httpx.Response:
    ident = (f"acme.fault_{next(_serial)}.v0", "1.0.0")
    answer = httpx.post(
        server.url + "/protocol/adapter-contracts",
        json=contract(*ident),
        headers=_auth(server),
        timeout=timeout,
    )
    if answer.status_code in (200, 201):
        record.contracts.add(ident)
    return answer


def _usable(server: RegistryProcess, record: Record) -> bool:
    """A write, an authenticated read, the latest head and health all answer."""
    try:
        if _publish(server, record).status_code != 201:
            return False
        body = fact(f"urn:fault:{next(_serial)}")
        put = httpx.put(server.url + "/v1/facts", json=body, headers=_auth(server), timeout=10)
        if put.status_code != 201:
            return False
        record.facts.add(fact_hash(body))
        listed = httpx.get(
            server.url + "/v1/facts", params={"entity": body["entity"]}, headers=_auth(server)
        )
        latest = httpx.get(server.url + "/protocol/merkle/latest")
        health = httpx.get(server.url + "/v1/health")
    except httpx.HTTPError:
        return False
    if latest.status_code == 200:
        record.heads.append(latest.json())
    return (listed.status_code, latest.status_code, health.status_code) == (200, 200, 200) and (
        health.json()["status"] == "ok"
    )


def _assert_nothing_names_the_database(text: str, url: str, port: int) -> None:
    name = database_name(url)
    # the user is "postgres" ("postgresql" is the store's kind, which health names)
    for secret in ("127.0.0.1", str(port), "postgres@", "user", name, "registry.db", "://"):
        assert secret not in text, f"{secret!r} in {text!r}"


def _check_everything_acknowledged(server: RegistryProcess, record: Record) -> None:
    _check_readable(server.url, server.token, record)
    _check_heads(server.url, record.heads)


def _report(fault: str, down: float, recovery: float) -> None:
    print(
        f"\n{fault}: database unavailable {down:.2f} s; registry recovered {recovery:.2f} s after"
    )


@pytest.mark.parametrize("fault", ["restart-fast", "restart-immediate", "terminate-backends"])
def test_the_registry_recovers_without_a_restart(
    fault: str, cluster: PgCluster, database: str, tmp_path: Path
) -> None:
    with _serving(tmp_path, database, 1) as (server,):
        record = Record()
        load = Background(server, record).start()
        try:
            started = time.monotonic()
            if fault == "terminate-backends":
                cluster.terminate_backends(database)
            else:
                cluster.restart(fault.removeprefix("restart-"))
            back = time.monotonic()
            recovery = until(lambda: _usable(server, record), RECOVERY_BOUND_S, step=0.1)
            _report(fault, back - started, recovery)
            time.sleep(0.3)  # and the load runs on
        finally:
            load.stop()
        assert _usable(server, record)
        _check_everything_acknowledged(server, record)


def test_the_server_stopped_for_five_seconds(
    cluster: PgCluster, database: str, tmp_path: Path
) -> None:
    with _serving(tmp_path, database, 1) as (server,):
        record = Record()
        load = Background(server, record).start()
        try:
            started = time.monotonic()
            cluster.stop_server()  # the server down, the folder kept
            # Health turns degraded (503) within its deadline; liveness does not touch the store.
            until(lambda: httpx.get(server.url + "/v1/health").status_code == 503, 3)
            health = httpx.get(server.url + "/v1/health")
            assert health.json()["status"] == "degraded"
            assert health.json()["code"] == "store.unreadable"
            _assert_nothing_names_the_database(health.text, database, cluster.port)
            assert httpx.get(server.url + "/v1/health/ready").status_code == 503
            assert httpx.get(server.url + "/v1/health/live").status_code == 200
            refused = _publish(server, record)
            assert refused.status_code == 503
            assert refused.json()["code"] == "store.unreadable"
            assert int(refused.headers["retry-after"]) >= 1
            _assert_nothing_names_the_database(refused.text, database, cluster.port)
            time.sleep(max(0.0, DOWN_S - (time.monotonic() - started)))
            cluster.start()
            back = time.monotonic()
            recovery = until(lambda: _usable(server, record), RECOVERY_BOUND_S, step=0.1)
            _report("stopped 5 s", back - started, recovery)
            assert httpx.get(server.url + "/v1/health/ready").status_code == 200
        finally:
            load.stop()
        _check_everything_acknowledged(server, record)


def _pause_holding_the_lock(server: RegistryProcess, watch: LockWatch) -> list[tuple[str, str]]:
    """SIGSTOP ``server`` at a moment it holds the writer lock (it is the only one writing);
    the (state, query) of its session holding it."""
    assert server.process is not None
    pid = server.process.pid
    stop_inside(pid, lambda: bool(watch.holders(pid)))
    return watch.holders(pid)


def test_a_paused_instance_holding_the_writer_lock(
    cluster: PgCluster, database: str, tmp_path: Path
) -> None:
    with _serving(tmp_path, database, 2) as (a, b):
        record = Record()
        load = Background(a, record).start()
        assert a.process is not None
        try:
            with contextlib.closing(LockWatch(cluster, database)) as watch:
                holders = _pause_holding_the_lock(a, watch)
            paused = time.monotonic()
            try:
                # B's write waits for the paused holder's lease at most, then goes through
                answer = _publish(b, record, timeout=WRITER_LEASE_S + 10)
                waited = time.monotonic() - paused
                assert answer.status_code == 201, (answer.text, holders)
                assert waited <= WRITER_LEASE_S + 2, waited
                # and B is whole: writes, API-key lookups, the latest head, health
                b_ok = until(lambda: _usable(b, record), 2)
                quick = time.monotonic()
                assert _publish(b, record).status_code == 201
                assert time.monotonic() - quick < 2  # no stall left while A stays paused
            finally:
                a.process.send_signal(signal.SIGCONT)
            resumed = time.monotonic()
            recovery = until(lambda: _usable(a, record), RECOVERY_BOUND_S, step=0.1)
            print(
                f"\nSIGSTOP holder: B's write waited {waited:.2f} s (lease {WRITER_LEASE_S:g} s),"
                f" B whole {b_ok:.2f} s later; A recovered {recovery:.2f} s after SIGCONT"
                f" ({resumed - paused:.1f} s paused)"
            )
        finally:
            load.stop()
        for server in (a, b):
            _check_everything_acknowledged(server, record)
