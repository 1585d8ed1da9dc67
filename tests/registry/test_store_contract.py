"""One contract for both stores (issue 27, items 4 and 5; docs/adr/0017-one-store-contract.md).

Every test runs on the embedded SQLite file and on a real PostgreSQL database (tests/pg.py) and
asserts the same answer on both: what one store keeps the other keeps, what one refuses the other
refuses at the door with the same code; a fact and its index row commit together; start-up never
dies on stored data, and what it cannot index or read is listed (``RegistryTables.degraded``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest
from affidavit.attest.stores.store import Store
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings
from affidavit.verify.json.canonical import jcs

from tests.registry.conftest import Clock, SpecClient, make_key, registry_key
from tests.registry.helpers import contract, fact, fact_hash

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

CONTRACTS = "/protocol/adapter-contracts"
# 2,048 characters, 6,136 bytes that do not compress: past PostgreSQL's btree row limit (2,704)
LONG_CJK = "urn:" + "".join(chr(0x4E00 + i * 7919 % 20000) for i in range(2044))


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    """This module runs on both stores."""
    return settings_on_each_store


def _put(client: SpecClient, token: str, document: dict[str, Any]) -> Any:
    return client.request("PUT", "/v1/facts", json_body=document, key=token)


def _query(client: SpecClient, token: str, **params: str) -> Any:
    return client.get("/v1/facts", params=params, key=token)


@pytest.mark.parametrize(
    "entity",
    ["urn:nul:\x00inside", LONG_CJK, "urn:" + "a" * 2044],
    ids=["nul", "long-cjk", "long-ascii"],
)
def test_an_accepted_entity_is_kept_and_found_on_both_stores(
    client: SpecClient, keys: dict[str, str], entity: str
) -> None:
    document = fact(entity)
    put = _put(client, keys["all"], document)
    assert put.status_code == 201, put.text
    assert put.json() == {"added": [fact_hash(document)], "existing": []}
    got = client.get(f"/v1/facts/{fact_hash(document)}", key=keys["all"])
    assert got.status_code == 200
    assert got.json()["fact"]["entity"] == entity
    found = _query(client, keys["all"], entity=entity, relation="memory:role")
    assert found.status_code == 200, found.text
    assert [item["id"] for item in found.json()["facts"]] == [fact_hash(document)]
    assert _query(client, keys["all"], entity=entity).json()["count"] == 1


def test_a_long_relation_is_kept_and_found(client: SpecClient, keys: dict[str, str]) -> None:
    document = fact("urn:long:relation")
    document["relation"] = "memory:" + "r" * 2041  # 2,048 characters, the limit
    assert _put(client, keys["all"], document).status_code == 201
    found = _query(client, keys["all"], relation=document["relation"])
    assert [item["id"] for item in found.json()["facts"]] == [fact_hash(document)]


@pytest.mark.parametrize("name", ["entity", "relation", "scope", "min_confidence"])
def test_a_query_parameter_with_nul_is_answered_alike(
    client: SpecClient, keys: dict[str, str], name: str
) -> None:
    assert _put(client, keys["all"], fact("urn:plain:a")).status_code == 201
    response = _query(client, keys["all"], **{name: "urn:a\x00"})
    if name == "min_confidence":
        assert response.status_code == 400
        assert response.json()["code"] == "http.bad_parameter"
    else:
        assert response.status_code == 200, response.text
        assert response.json() == {"facts": [], "count": 0}


def test_a_fact_path_with_nul_is_not_found(client: SpecClient, keys: dict[str, str]) -> None:
    for path in ("/v1/facts/%00", "/v1/facts/%00/provenance"):
        response = client.get(path, key=keys["all"])
        assert response.status_code == 404, path
        assert response.json()["code"] == "fact_not_found"


@pytest.mark.parametrize(
    ("adapter_id", "version"),
    [("acme.x\x00y", "1.0.0"), ("acme.eval_suite.v0", "1.0.\x00"), ("acme." + "a" * 3000, "1.0.0")],
    ids=["nul-id", "nul-version", "long-id"],
)
def test_a_lifecycle_patch_of_an_impossible_contract_is_not_found(
    client: SpecClient, keys: dict[str, str], adapter_id: str, version: str
) -> None:
    path = f"{CONTRACTS}/{quote(adapter_id, safe='')}/{quote(version, safe='')}"
    response = client.request(
        "PATCH", path, json_body={"status": "deprecated"}, key=keys["publish"]
    )
    assert response.status_code == 404, response.text
    assert response.json()["code"] == "registry.contract_not_found"


@pytest.mark.parametrize(
    ("field", "value", "issue"),
    [
        ("adapter_id", "acme." + "a" * 3000, "contract.bad_adapter_id"),
        ("adapter_id", "acme." + "a" * 249, "contract.bad_adapter_id"),  # 254 characters
        ("adapter_version", "1.0." + "1" * 3000, "contract.bad_semver"),
        ("adapter_version", "1.0." + "1" * 61, "contract.bad_semver"),  # 65 characters
    ],
    ids=["id-3005", "id-254", "version-3004", "version-65"],
)
def test_an_unbounded_contract_id_is_refused_on_both_stores(
    client: SpecClient, keys: dict[str, str], field: str, value: str, issue: str
) -> None:
    arguments = {"adapter_id": value} if field == "adapter_id" else {"version": value}
    # raw: the request is outside the OpenAPI document on purpose
    body = json.dumps(contract(**arguments)).encode()
    response = client.request("POST", CONTRACTS, raw=body, key=keys["publish"])
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "registry.contract_rejected"
    assert [e["code"] for e in body["details"]["errors"]] == [issue]


def test_the_longest_contract_ids_are_kept_on_both_stores(
    client: SpecClient, keys: dict[str, str]
) -> None:
    adapter_id = "acme." + "a" * 248  # 253 characters: the longest DNS name
    version = "1.0." + "1" * 60  # 64 characters
    published = client.request(
        "POST", CONTRACTS, json_body=contract(adapter_id, version), key=keys["publish"]
    )
    assert published.status_code == 201, published.text
    assert client.get(f"{CONTRACTS}/{adapter_id}/{version}").status_code == 200
    patched = client.request(
        "PATCH",
        f"{CONTRACTS}/{adapter_id}/{version}",
        json_body={"status": "deprecated"},
        key=keys["publish"],
    )
    assert patched.status_code == 200, patched.text


# -- writes are whole -------------------------------------------------------------------------


def _refuse_index_rows(settings: Settings) -> None:
    """A trigger that makes every insert into the fact index fail (a real database fault)."""
    store = Store.at(settings.database)
    try:
        with store.write() as db:
            if settings.uses_postgres:
                db.execute(
                    "CREATE FUNCTION refuse_index() RETURNS trigger LANGUAGE plpgsql AS "
                    "$$ BEGIN RAISE EXCEPTION 'index refused'; END $$"
                )
                db.execute(
                    "CREATE TRIGGER refuse_index BEFORE INSERT ON registry_fact_index "
                    "FOR EACH ROW EXECUTE FUNCTION refuse_index()"
                )
            else:
                db.execute(
                    "CREATE TRIGGER refuse_index BEFORE INSERT ON registry_fact_index "
                    "BEGIN SELECT RAISE(ABORT, 'index refused'); END"
                )
    finally:
        store.close()


def test_a_fact_is_stored_only_with_its_index_row(
    client: SpecClient, keys: dict[str, str], settings: Settings
) -> None:
    _refuse_index_rows(settings)
    document = fact("urn:whole:write")
    refused = _put(client, keys["all"], document)
    assert refused.status_code >= 500
    got = client.get(f"/v1/facts/{fact_hash(document)}", key=keys["all"])
    assert got.status_code == 404, "the fact was stored without its index row"


# -- start-up never dies on stored data -------------------------------------------------------


def _execute(settings: Settings, sql: str, *params: Any) -> None:
    store = Store.at(settings.database)
    try:
        with store.write() as db:
            db.execute(sql, params)
    finally:
        store.close()


@pytest.fixture
def started(settings: Settings, clock: Clock) -> None:
    """The database made by one start, then closed (the test edits it and starts again)."""
    app = create_app(settings, clock=clock, signing_key=registry_key())
    with TestClient(app):
        pass


@contextmanager
def _start(settings: Settings) -> Iterator[tuple[TestClient, Any]]:
    app = create_app(settings, clock=Clock(), signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield raw, app.state.registry


def test_start_up_indexes_a_fact_stored_without_its_index_row(
    started: None, settings: Settings
) -> None:
    # What a PostgreSQL registry was left with by an unindexable entity: the fact, no index row.
    document = fact("urn:nul:\x00" + LONG_CJK[4:2000], scope="public")
    _execute(
        settings,
        "INSERT INTO facts (hash, scope, body) VALUES ($1, $2, $3)",
        bytes.fromhex(fact_hash(document)),
        "public",
        jcs(document),
    )
    with _start(settings) as (raw, state):
        assert state.tables.degraded == ()
        found = raw.get("/v1/facts", params={"entity": document["entity"]})
        assert [item["id"] for item in found.json()["facts"]] == [fact_hash(document)]


def test_start_up_lists_a_record_it_cannot_read_and_serves_the_rest(
    started: None, settings: Settings
) -> None:
    good = fact("urn:good:a", scope="public")
    token = make_key(settings, "facts:write", "facts:read:*")
    bad_key = "ab" * 32
    _execute(
        settings,
        "INSERT INTO facts (hash, scope, body) VALUES ($1, $2, $3)",
        bytes.fromhex(bad_key),
        "public",
        b"not a fact",
    )
    with _start(settings) as (raw, state):
        assert [(r.kind, r.id, r.code) for r in state.tables.degraded] == [
            ("fact", bad_key, "lineage.fact_malformed")
        ]
        put = raw.put(
            "/v1/facts",
            content=json.dumps(good).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        assert put.status_code == 201, put.text
        found = raw.get("/v1/facts", params={"entity": "urn:good:a"})
        assert found.json()["count"] == 1
        # Health says so, with the record's id; the instance still takes traffic (200).
        for view in ("/v1/health", "/v1/health/ready"):
            health = raw.get(view)
            assert health.status_code == 200
            assert health.json()["status"] == "degraded"
            assert health.json()["records"] == [
                {"kind": "fact", "id": bad_key, "code": "lineage.fact_malformed"}
            ]
    # Reported again at the next start, never fatal.
    with _start(settings) as (_raw, state):
        assert [r.id for r in state.tables.degraded] == [bad_key]


def test_start_up_rekeys_a_version_2_fact_index(started: None, settings: Settings) -> None:
    # A fact index written before version 3 holds the entity and relation as text; the first
    # start of this version converts it in place, keeping each row's order (seq).
    token = make_key(settings, "facts:write", "facts:read:*")
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    first, second = fact("urn:legacy:b"), fact("urn:legacy:a")
    with _start(settings) as (raw, _state):
        for document in (first, second):
            put = raw.put("/v1/facts", content=json.dumps(document).encode(), headers=auth)
            assert put.status_code == 201
    for document in (first, second):
        _execute(
            settings,
            "UPDATE registry_fact_index SET entity = $1, relation = $2 WHERE hash = $3",
            document["entity"],
            document["relation"],
            fact_hash(document),
        )
    _execute(settings, "DELETE FROM registry_meta WHERE key = 'fact_index_keys'")
    _execute(settings, "UPDATE schema_versions SET version = 2 WHERE component = 'registry'")
    with _start(settings) as (raw, state):
        assert state.tables.degraded == ()
        found = raw.get("/v1/facts", params={"relation": "memory:role"}, headers=auth)
        assert [item["id"] for item in found.json()["facts"]] == [
            fact_hash(first),
            fact_hash(second),
        ]
        one = raw.get("/v1/facts", params={"entity": "urn:legacy:a"}, headers=auth)
        assert [item["id"] for item in one.json()["facts"]] == [fact_hash(second)]
