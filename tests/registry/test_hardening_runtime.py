"""A running registry under damage and contention (docs/adr/0005) and publisher ownership
(docs/adr/0006): a damaged tree stops signing (health 503, writes 503 ``log.unhealthy``), a
damaged page is 503 ``store.corrupt`` (never 500), long reads never stall the writer, and a
publish key writes only its own namespaces."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from affidavit.registry.settings import Settings
from affidavit.verify.scitt.cbor import decode
from click.testing import CliRunner

from tests.registry.conftest import SpecClient, make_key
from tests.registry.helpers import contract

CONTRACTS = "/protocol/adapter-contracts"


def _publish(client: SpecClient, key: str, declaration: dict[str, Any]) -> Any:
    return client.request("POST", CONTRACTS, json_body=declaration, key=key)


def _code(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


# -- ownership (docs/adr/0006) -------------------------------------------------------------------


def test_publish_key_writes_only_its_namespaces(
    client: SpecClient, settings: Settings, keys: dict[str, str]
) -> None:
    """Reproduction: any publish key could PATCH or revoke any publisher's contract."""
    acme = keys["publish"]  # bound to acme and affidavit.examples (conftest)
    other = make_key(settings.data_dir, "publish", publishers=("other",))
    assert _publish(client, acme, contract("acme.owned.v0")).status_code == 201
    path = f"{CONTRACTS}/acme.owned.v0/0.1.0"
    revoke = client.request("PATCH", path, json_body={"status": "revoked"}, key=other)
    assert _code(revoke) == (403, "auth.publisher_forbidden")
    assert _code(_publish(client, other, contract("acme.stolen.v0"))) == (
        403,
        "auth.publisher_forbidden",
    )
    assert _code(_publish(client, other, contract("otherx.tool.v0"))) == (
        403,
        "auth.publisher_forbidden",
    )  # whole segments: "other" does not cover "otherx"
    assert _publish(client, other, contract("other.tool.v0")).status_code == 201
    assert client.get(path).json()["entry"]["status"] == "active"
    own = client.request("PATCH", path, json_body={"status": "deprecated"}, key=acme)
    assert own.status_code == 200


def test_reserved_channels_need_an_admin_key(
    client: SpecClient, settings: Settings, keys: dict[str, str]
) -> None:
    """Reproduction: anyone could publish under distribution_channel aigentsy.builtin."""
    acme = keys["publish"]
    for channel in ("aigentsy.builtin", "aigentsy.examples", "developer.local"):
        declaration = contract("acme.channel.v0", distribution_channel=channel)
        assert _code(_publish(client, acme, declaration)) == (403, "registry.channel_reserved")
    assert _publish(client, acme, contract("acme.channel.v0")).status_code == 201
    patch = client.request(
        "PATCH",
        f"{CONTRACTS}/acme.channel.v0/0.1.0",
        json_body={"distribution_channel": "aigentsy.builtin"},
        key=acme,
    )
    assert _code(patch) == (403, "registry.channel_reserved")
    admin = make_key(settings.data_dir, "admin")
    declaration = contract("vendor.builtin.v0", distribution_channel="aigentsy.builtin")
    published = _publish(client, admin, declaration)
    assert published.status_code == 201
    assert published.json()["entry"]["distribution_channel"] == "aigentsy.builtin"
    taken = client.request(  # a namespace owner cannot change the operator's contract
        "PATCH",
        f"{CONTRACTS}/vendor.builtin.v0/0.1.0",
        json_body={"status": "revoked"},
        key=make_key(settings.data_dir, "publish", publishers=("vendor",)),
    )
    assert _code(taken) == (403, "registry.channel_reserved")


def test_unbound_legacy_key_is_refused_until_bound(client: SpecClient, settings: Settings) -> None:
    legacy = make_key(settings.data_dir, "publish", publishers=())
    refused = _publish(client, legacy, contract("acme.legacy.v0"))
    assert _code(refused) == (403, "auth.key_unbound")
    assert "keys bind" in refused.json()["message"]
    from affidavit.cli.main import affidavit

    key_id = legacy.split("_")[1]
    bound = CliRunner().invoke(
        affidavit,
        [
            "registry",
            "keys",
            "bind",
            key_id,
            "--publisher",
            "acme",
            "--data-dir",
            str(settings.data_dir),
        ],
    )
    assert bound.exit_code == 0, bound.output
    assert _publish(client, legacy, contract("acme.legacy.v0")).status_code == 201


# -- integrity at run time (docs/adr/0005) -------------------------------------------------------


def _flip(db: Path, level: int, index: int) -> None:
    with sqlite3.connect(db) as conn:
        (value,) = conn.execute(
            "SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index)
        ).fetchone()
        conn.execute(
            "UPDATE log_nodes SET hash = ? WHERE level = ? AND idx = ?",
            (bytes([value[0] ^ 1]) + bytes(value[1:]), level, index),
        )


def test_damaged_node_at_run_time_stops_signing(
    client: SpecClient, settings: Settings, keys: dict[str, str]
) -> None:
    for i in range(3):
        assert _publish(client, keys["publish"], contract(f"acme.run_{i}.v0")).status_code == 201
    assert client.get("/v1/health").json()["status"] == "ok"
    _flip(settings.database_path, 1, 0)  # on the path of every root of size >= 2
    refused = _publish(client, keys["publish"], contract("acme.after.v0"))
    assert _code(refused) == (503, "log.unhealthy")
    health = client.get("/v1/health")
    assert health.status_code == 503
    assert (health.json()["status"], health.json()["code"]) == ("unhealthy", "log.unhealthy")
    assert _code(client.get("/protocol/merkle/checkpoint")) == (503, "log.unhealthy")
    with sqlite3.connect(settings.database_path) as conn:  # nothing was appended
        assert conn.execute("SELECT count(*) FROM log_entries").fetchone()[0] == 3


def test_damaged_page_is_503_not_500(client: SpecClient, settings: Settings) -> None:
    """Reproduction: random page damage answered 500 http.internal on some routes."""
    db = settings.database_path
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'log_nodes'"
        ).fetchone()
    with db.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xee" * 64)
    response = client.get("/protocol/merkle/leaf/0")  # a fresh reader connection reads the page
    assert _code(response) == (503, "store.corrupt")


def test_long_read_never_stalls_appends_or_latest(client: SpecClient, keys: dict[str, str]) -> None:
    """A read that holds a reader thread (like a huge provenance walk) runs while publishes and
    GET /latest complete: they do not wait for it (ordering, not timing)."""
    state = client.client.app.state.registry  # type: ignore[attr-defined]
    started, release = threading.Event(), threading.Event()
    done: list[int] = []

    def long_read(view: Any) -> int:
        started.set()
        assert release.wait(30), "the test never released the read"
        return int(view.log.size)

    reader = threading.Thread(target=lambda: done.append(state.read_sync(long_read)))
    reader.start()
    try:
        assert started.wait(10)
        for i in range(3):
            published = _publish(client, keys["publish"], contract(f"acme.busy_{i}.v0"))
            assert published.status_code == 201
        assert client.get("/protocol/merkle/latest").json()["tree_size"] == 3
        assert not done  # all of that finished while the long read was still running
        # other reads use the remaining reader threads
        assert client.get("/protocol/merkle/leaf/0").status_code == 200
    finally:
        release.set()
        reader.join(30)
    assert done == [3]  # the read saw a snapshot taken when it resumed (WAL)


def test_a_database_fault_on_a_scitt_route_is_503_problem_details(
    client: SpecClient, settings: Settings
) -> None:
    """Reproduction (issue 22): the SCRAPI routes answered a database fault with 500
    ``http.internal`` where every other route answers 503 with the store's code."""
    absent = client.get("/entries/" + "ab" * 32)  # the SCITT tables exist from here on
    assert absent.status_code == 404
    with sqlite3.connect(settings.database_path) as conn:  # another writer breaks the schema
        conn.execute("DROP TABLE scitt_entries")
        conn.execute("CREATE TABLE scitt_entries (unrelated INTEGER)")
    response = client.get("/entries/" + "ab" * 32)
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/concise-problem-details+cbor"
    problem = decode(response.content, what="problem")
    assert problem[-2].split(":", 1)[0] == "store.unreadable"
    assert str(settings.database_path) not in problem[-2]  # no path reaches the client
