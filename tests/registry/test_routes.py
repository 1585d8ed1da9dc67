"""Every route against the OpenAPI document, with goldens, tamper and access-rule checks, on
both stores: the embedded SQLite file and a real PostgreSQL database (the same goldens, byte for
byte)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from affidavit.registry.settings import Settings
from affidavit.verify.contracts.manifest import verify_manifest
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.merkle import leaf_hash, verify_consistency, verify_inclusion
from affidavit.verify.crypto.treehead import verify_sth

from tests.conftest import VECTORS, assert_golden
from tests.registry.conftest import SpecClient, make_key, registry_key
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.openapi_check import all_operations

GOLDEN = VECTORS / "registry"
CONTRACTS = "/protocol/adapter-contracts"


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    """This module runs on both stores."""
    return settings_on_each_store


def golden(name: str, response: object) -> None:
    assert_golden(GOLDEN / f"{name}.json", response.content)  # type: ignore[attr-defined]


def test_discovery_goldens(client: SpecClient, settings: Settings) -> None:
    # Health names its store; everything else is byte-identical on both stores.
    health = "health-postgresql" if settings.uses_postgres else "health"
    for name, path in [
        (health, "/v1/health"),
        ("node_probe", "/.well-known/affidavit"),
        ("publisher_document", "/.well-known/affidavit-local-publisher.json"),
        ("contracts_list", CONTRACTS),
        ("contract_active_head", f"{CONTRACTS}/affidavit.examples.langgraph.v0"),
        ("manifest_builtins", "/specs/adapter-contracts.manifest.json"),
        ("public_key", "/protocol/merkle/public-key"),
        ("latest_empty", "/protocol/merkle/latest"),
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
        golden(name, response)


def test_builtins_are_five_lint_clean_examples(client: SpecClient) -> None:
    listed = client.get(CONTRACTS).json()["contracts"]
    assert len(listed) == 5
    assert {c["distribution_channel"] for c in listed} == {"aigentsy.examples"}
    frameworks = {c["adapter_id"].split(".")[2] for c in listed}
    assert frameworks == {"langgraph", "crewai", "autogen", "openai_agents", "llamaindex"}
    for summary in listed:
        view = client.get(
            f"{CONTRACTS}/{summary['adapter_id']}/{summary['adapter_version']}"
        ).json()
        from affidavit.verify.contracts.contract import lint_contract

        assert lint_contract(view["contract"]).ok
        assert view["contract"]["_example"] is True


def test_manifest_is_signed_stable_and_has_etag(client: SpecClient) -> None:
    first = client.get("/specs/adapter-contracts.manifest.json")
    again = client.get("/specs/adapter-contracts.manifest.json")
    assert first.content == again.content
    etag = first.headers["etag"]
    assert (
        client.get(
            "/specs/adapter-contracts.manifest.json", headers={"If-None-Match": etag}
        ).status_code
        == 304
    )
    report = verify_manifest(first.json(), public_key=registry_key().public_key)
    assert report.ok, report


def test_publish_then_prove_golden(client: SpecClient, keys: dict[str, str]) -> None:
    before = client.get("/specs/adapter-contracts.manifest.json")
    declaration = contract()
    response = client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"])
    assert response.status_code == 201
    golden("publish_created", response)
    body = response.json()
    entry = body["entry"]
    assert entry["contract_hash"] == declaration["contract_hash"]
    # the inclusion proof verifies against the signed head, and the leaf is the logged entry
    head = verify_sth(body["signed_tree_head"], registry_key().public_key)
    inclusion = body["inclusion"]
    assert inclusion["merkle_root"] == head.root_hash
    leaf = client.get(f"/protocol/merkle/leaf/{body['leaf_index']}").json()
    data = base64.b64decode(leaf["leaf_data_b64"])
    assert json.loads(data)["entry"] == entry
    verify_inclusion(
        leaf_hash(data),
        inclusion["leaf_index"],
        inclusion["tree_size"],
        [bytes.fromhex(p["hash"]) for p in inclusion["proof"]],
        bytes.fromhex(head.root_hash),
    )
    # the manifest changed, and it verifies; the entry is in it
    after = client.get("/specs/adapter-contracts.manifest.json")
    assert after.content != before.content
    assert after.headers["etag"] != before.headers["etag"]
    report = verify_manifest(after.json(), public_key=registry_key().public_key)
    assert report.ok
    assert entry in after.json()["contracts"]
    # idempotent for the same contract
    again = client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"])
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert again.json()["entry"] == entry
    assert client.get("/specs/adapter-contracts.manifest.json").content == after.content


def test_publish_refusals_golden(client: SpecClient, keys: dict[str, str]) -> None:
    declaration = contract()
    assert (
        client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"]).status_code
        == 201
    )
    other = contract(fields=("signal_a", "signal_c"))
    conflict = client.request("POST", CONTRACTS, json_body=other, key=keys["publish"])
    assert (conflict.status_code, conflict.json()["code"]) == (409, "registry.version_conflict")
    golden("error_version_conflict", conflict)
    builtin = contract("affidavit.examples.crewai.v0", "9.0.0")
    assert client.request("POST", CONTRACTS, json_body=builtin, key=keys["publish"]).json()[
        "code"
    ] == ("registry.version_conflict")
    tampered = dict(contract("acme.other.v0"), contract_hash="0" * 64)
    rejected = client.request(
        "POST", CONTRACTS, raw=json.dumps(tampered).encode(), key=keys["publish"]
    )
    assert (rejected.status_code, rejected.json()["code"]) == (422, "registry.contract_rejected")
    codes = {e["code"] for e in rejected.json()["details"]["errors"]}
    assert "contract.hash_mismatch" in codes
    missing = client.request("POST", CONTRACTS, json_body=contract("acme.x.v0"))
    assert (missing.status_code, missing.json()["code"]) == (401, "auth.missing")
    golden("error_auth_missing", missing)
    wrong_scope = client.request(
        "POST", CONTRACTS, json_body=contract("acme.x.v0"), key=keys["write"]
    )
    assert (wrong_scope.status_code, wrong_scope.json()["code"]) == (403, "auth.forbidden")
    bogus = "afk_0123456789abcdef_" + "A" * 43
    invalid = client.request("POST", CONTRACTS, json_body=contract("acme.x.v0"), key=bogus)
    assert (invalid.status_code, invalid.json()["code"]) == (401, "auth.invalid")
    # a valid key with its last character changed is refused too
    altered = keys["publish"][:-1] + ("A" if keys["publish"][-1] != "A" else "B")
    assert (
        client.request("POST", CONTRACTS, json_body=contract("acme.x.v0"), key=altered).status_code
        == 401
    )
    # nothing of the refused contracts was stored
    ids = {c["adapter_id"] for c in client.get(CONTRACTS).json()["contracts"]}
    assert "acme.other.v0" not in ids
    assert "acme.x.v0" not in ids


def test_lifecycle_patch_is_logged(client: SpecClient, keys: dict[str, str]) -> None:
    for version in ("0.1.0", "0.2.0"):
        client.request("POST", CONTRACTS, json_body=contract(version=version), key=keys["publish"])
    head = client.get(f"{CONTRACTS}/acme.eval_suite.v0").json()
    assert head["contract"]["adapter_version"] == "0.2.0"
    size = client.get("/protocol/merkle/latest").json()["tree_size"]
    path = f"{CONTRACTS}/acme.eval_suite.v0/0.2.0"
    patched = client.request(
        "PATCH",
        path,
        json_body={"status": "deprecated", "replaced_by": "acme.eval_suite.v0@0.1.0"},
        key=keys["publish"],
    )
    assert patched.status_code == 200
    entry = patched.json()["entry"]
    assert (entry["status"], entry["replaced_by"]) == ("deprecated", "acme.eval_suite.v0@0.1.0")
    assert entry["contract_hash"] == contract(version="0.2.0")["contract_hash"]  # hash-irrelevant
    assert client.get("/protocol/merkle/latest").json()["tree_size"] == size + 1
    assert (
        client.get(f"{CONTRACTS}/acme.eval_suite.v0").json()["contract"]["adapter_version"]
        == "0.1.0"
    )
    deprecated = client.get(CONTRACTS, params={"status": "deprecated"}).json()["contracts"]
    assert [(c["adapter_id"], c["adapter_version"]) for c in deprecated] == [
        ("acme.eval_suite.v0", "0.2.0")
    ]
    hashed = client.request("PATCH", path, raw=b'{"output_fields": ["x"]}', key=keys["publish"])
    assert (hashed.status_code, hashed.json()["code"]) == (422, "registry.field_not_patchable")
    unknown = client.request(
        "PATCH",
        f"{CONTRACTS}/acme.none.v0/1.0.0",
        json_body={"status": "revoked"},
        key=keys["publish"],
    )
    assert (unknown.status_code, unknown.json()["code"]) == (404, "registry.contract_not_found")
    bad = client.get(CONTRACTS, params={"status": "gone"})
    assert (bad.status_code, bad.json()["code"]) == (400, "http.bad_parameter")


def test_log_routes(client: SpecClient, keys: dict[str, str]) -> None:
    heads = []
    for version in ("0.1.0", "0.2.0", "0.3.0"):
        client.request("POST", CONTRACTS, json_body=contract(version=version), key=keys["publish"])
        heads.append(client.get("/protocol/merkle/latest").json())
    public = Ed25519PublicKey.from_b64(
        client.get("/protocol/merkle/public-key").json()["public_key_base64"]
    )
    for head in heads:
        verify_sth(head, public)
        assert client.get(f"/protocol/merkle/sth/{head['tree_size']}").json() == head
    missing = client.get("/protocol/merkle/sth/99")
    assert (missing.status_code, missing.json()["code"]) == (404, "registry.not_found")
    first, last = heads[0], heads[-1]
    proof = client.get(
        "/protocol/merkle/consistency",
        params={"first": first["tree_size"], "second": last["tree_size"]},
    ).json()
    verify_consistency(
        first["tree_size"],
        last["tree_size"],
        [bytes.fromhex(h) for h in proof["proof"]],
        bytes.fromhex(first["root_hash"]),
        bytes.fromhex(last["root_hash"]),
    )
    inclusion = client.get(
        "/protocol/merkle/inclusion", params={"leaf_index": 1, "tree_size": 3}
    ).json()
    assert inclusion["merkle_root"] == last["root_hash"]
    page = client.get("/protocol/merkle/entries", params={"start": 0, "end": 3}).json()
    assert [e["leaf_index"] for e in page["entries"]] == [0, 1, 2]
    for item in page["entries"]:
        assert leaf_hash(base64.b64decode(item["leaf_data_b64"])).hex() == item["leaf_hash"]
    note = client.get("/protocol/merkle/checkpoint").content.decode()
    vkey = parse_verifier_key(verifier_key_string("affidavit-registry", public))
    checked = verify_checkpoint(note, [vkey], origin="affidavit-registry")
    assert checked.checkpoint.tree_size == 3
    assert checked.checkpoint.root_hash.hex() == last["root_hash"]
    out_of_range = client.get("/protocol/merkle/leaf/7")
    assert (out_of_range.status_code, out_of_range.json()["code"]) == (
        404,
        "log.index_out_of_range",
    )
    for bad in ({"leaf_index": "x"}, {"leaf_index": "-1"}, {}):
        assert (
            client.get("/protocol/merkle/inclusion", params=bad).json()["code"]
            == "http.bad_parameter"
        )


def test_facts_and_access_rules_golden(client: SpecClient, keys: dict[str, str]) -> None:
    parent = fact("urn:x:parent")
    hidden = fact("urn:x:secret", scope="company")
    child = fact("urn:x:child", derived_from=[fact_hash(parent), fact_hash(hidden)])
    stored = client.request(
        "PUT", "/v1/facts", json_body={"facts": [parent, hidden, child]}, key=keys["write"]
    )
    assert stored.status_code == 201
    assert stored.json()["added"] == [fact_hash(parent), fact_hash(hidden), fact_hash(child)]
    # a writer that can read the scope learns it exists; one that cannot gets the answer a new
    # fact gets (docs/adr/0009)
    again = client.request("PUT", "/v1/facts", json_body=child, key=keys["all"])
    assert (again.status_code, again.json()["existing"]) == (200, [fact_hash(child)])
    # a team reader: the company fact is absent, byte for byte
    absent = "f" * 64
    r_hidden = client.get(f"/v1/facts/{fact_hash(hidden)}", key=keys["team"])
    r_absent = client.get(f"/v1/facts/{absent}", key=keys["team"])
    assert r_hidden.status_code == r_absent.status_code == 404
    assert r_hidden.content.replace(fact_hash(hidden).encode(), b"H") == r_absent.content.replace(
        absent.encode(), b"H"
    )
    assert client.get(f"/v1/facts/{fact_hash(hidden)}", key=keys["all"]).status_code == 200
    walk = client.get(f"/v1/facts/{fact_hash(child)}/provenance", key=keys["team"])
    golden("provenance_team_reader", walk)
    nodes = {n.get("id") or n["hash"]: n for n in walk.json()["nodes"]}
    assert nodes[fact_hash(hidden)] == {"hash": fact_hash(hidden), "exists": False}
    assert nodes[fact_hash(parent)]["exists"] is True
    listed = client.get("/v1/facts", params={"entity": "urn:x:parent"}, key=keys["team"]).json()
    assert [f["id"] for f in listed["facts"]] == [fact_hash(parent)]
    assert (
        client.get("/v1/facts", params={"scope": "company"}, key=keys["team"]).json()["count"] == 0
    )
    assert (
        client.get("/v1/facts", params={"scope": "company"}, key=keys["all"]).json()["count"] == 1
    )
    # an unreadable root answers exactly like an unknown one: 404 (docs/adr/0009)
    root = client.get(f"/v1/facts/{fact_hash(hidden)}/provenance", key=keys["team"])
    assert (root.status_code, root.json()["code"]) == (404, "fact_not_found")
    assert fact_hash(parent) not in root.text
    unknown = client.get(f"/v1/facts/{absent}/provenance", key=keys["team"])
    assert (unknown.status_code, unknown.json()["code"]) == (404, "fact_not_found")
    deep = client.get(
        f"/v1/facts/{fact_hash(child)}/provenance", params={"depth": 6}, key=keys["team"]
    )
    assert (deep.status_code, deep.json()["code"]) == (400, "graph_depth_exceeded")
    # no key: public only, so the team fact is absent
    assert client.get(f"/v1/facts/{fact_hash(parent)}").status_code == 404


def test_hidden_parent_walk_equals_absent_parent_walk(
    client: SpecClient, keys: dict[str, str]
) -> None:
    # docs/formats.md §5: a fact the caller may not read looks exactly like a missing one.
    parent = fact("urn:y:p", scope="company")
    child = fact("urn:y:c", derived_from=[fact_hash(parent)])
    client.request("PUT", "/v1/facts", json_body=child, key=keys["write"])
    path = f"/v1/facts/{fact_hash(child)}/provenance"
    absent = client.get(path, key=keys["team"]).content
    client.request("PUT", "/v1/facts", json_body=parent, key=keys["write"])
    hidden = client.get(path, key=keys["team"]).content
    assert hidden == absent
    visible = client.get(path, key=keys["all"]).json()
    assert visible["nodes"][1]["exists"] is True


def test_fact_rules(client: SpecClient, keys: dict[str, str]) -> None:
    a = fact("urn:z:a")
    b = fact("urn:z:b", derived_from=[fact_hash(a)])
    a_cyclic = dict(a, derived_from=[fact_hash(b)])
    cycle = client.request(
        "PUT", "/v1/facts", json_body={"facts": [b, a_cyclic]}, key=keys["write"]
    )
    assert (cycle.status_code, cycle.json()["code"]) == (400, "provenance_cycle_detected")
    assert (
        client.get(f"/v1/facts/{fact_hash(b)}", key=keys["team"]).status_code == 404
    )  # nothing stored
    client.request("PUT", "/v1/facts", json_body=a, key=keys["write"])
    changed = dict(a, derived_from=["e" * 64])
    immutable = client.request("PUT", "/v1/facts", json_body=changed, key=keys["all"])
    assert (immutable.status_code, immutable.json()["code"]) == (422, "derived_from_immutable")
    invalid = client.request("PUT", "/v1/facts", raw=b'{"entity": "urn:q"}', key=keys["write"])
    assert invalid.status_code == 400
    no_key = client.request("PUT", "/v1/facts", json_body=a)
    assert no_key.json()["code"] == "auth.missing"


def test_http_boundary_golden(client: SpecClient, settings: object, keys: dict[str, str]) -> None:
    big = b'{"x": "' + b"a" * (1024 * 1024 + 10) + b'"}'
    too_large = client.request("POST", CONTRACTS, raw=big, key=keys["publish"])
    assert (too_large.status_code, too_large.json()["code"]) == (413, "http.body_too_large")
    for raw, code in [
        (b'{"a": 1, "a": 2}', "json.duplicate_key"),
        (b'{"a": NaN}', "json.non_finite"),
        (b"{", "json.syntax"),
        (b"[1]", "json.wrong_type"),
        (b"\xef\xbb\xbf{}", "json.bom"),
    ]:
        response = client.request("POST", CONTRACTS, raw=raw, key=keys["publish"])
        assert (response.status_code, response.json()["code"]) == (400, code), raw
    golden(
        "error_duplicate_key",
        client.request("POST", CONTRACTS, raw=b'{"a": 1, "a": 2}', key=keys["publish"]),
    )
    not_allowed = client.client.request("DELETE", "/v1/health")
    assert (not_allowed.status_code, not_allowed.json()["code"]) == (405, "http.method_not_allowed")


def test_every_route_in_the_document_is_exercised(
    client: SpecClient, keys: dict[str, str], coverage: object, settings: Settings
) -> None:
    client.get("/openapi.yaml")
    assert client.get("/v1/health/ready").status_code == 200
    assert client.get("/v1/health/live").json() == {"status": "ok"}
    test_discovery_goldens(client, settings)
    test_log_routes(client, keys)
    client.request(
        "PATCH",
        f"{CONTRACTS}/acme.eval_suite.v0/0.1.0",
        json_body={"status": "revoked"},
        key=keys["publish"],
    )
    test_facts_and_access_rules_golden(client, keys)
    client.get(f"{CONTRACTS}/acme.eval_suite.v0/0.1.0")
    stigmem = {  # the Stigmem-style single write (tests/registry/test_facts_* test it in depth)
        "entity": "urn:x:posted",
        "relation": "memory:role",
        "value": {"type": "text", "v": "x"},
        "source": "urn:test:source",
        "scope": "public",
        "timestamp": "2025-06-01T12:00:00Z",
    }
    posted = client.request("POST", "/v1/facts", json_body=stigmem, key=keys["write"])
    assert posted.status_code == 201
    # Log entries from many writers (tests/registry/test_log_entries.py tests them in depth).
    entry = client.request(
        "POST",
        "/v1/log/entries",
        raw=b"an entry",
        key=make_key(settings, "log:write"),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert entry.status_code == 201
    # The tiled log (tests/registry/test_tlog_routes.py tests it in depth): 200, 404 and 400.
    size = int(client.get("/tlog/checkpoint").text.split("\n")[1])
    tile = client.get(f"/tlog/tile/0/000.p/{size}")
    assert (tile.status_code, len(tile.content)) == (200, 32 * size)
    # wider than the log holds: 255, not size + 1, which the integrator may reach meanwhile
    assert size < 255
    assert client.get("/tlog/tile/0/000.p/255").status_code == 404
    assert client.get("/tlog/key-rotations").status_code == 404  # this log never rotated
    assert client.get("/tlog/tile/0/0000").status_code == 400
    # SCITT (tests/registry/test_scitt_routes.py tests them on real processes): no issuer is
    # trusted here, so a statement is refused; the keys are served
    from tests.verify.scitt.support import statement

    posted = client.request(
        "POST", "/entries", raw=statement(), headers={"Content-Type": "application/cose"}
    )
    assert posted.status_code == 400
    assert client.get("/entries/" + "0" * 64).status_code == 404
    assert client.get("/.well-known/scitt-keys").status_code == 200
    assert client.get("/.well-known/scitt-keys/AAAA").status_code == 404
    # Lookups and the explorer (tests/registry/test_lookup.py, test_explorer.py and, in
    # Chromium, test_explorer_browser.py test them in depth)
    assert client.get("/v1/lookup/" + "0" * 64).json()["entries"] == []
    assert client.get("/").status_code == client.get("/search", params={"q": "x"}).status_code
    assert client.get("/explorer/explorer.js").status_code == 200
    assert client.get("/explorer/lineage/" + "0" * 64).status_code == 404  # no renderer here
    icon = client.get("/favicon.ico")  # issue 33: a browser's visit logs no 404
    assert (icon.status_code, icon.headers["content-type"]) == (200, "image/svg+xml")
    assert coverage.seen == all_operations()  # type: ignore[attr-defined]


def test_openapi_served_verbatim(client: SpecClient) -> None:
    from affidavit.specs import read_spec

    assert client.get("/openapi.yaml").content == read_spec("registry-v1.yaml")


def test_goldens_dir_exists() -> None:
    assert Path(GOLDEN).is_dir()


def test_golden_manifest_lists_every_file() -> None:
    listed = json.loads((GOLDEN / "manifest.json").read_text())["vectors"]
    files = {p.name for p in GOLDEN.glob("*.json")} - {"manifest.json"}
    assert {v["file"] for v in listed} == files
    for vector in listed:
        if "error" in vector:
            document = json.loads((GOLDEN / vector["file"]).read_text())
            assert document["code"] == vector["error"]
