"""``GET /v1/lookup/{hash}`` and the lookup index, on both stores (SQLite file, real PostgreSQL):
every entry about a hash with a proof to the checkpoint served with it, paging, bad input, index
rows that commit (or not) with their leaf, leaves written by another process, and ``registry
reindex`` rebuilding the same index from the log."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Store
from affidavit.registry.index import name_digest, subjects
from affidavit.registry.settings import Settings
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.merkle import leaf_hash, verify_inclusion
from affidavit.verify.json.canonical import jcs, sha256_hex

from tests.cli.test_output_schemas import cli
from tests.registry.conftest import SpecClient, make_key, registry_key
from tests.registry.helpers import contract, fact, fact_hash
from tests.schemas import assert_output_schema

CONTRACTS = "/protocol/adapter-contracts"
ORIGIN = "affidavit-registry"


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    """This module runs on both stores."""
    return settings_on_each_store


def _proven(client: SpecClient, digest: str, **params: Any) -> dict[str, Any]:
    """The lookup answer, every proof and leaf checked as a client must (registry/clients)."""
    answer: dict[str, Any] = client.get(f"/v1/lookup/{digest}", params=params).json()
    vkey = parse_verifier_key(verifier_key_string(ORIGIN, registry_key().public_key))
    checkpoint = verify_checkpoint(answer["checkpoint"], [vkey]).checkpoint
    for entry in answer["entries"]:
        proof = entry["inclusion_proof"]
        assert proof["tree_size"] == checkpoint.tree_size
        verify_inclusion(
            bytes.fromhex(entry["leaf_hash"]),
            entry["index"],
            proof["tree_size"],
            [bytes.fromhex(h) for h in proof["hashes"]],
            checkpoint.root_hash,
        )
        leaf = client.get(f"/protocol/merkle/leaf/{entry['index']}").json()
        data = base64.b64decode(leaf["leaf_data_b64"])
        assert leaf_hash(data).hex() == entry["leaf_hash"]
        filed = {(s.kind, s.field) for s in subjects(data) if s.digest == digest}
        assert filed == {(entry["kind"], field) for field in entry["matched"]}
    return answer


def test_a_published_contract_is_found_under_each_of_its_hashes(
    client: SpecClient, keys: dict[str, str]
) -> None:
    declaration = contract()
    published = client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"])
    entry = published.json()["entry"]
    leaf = client.get("/protocol/merkle/leaf/0").json()["leaf_hash"]
    for digest, field in [
        (declaration["contract_hash"], "contract_hash"),
        (entry["entry_hash"], "entry_hash"),
        (leaf, "leaf_hash"),
        (name_digest("acme.eval_suite.v0"), "adapter_id"),
        (name_digest("acme.eval_suite.v0@0.1.0"), "adapter_id@version"),
    ]:
        answer = _proven(client, digest)
        assert [(e["index"], e["kind"], e["matched"]) for e in answer["entries"]] == [
            (0, "contract", [field])
        ], field
        assert answer["next_cursor"] is None


def test_an_unknown_hash_is_200_with_no_entries_and_a_checkpoint(client: SpecClient) -> None:
    answer = _proven(client, "0" * 64)
    assert answer["entries"] == []
    assert answer["checkpoint"].startswith(ORIGIN + "\n0\n")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/lookup/" + "A" * 64,  # hashes are lowercase
        "/v1/lookup/" + "a" * 63,
        "/v1/lookup/" + "a" * 65,
        "/v1/lookup/" + "g" * 64,
        "/v1/lookup/deal-1",
        "/v1/lookup/" + "a" * 64 + "?limit=0",
        "/v1/lookup/" + "a" * 64 + "?limit=101",
        "/v1/lookup/" + "a" * 64 + "?cursor=-1",
        "/v1/lookup/" + "a" * 64 + "?cursor=x",
    ],
)
def test_a_malformed_hash_or_page_is_400(client: SpecClient, path: str) -> None:
    response = client.get(path)
    assert (response.status_code, response.json()["code"]) == (400, "http.bad_parameter")


def test_pages_follow_the_leaf_order_to_the_end(client: SpecClient, keys: dict[str, str]) -> None:
    for version in ("0.1.0", "0.2.0", "0.3.0"):
        client.request("POST", CONTRACTS, json_body=contract(version=version), key=keys["publish"])
    client.request(  # a lifecycle change is a fourth leaf about the same adapter
        "PATCH", f"{CONTRACTS}/acme.eval_suite.v0/0.1.0", json_body={"status": "deprecated"},
        key=keys["publish"],
    )  # fmt: skip
    digest = name_digest("acme.eval_suite.v0")
    first = _proven(client, digest, limit=3)
    assert [e["index"] for e in first["entries"]] == [0, 1, 2]
    assert first["next_cursor"] == 3
    second = _proven(client, digest, limit=3, cursor=first["next_cursor"])
    assert [e["index"] for e in second["entries"]] == [3]
    assert second["next_cursor"] is None
    assert [e["index"] for e in _proven(client, digest, cursor=2)["entries"]] == [2, 3]


def _rows(store: Any) -> list[tuple[Any, ...]]:
    with store.read() as db:
        rows = db.execute(
            "SELECT hash, leaf_index, field, kind FROM registry_lookup "
            "ORDER BY leaf_index, field, hash"
        ).fetchall()
    return [(bytes(r[0]), int(r[1]), str(r[2]), str(r[3])) for r in rows]


def test_index_rows_commit_with_their_leaf_or_not_at_all(client: SpecClient) -> None:
    state = client.client.app.state.registry
    digest = sha256_hex(b"rolled back")

    def integrate() -> None:  # the writer's step 1: integrate, then its after-integration hook
        state.log.integrate()
        state.writer.after_integration()

    def fail_after_integration() -> None:
        with state.tables.transaction():
            state.log.sequence([b"rolled back"])
            integrate()
            assert state.tables.lookup_size() == state.log.size  # filed in the same transaction
            raise RuntimeError("the transaction fails after the integration")

    with pytest.raises(RuntimeError):
        state.db.call(fail_after_integration)
    assert state.db.call(lambda: (state.log.size, state.tables.lookup_size())) == (0, 0)
    assert _proven(client, digest)["entries"] == []
    placed = client.request(
        "POST", "/v1/log/entries", raw=b"rolled back", key=make_key(state.settings, "log:write"),
        headers={"Content-Type": "application/octet-stream"}, params={"wait": "integrated"},
    )  # fmt: skip
    assert placed.status_code == 201
    assert state.db.call(state.tables.lookup_size) == 1
    found = _proven(client, digest)["entries"]
    assert [(e["index"], e["kind"], e["matched"]) for e in found] == [(0, "raw", ["data_sha256"])]


def test_a_leaf_another_process_appended_is_found(
    client: SpecClient, settings: Settings, keys: dict[str, str]
) -> None:
    client.request("POST", CONTRACTS, json_body=contract(), key=keys["publish"])
    parent = fact("urn:lookup:parent")
    child = fact("urn:lookup:child", derived_from=[fact_hash(parent)])
    store = Store.at(settings.database)  # beside the running registry: another connection
    try:
        TransparencyLog.open(store).append([jcs(parent), jcs(child)])
    finally:
        store.close()
    answer = _proven(client, fact_hash(parent))
    assert [(e["index"], e["kind"], e["matched"]) for e in answer["entries"]] == [
        (1, "fact", ["data_sha256", "fact_hash"]),  # its bytes are what FactHash hashes
        (2, "fact", ["derived_from"]),  # the lineage neighbour: derived from it
    ]


def test_reindex_rebuilds_the_same_index_from_the_log(
    client: SpecClient, settings: Settings, keys: dict[str, str], tmp_path: Path
) -> None:
    for version in ("0.1.0", "0.2.0"):
        client.request("POST", CONTRACTS, json_body=contract(version=version), key=keys["publish"])
    state = client.client.app.state.registry
    state.db.call(state.log.append_leaf_hashes, [b"\x07" * 32])  # no data: its leaf hash only
    state.db.call(state.writer.after_integration)  # as the writer's next round files it
    before = state.db.call(_rows, state.tables.store)
    assert (b"\x07" * 32, 2, "leaf_hash", "hash_only") in before
    where = ["--data-dir", str(settings.data_dir)]
    if settings.uses_postgres:
        where += ["--database-url", settings.database_url]
    with state.tables.store.write() as db:  # damage it: the rebuild must not depend on it
        db.execute("DELETE FROM registry_lookup WHERE leaf_index = 1")
    report = cli("registry reindex", *where)
    assert_output_schema("registry reindex", report)
    # The registry under test keeps running: its integrator may file some of the cleared leaves
    # itself between the rebuild's first transaction and the next, so the rebuild files the rest.
    assert (report["ok"], report["rows"], report["tree_size"]) == (True, len(before), 3)
    assert 0 <= report["entries"] <= 3
    assert state.db.call(_rows, state.tables.store) == before


def test_what_the_integrator_adds_to_the_tree_is_filed_in_the_same_transaction(
    client: SpecClient, settings: Settings
) -> None:
    token = make_key(settings, "log:write")
    parent = fact("urn:lookup:posted")
    posted = client.request(
        "POST", "/v1/log/entries", raw=jcs(parent), key=token,
        headers={"Content-Type": "application/octet-stream"}, params={"wait": "integrated"},
    )  # fmt: skip
    assert posted.status_code == 201
    state = client.client.app.state.registry
    # no lookup ran yet: the rows were written with the integration, not caught up later
    assert state.db.call(lambda: (state.tables.lookup_size(), state.log.size)) == (1, 1)
    found = _proven(client, fact_hash(parent))["entries"]
    assert [(e["index"], e["kind"]) for e in found] == [(posted.json()["index"], "fact")]
