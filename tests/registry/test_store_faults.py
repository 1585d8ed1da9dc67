"""Store faults as clients see them, in-process on a real PostgreSQL database (issue 27, items
2, 3 and 8): 503 with a stable code and ``Retry-After``, a body that names no host, port, user,
database or path, health ``degraded``, readiness 503, liveness 200; a lock wait past the lock
timeout is ``store.busy`` and leaves the instance whole. Checked against the OpenAPI document.

The process-level faults (restarts, a stopped server, a paused instance) are in
tests/registry/test_pg_faults.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from affidavit.attest.stores.postgres import LOCK_TIMEOUT_S
from affidavit.attest.stores.store import Store
from affidavit.registry.settings import Settings
from affidavit.registry.state import FRESH_S

from tests.pg import PgCluster
from tests.registry.conftest import SpecClient
from tests.registry.helpers import contract

CONTRACTS = "/protocol/adapter-contracts"


@pytest.fixture
def settings(tmp_path: Path, pg_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        contracts_dir=tmp_path / "contracts",
        port=8080,
        database_url=pg_url,
    )


def _names_nothing(text: str, settings: Settings, cluster: PgCluster) -> None:
    name = settings.database_url.rsplit("/", 1)[1]
    # the user is "postgres" ("postgresql" is the store's kind, which health names)
    secrets = ("127.0.0.1", str(cluster.port), "postgres@", "user", name, "registry.db", "://")
    for secret in (*secrets, str(settings.data_dir)):
        assert secret not in text, f"{secret!r} in {text!r}"


def test_a_lost_database_is_503_naming_nothing(
    client: SpecClient, keys: dict[str, str], settings: Settings, pg_cluster: PgCluster
) -> None:
    assert client.get("/v1/health").json()["status"] == "ok"
    # Gone for good: every connection ended, and none can be made again.
    pg_cluster.drop_database(settings.database_url.rsplit("/", 1)[1])
    for attempt in range(2):  # the first finds the connection lost, the next cannot make one
        refused = client.request("POST", CONTRACTS, json_body=contract(), key=keys["publish"])
        assert (refused.status_code, refused.json()["code"]) == (503, "store.unreadable"), attempt
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["details"] == {}
        _names_nothing(refused.text, settings, pg_cluster)
    time.sleep(FRESH_S)  # health reuses an answer this long
    for path in ("/v1/health", "/v1/health/ready"):
        health = client.get(path)
        assert health.status_code == 503
        assert (health.json()["status"], health.json()["code"]) == ("degraded", "store.unreadable")
        assert health.headers["retry-after"] == "1"
        _names_nothing(health.text, settings, pg_cluster)
    assert client.get("/v1/health/live").status_code == 200
    read = client.get("/protocol/merkle/latest")
    assert (read.status_code, read.json()["code"]) == (503, "store.unreadable")
    _names_nothing(read.text, settings, pg_cluster)


def test_a_lock_timeout_is_store_busy_and_leaves_the_instance_whole(
    client: SpecClient, keys: dict[str, str], settings: Settings
) -> None:
    holder = Store.connect(settings.database_url)
    holding = threading.Event()

    def hold() -> None:
        with holder.write() as db:  # busy (not silent: the lease does not end it)
            holding.set()
            db.execute("SELECT pg_sleep($1)", (LOCK_TIMEOUT_S + 1.5,))

    thread = threading.Thread(target=hold, daemon=True)
    try:
        thread.start()
        assert holding.wait(10)
        started = time.monotonic()
        busy = client.request("POST", CONTRACTS, json_body=contract(), key=keys["publish"])
        waited = time.monotonic() - started
        assert (busy.status_code, busy.json()["code"]) == (503, "store.busy"), busy.text
        assert busy.headers["retry-after"] == "1"
        assert LOCK_TIMEOUT_S - 0.5 <= waited <= LOCK_TIMEOUT_S + 2
        thread.join(10)
        assert not thread.is_alive()
    finally:
        holder.close()
    # Whole again at once: a write, an authenticated read, the latest head, health.
    created = client.request("POST", CONTRACTS, json_body=contract(), key=keys["publish"])
    assert created.status_code == 201
    listed = client.get("/v1/facts", params={"entity": "urn:x"}, key=keys["all"])
    assert listed.status_code == 200
    assert client.get("/protocol/merkle/latest").status_code == 200
    assert client.get("/v1/health").json()["status"] == "ok"
