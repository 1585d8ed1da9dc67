"""Facts routes: hidden equals absent (docs/adr/0009), the Stigmem POST, bounded walks.

Every check compares whole response bytes where the ADR promises "byte for byte".
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings
from affidavit.verify.lineage.facts import parse_fact

from tests.registry.conftest import SpecClient, make_key, registry_key
from tests.registry.helpers import fact, fact_hash

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ABSENT = "f" * 64


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    """The API's rules hold on both stores (hidden ≡ absent, byte for byte)."""
    return settings_on_each_store


def _same_shape(hidden: Any, hidden_hash: str, absent: Any) -> None:
    """Status and body identical once the two hashes are blanked."""
    assert hidden.status_code == absent.status_code
    assert hidden.content.replace(hidden_hash.encode(), b"H") == absent.content.replace(
        ABSENT.encode(), b"H"
    )


# Hidden root == absent root ------------------------------------------------------------------


def test_unreadable_provenance_root_is_answered_exactly_as_an_absent_one(
    client: SpecClient, keys: dict[str, str]
) -> None:
    parent = fact("urn:h:parent")
    secret = fact("urn:h:secret", scope="company", derived_from=[fact_hash(parent)])
    client.request("PUT", "/v1/facts", json_body={"facts": [parent, secret]}, key=keys["all"])
    for key in (keys["team"], keys["write"], None):
        hidden = client.get(f"/v1/facts/{fact_hash(secret)}/provenance", key=key)
        absent = client.get(f"/v1/facts/{ABSENT}/provenance", key=key)
        assert hidden.status_code == 404
        assert hidden.json()["code"] == "fact_not_found"
        _same_shape(hidden, fact_hash(secret), absent)
        assert fact_hash(parent) not in hidden.text
    # a reader of the scope still walks it
    visible = client.get(f"/v1/facts/{fact_hash(secret)}/provenance", key=keys["all"])
    assert visible.status_code == 200
    # narrowing with ?scope= never widens, and an excluded root is absent too
    narrowed = client.get(
        f"/v1/facts/{fact_hash(secret)}/provenance", params={"scope": "team"}, key=keys["all"]
    )
    _same_shape(
        narrowed,
        fact_hash(secret),
        client.get(f"/v1/facts/{ABSENT}/provenance", params={"scope": "team"}, key=keys["all"]),
    )


@pytest.fixture
def strict_client(tmp_path: Path) -> Iterator[tuple[TestClient, Settings]]:
    settings = Settings(
        data_dir=tmp_path / "strict",
        contracts_dir=tmp_path / "contracts",
        facts_strict_forbidden=True,
    )
    app = create_app(settings, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield raw, settings


def test_strict_setting_restores_the_403_for_an_unreadable_root(
    strict_client: tuple[TestClient, Settings],
) -> None:
    raw, settings = strict_client
    writer = make_key(settings.data_dir, "facts:write", "facts:read:*")
    team = make_key(settings.data_dir, "facts:read:team")
    secret = fact("urn:h:strict", scope="company")
    stored = raw.put("/v1/facts", json=secret, headers={"Authorization": f"Bearer {writer}"})
    assert stored.status_code == 201
    auth = {"Authorization": f"Bearer {team}"}
    root = raw.get(f"/v1/facts/{fact_hash(secret)}/provenance", headers=auth)
    assert (root.status_code, root.json()["code"]) == (403, "lineage.root_forbidden")
    assert set(root.json()) == {"code", "message", "details"}
    absent = raw.get(f"/v1/facts/{ABSENT}/provenance", headers=auth)
    assert (absent.status_code, absent.json()["code"]) == (404, "fact_not_found")
    # GET of the fact itself stays hidden == absent even in strict mode
    assert raw.get(f"/v1/facts/{fact_hash(secret)}", headers=auth).status_code == 404


def test_strict_setting_reads_from_the_environment() -> None:
    settings = Settings.from_env({"AFFIDAVIT_FACTS_STRICT_FORBIDDEN": "true"})
    assert settings.facts_strict_forbidden is True
    assert Settings.from_env({}).facts_strict_forbidden is False


# A writer that cannot read a scope ----------------------------------------------------------


def test_writer_without_read_gets_the_new_fact_answer_for_a_stored_one(
    client: SpecClient, keys: dict[str, str]
) -> None:
    stored = fact("urn:w:stored", scope="company")
    client.request("PUT", "/v1/facts", json_body=stored, key=keys["all"])
    new = fact("urn:w:new", scope="company")
    again = client.request("PUT", "/v1/facts", json_body=stored, key=keys["write"])
    fresh = client.request("PUT", "/v1/facts", json_body=new, key=keys["write"])
    assert (again.status_code, fresh.status_code) == (201, 201)
    assert again.json() == {"added": [fact_hash(stored)], "existing": []}
    _same_shape_bodies = again.content.replace(fact_hash(stored).encode(), b"H")
    assert _same_shape_bodies == fresh.content.replace(fact_hash(new).encode(), b"H")
    # another derived_from for the stored fact: as for a new fact (201), and nothing changes
    changed = dict(stored, derived_from=["e" * 64])
    moved = client.request("PUT", "/v1/facts", json_body=changed, key=keys["write"])
    assert moved.status_code == 201
    assert moved.json() == {"added": [fact_hash(stored)], "existing": []}
    kept = client.get(f"/v1/facts/{fact_hash(stored)}", key=keys["all"]).json()
    assert "derived_from" not in kept["fact"]
    # a writer that can read the scope still learns the truth
    reader = client.request("PUT", "/v1/facts", json_body=changed, key=keys["all"])
    assert (reader.status_code, reader.json()["code"]) == (422, "derived_from_immutable")
    same = client.request("PUT", "/v1/facts", json_body=stored, key=keys["all"])
    assert (same.status_code, same.json()["existing"]) == (200, [fact_hash(stored)])


# Scope before body ---------------------------------------------------------------------------


def test_hidden_body_is_never_parsed(
    client: SpecClient, keys: dict[str, str], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # seed 002 §20.6.2: the scope check comes first; a hidden fact's body is not even read.
    big = fact("urn:b:big", scope="company", v="x" * 900_000)
    small = fact("urn:b:small", scope="team")
    client.request("PUT", "/v1/facts", json_body=big, key=keys["all"])
    client.request("PUT", "/v1/facts", json_body=small, key=keys["all"])
    parsed: list[str] = []
    from affidavit.attest.stores import facts as factstore

    real = factstore._parse_stored

    def spy(fact_hash_: str, body: bytes | str) -> Any:
        parsed.append(fact_hash_)
        return real(fact_hash_, body)

    monkeypatch.setattr(factstore, "_parse_stored", spy)
    for path in (f"/v1/facts/{fact_hash(big)}", f"/v1/facts/{fact_hash(big)}/provenance"):
        assert client.get(path, key=keys["team"]).status_code == 404
    assert parsed == []
    assert client.get(f"/v1/facts/{fact_hash(small)}", key=keys["team"]).status_code == 200
    assert parsed == [fact_hash(small)]


def test_hidden_and_absent_take_about_the_same_time(
    client: SpecClient, keys: dict[str, str]
) -> None:
    big = fact("urn:t:big", scope="company", v="y" * 900_000)
    client.request("PUT", "/v1/facts", json_body=big, key=keys["all"])

    def median(path: str) -> float:
        samples = []
        for _ in range(15):
            start = time.perf_counter()
            client.client.get(path, headers={"Authorization": f"Bearer {keys['team']}"})
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    hidden = median(f"/v1/facts/{fact_hash(big)}/provenance")
    absent = median(f"/v1/facts/{ABSENT}/provenance")
    # Parsing the 0.9 MB body took several times the absent case before; now both skip it.
    assert hidden < absent * 2 + 0.002, (hidden, absent)


# POST /v1/facts (Stigmem clients) ------------------------------------------------------------


def test_post_takes_a_stigmem_assert_and_answers_the_record(
    client: SpecClient, keys: dict[str, str]
) -> None:
    body = {
        "entity": "urn:p:alice",
        "relation": "memory:role",
        "value": {"type": "text", "v": "CEO"},
        "source": "urn:p:hr",
        "scope": "team",
        "confidence": 0.9,
        "timestamp": "2026-05-01T10:00:00+00:00",
    }
    created = client.request("POST", "/v1/facts", json_body=body, key=keys["all"])
    assert created.status_code == 201
    record = created.json()
    expected = parse_fact(
        {**{k: v for k, v in body.items() if k != "timestamp"}, "ts": body["timestamp"]}
    )
    assert record["id"] == expected.hash
    assert record["cid"] == expected.cid
    assert record["timestamp"] == "2026-05-01T10:00:00+00:00"
    assert record["value"] == {"type": "text", "v": "CEO", "interpret_as": "content"}
    assert (record["contradicted"], record["warnings"], record["derived_from"]) == (False, [], [])
    # the same fact again: 200 with the same record; readable through GET by its id
    again = client.request("POST", "/v1/facts", json_body=body, key=keys["all"])
    assert (again.status_code, again.json()) == (200, record)
    assert client.get(f"/v1/facts/{record['id']}", key=keys["all"]).status_code == 200
    # PUT of the same fact finds it stored: one fact, one FactHash, whichever verb wrote it
    as_put = {k: v for k, v in body.items() if k != "timestamp"} | {"ts": body["timestamp"]}
    put = client.request("PUT", "/v1/facts", json_body=as_put, key=keys["all"])
    assert (put.status_code, put.json()["existing"]) == (200, [record["id"]])


def test_post_defaults_as_the_node_does(client: SpecClient, keys: dict[str, str]) -> None:
    body = {
        "entity": "urn:p:bob",
        "relation": "memory:flag",
        "value": {"type": "null"},
        "source": "urn:p:hr",
    }
    created = client.request("POST", "/v1/facts", json_body=body, key=keys["all"])
    assert created.status_code == 201
    record = created.json()
    # confidence 1, scope local, ts from the server's clock (the fixture's fixed clock)
    assert (record["confidence"], record["scope"]) == (1.0, "local")
    assert record["timestamp"] == "2025-06-01T12:00:00Z"
    assert record["value"] == {"type": "null", "v": None, "interpret_as": "content"}
    stored = parse_fact({**body, "confidence": 1.0, "scope": "local", "ts": "2025-06-01T12:00:00Z"})
    assert record["id"] == stored.hash


def test_post_refuses_what_put_refuses(client: SpecClient, keys: dict[str, str]) -> None:
    base = {"entity": "urn:p:c", "relation": "memory:role", "source": "urn:p:hr"}
    cases = [
        ({**base, "value": {"type": "number", "v": 1e16}}, 400, "canonical.unsafe_integer"),
        (
            {
                **base,
                "value": {"type": "text", "v": "x"},
                "derived_from": [{"hash": "sha256:" + "a" * 64}],
            },
            400,
            "fact.derived_from_malformed",
        ),
        (
            {
                **base,
                "value": {"type": "text", "v": "x"},
                "ts": "2026-01-01T00:00:00Z",
                "timestamp": "2026-01-02T00:00:00Z",
            },
            400,
            "fact.invalid",
        ),
    ]
    for body, status, code in cases:
        answer = client.client.post(
            "/v1/facts",
            content=json.dumps(body),
            headers={"Authorization": f"Bearer {keys['all']}"},
        )
        assert (answer.status_code, answer.json()["code"]) == (status, code), body
    batch = client.client.post(
        "/v1/facts",
        content=json.dumps({"facts": [fact("urn:p:d")]}),
        headers={"Authorization": f"Bearer {keys['all']}"},
    )
    assert batch.status_code == 400
    no_key = client.client.post("/v1/facts", content=json.dumps(fact("urn:p:e")))
    assert no_key.json()["code"] == "auth.missing"


def test_unsafe_number_is_refused_at_put_and_the_listing_stays_readable(
    client: SpecClient, keys: dict[str, str]
) -> None:
    ok = fact("urn:n:ok")
    ok["value"] = {"type": "number", "v": 1e21}  # written 1e+21: reads back as itself
    bad = fact("urn:n:bad")
    bad["value"] = {"type": "number", "v": 1e16}
    refused = client.request("PUT", "/v1/facts", json_body=bad, key=keys["all"])
    assert (refused.status_code, refused.json()["code"]) == (400, "canonical.unsafe_integer")
    assert client.request("PUT", "/v1/facts", json_body=ok, key=keys["all"]).status_code == 201
    listed = client.get("/v1/facts", params={"entity": "urn:n:ok"}, key=keys["all"])
    assert listed.status_code == 200
    assert listed.json()["facts"][0]["fact"]["value"]["v"] == 1e21
    again = client.request("PUT", "/v1/facts", json_body=ok, key=keys["all"])
    assert again.status_code == 200


# Bounded walks -------------------------------------------------------------------------------


def _fan_out(count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    parents = [fact(f"urn:f:p{i}", v="p" * 200) for i in range(count)]
    root = fact("urn:f:root", derived_from=[fact_hash(p) for p in parents])
    return parents, root


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[tuple[TestClient, str, dict[str, Any]]]:
    settings = Settings(
        data_dir=tmp_path / "capped",
        contracts_dir=tmp_path / "contracts",
        walk_max_nodes=50,
        walk_max_bytes=20_000,
    )
    app = create_app(settings, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        key = make_key(settings.data_dir, "facts:write", "facts:read:*")
        parents, root = _fan_out(300)
        auth = {"Authorization": f"Bearer {key}"}
        assert (
            raw.put("/v1/facts", json={"facts": [*parents, root]}, headers=auth).status_code == 201
        )
        yield raw, key, root


def test_walk_is_capped_in_nodes_and_bytes(capped: tuple[TestClient, str, dict[str, Any]]) -> None:
    raw, key, root = capped
    answer = raw.get(
        f"/v1/facts/{fact_hash(root)}/provenance", headers={"Authorization": f"Bearer {key}"}
    )
    assert answer.status_code == 200
    walk = answer.json()
    assert walk["truncated"] is True
    assert 1 < len(walk["nodes"]) <= 50
    assert len(answer.content) <= 20_000
    shown = {n.get("id") or n["hash"] for n in walk["nodes"]}
    assert all(e["source_hash"] in shown and e["derived_fact_id"] in shown for e in walk["edges"])
    assert len(walk["edges"]) == len(walk["nodes"]) - 1


def test_walk_is_bounded_in_time(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "slow", contracts_dir=tmp_path / "c", walk_max_seconds=1e-9
    )
    app = create_app(settings, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        key = make_key(settings.data_dir, "facts:write", "facts:read:*")
        parents, root = _fan_out(20)
        auth = {"Authorization": f"Bearer {key}"}
        raw.put("/v1/facts", json={"facts": [*parents, root]}, headers=auth)
        walk = raw.get(f"/v1/facts/{fact_hash(root)}/provenance", headers=auth).json()
    assert walk["truncated"] is True
    assert [n["id"] for n in walk["nodes"]] == [fact_hash(root)]
    assert walk["edges"] == []


def test_walk_settings_default() -> None:
    defaults = Settings()
    assert (defaults.walk_max_nodes, defaults.walk_max_bytes) == (10_000, 4 * 1024 * 1024)
    assert dataclasses.replace(defaults, walk_max_nodes=5).walk_max_nodes == 5
