"""Two registry processes on one PostgreSQL database and one key folder (docs/adr/0013): one
consistent log, identical answers, no lost write when one is killed, one winner of a cycle race.

Real processes on 127.0.0.1 and a real throwaway PostgreSQL cluster (tests/pg.py); bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import RegistryProcess, api_key
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.test_load import Record, _check_heads, _check_readable, _worker
from tests.workers import gather_all

pytestmark = pytest.mark.network_local

SECONDS = min(float(os.environ.get("AFFIDAVIT_LOAD_SECONDS", "5")), 10.0)


@pytest.fixture
def pair(tmp_path: Path, pg_url: str) -> Iterator[tuple[RegistryProcess, RegistryProcess]]:
    """Instances A and B: one data folder (so one key folder), one PostgreSQL database, and one
    public URL (the load balancer's), as an operator runs them."""
    data = tmp_path / "data"
    data.mkdir()
    env = {
        "AFFIDAVIT_DATABASE_URL": pg_url,
        "AFFIDAVIT_PUBLIC_URL": "https://registry.example",
        "AFFIDAVIT_READ_THREADS": "2",
    }
    first, second = RegistryProcess(data, env), RegistryProcess(data, env)
    first.start()  # the first start makes the key; the second finds it
    token = api_key(data, "publish", "facts:write", "facts:read:*", database_url=pg_url)
    try:
        second.start()
        first.token = second.token = token
        yield first, second
    finally:
        second.stop()
        first.stop()


def _publish(server: RegistryProcess, adapter_id: str, version: str = "1.0.0") -> httpx.Response:
    return httpx.post(
        server.url + "/protocol/adapter-contracts",
        json=contract(adapter_id, version),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=30,
    )


def test_both_instances_serve_one_catalog_and_one_log(
    pair: tuple[RegistryProcess, RegistryProcess],
) -> None:
    a, b = pair
    assert _publish(a, "acme.shared.v0").status_code == 201
    path = "/protocol/adapter-contracts/acme.shared.v0/1.0.0"
    assert httpx.get(b.url + path).content == httpx.get(a.url + path).content
    for route in ("/protocol/adapter-contracts", "/specs/adapter-contracts.manifest.json"):
        seen_a, seen_b = httpx.get(a.url + route), httpx.get(b.url + route)
        assert (seen_a.status_code, seen_b.status_code) == (200, 200)
        assert seen_a.content == seen_b.content, route
    # The same contract sent to both at once: one creates it, the other finds it (never a 500).
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda s: _publish(s, "acme.raced.v0"), (a, b)))
    assert sorted(r.status_code for r in answers) == [200, 201]
    assert answers[0].json()["entry"] == answers[1].json()["entry"]

    # Concurrent publishes on both: the log stays gap-free and every instance serves one head.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: _publish((a, b)[i % 2], f"acme.burst_{i}.v0"), range(24)))
    assert all(r.status_code == 201 for r in results)
    leaves = sorted(r.json()["leaf_index"] for r in results)
    assert len(set(leaves)) == 24
    heads = [httpx.get(s.url + "/protocol/merkle/latest").content for s in (a, b)]
    assert heads[0] == heads[1]
    notes = [httpx.get(s.url + "/tlog/checkpoint").content for s in (a, b)]
    assert notes[0] == notes[1]  # byte-identical checkpoint for the size
    size = httpx.get(a.url + "/protocol/merkle/latest").json()["tree_size"]
    entries = httpx.get(b.url + "/protocol/merkle/entries", params={"start": 0, "end": size})
    assert [e["leaf_index"] for e in entries.json()["entries"]] == list(range(size))


def test_two_instances_racing_to_close_a_cycle(
    pair: tuple[RegistryProcess, RegistryProcess],
) -> None:
    # FactHash does not cover derived_from, so two facts can name each other: storing both
    # would close a cycle. Sent at once to different instances, exactly one is stored.
    a, b = pair
    left, right = fact("urn:cycle:left"), fact("urn:cycle:right")
    left["derived_from"] = [fact_hash(right)]
    right["derived_from"] = [fact_hash(left)]
    auth = {"Authorization": f"Bearer {a.token}"}

    def put(job: tuple[RegistryProcess, dict[str, object]]) -> httpx.Response:
        server, body = job
        return httpx.put(server.url + "/v1/facts", json=body, headers=auth, timeout=30)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(put, [(a, left), (b, right)]))
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201, 400], [r.text for r in answers]
    refused = next(r for r in answers if r.status_code == 400)
    assert refused.json()["code"] == "provenance_cycle_detected"


def test_load_on_both_and_sigkill_one_mid_burst(
    pair: tuple[RegistryProcess, RegistryProcess],
) -> None:
    a, b = pair
    record = Record()

    async def burst_then_kill() -> None:
        stop = time.monotonic() + SECONDS + 30
        tasks = [
            asyncio.create_task(_worker((a, b)[n % 2].port, n, stop, record, a.token))
            for n in range(16)
        ]
        deadline = time.monotonic() + 30
        while (len(record.contracts) < 10 or len(record.facts) < 10) and (
            time.monotonic() < deadline
        ):
            await asyncio.sleep(0.01)
        a.kill()  # SIGKILL instance A mid-flight; B keeps serving
        await asyncio.sleep(min(SECONDS, 3.0))
        record.done = True
        await gather_all(*tasks)  # a worker's failure fails the test

    asyncio.run(asyncio.wait_for(burst_then_kill(), 90))
    assert record.contracts
    assert record.facts
    # Requests to A after the kill fail in transport; B never answers 5xx.
    assert not [e for e in record.server_errors if "->" in e], record.server_errors[:5]
    assert httpx.get(b.url + "/v1/health").status_code == 200
    _check_readable(b.url, a.token, record)  # every acknowledged write, from either instance
    _check_heads(b.url, record.heads)  # the next head extends every head handed out
    a.process = None


def test_load_spread_over_both_instances(pair: tuple[RegistryProcess, RegistryProcess]) -> None:
    a, b = pair
    record = Record()

    async def load() -> None:
        stop = time.monotonic() + SECONDS
        await asyncio.gather(
            *(_worker((a, b)[n % 2].port, n, stop, record, a.token) for n in range(32))
        )

    asyncio.run(asyncio.wait_for(load(), SECONDS + 60))
    assert not record.server_errors, record.server_errors[:5]
    assert record.contracts
    assert record.facts
    for server in (a, b):
        _check_readable(server.url, a.token, record)
        _check_heads(server.url, record.heads)
    latest = [httpx.get(s.url + "/protocol/merkle/latest").content for s in (a, b)]
    assert latest[0] == latest[1]
