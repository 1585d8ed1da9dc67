"""``affidavit facts pull`` against a REAL stigmem-node 0.9.0a12 on 127.0.0.1 (random port).

The session fixture starts the node as the docs do, with tools/docs_stigmem_node.py (which lays
out the node's missing SQL migrations from the pinned sdist, downloaded once with pip; the test
is skipped when that download fails). The node runs on SQLite, its default (no PostgreSQL
needed), with authentication on and a bootstrapped key.

From a running node to an audit in two commands: ``facts pull`` then ``facts add`` / ``facts
audit``; CIDs agree with the node's, and lineage matches the node's depth-1 provenance.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.lineage.facts import parse_fact
from click.testing import CliRunner

from tests.processes import free_port, refused_port, until
from tests.schemas import assert_output_schema

pytestmark = pytest.mark.network_local

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT = 120.0  # the script prepares the folder (migrations, key), then the node starts


def _load_tool() -> ModuleType:
    path = ROOT / "tools" / "docs_stigmem_node.py"
    spec = importlib.util.spec_from_file_location("docs_stigmem_node", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Node:
    url: str
    key: str

    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.url}/v1/facts",
            json=body,
            headers={"Authorization": f"Bearer {self.key}"},
            timeout=10,
        )
        assert answer.status_code == 201, answer.text
        record: dict[str, Any] = answer.json()
        return record

    def get(self, path: str) -> Any:
        answer = httpx.get(
            f"{self.url}{path}", headers={"Authorization": f"Bearer {self.key}"}, timeout=10
        )
        assert answer.status_code == 200, answer.text
        return answer.json()


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    pytest.importorskip("stigmem_node")
    tool = _load_tool()
    assert importlib.metadata.version("stigmem-node") == tool.NODE_VERSION
    try:
        tool.migrations()  # downloaded here, so that a failed download skips
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"cannot download the stigmem-node sdist: {e}")
    root = tmp_path_factory.mktemp("stigmem")
    port = free_port()
    key = secrets.token_hex(32)
    log = (root / "node.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "docs_stigmem_node.py"), "--port", str(port),
         "--key", key, "--dir", str(root / "node")],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert process.poll() is None, (root / "node.log").read_text()[-2000:]
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        until(up, START_TIMEOUT, step=0.2, what="the node did not start")
        yield Node(url=url, key=key)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
        log.close()


def _fact(entity: str, value: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "entity": entity,
        "relation": "memory:role",
        "value": value,
        "source": "urn:pull:source",
        "scope": "team",
        "confidence": 0.8,
        **extra,
    }


def pull(node: Node, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        affidavit, ["facts", "pull", node.url, "--api-key", node.key, "--out", str(out), *extra]
    )


@pytest.fixture(scope="session")
def asserted(node: Node) -> dict[str, dict[str, Any]]:
    """Facts asserted over the node's own HTTP API, by name."""
    records: dict[str, dict[str, Any]] = {}
    records["text"] = node.post(_fact("urn:pull:Alice", {"type": "text", "v": "CEO"}))
    records["int"] = node.post(_fact("urn:pull:count", {"type": "number", "v": 5}))
    records["float"] = node.post(_fact("urn:pull:ratio", {"type": "number", "v": 2.5}))
    records["null"] = node.post(_fact("urn:pull:none", {"type": "null"}))
    records["bool"] = node.post(_fact("urn:pull:flag", {"type": "boolean", "v": True}))
    records["derived"] = node.post(
        _fact(
            "urn:pull:summary",
            {"type": "text", "v": "sum"},
            write_mode="summarize_with_provenance",
            derived_from=[
                {"hash": records["text"]["cid"]},
                {"fact_id": records["int"]["id"]},
                {"fact_id": "00000000-0000-4000-8000-000000000000"},
            ],
        )
    )
    return records


def test_pull_then_audit_in_two_commands(
    node: Node, asserted: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    out = tmp_path / "node.jsonl"
    result = pull(node, out, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert_output_schema("facts pull", report)
    assert report["ok"] is True
    assert report["findings"] == []
    assert report["written"] == report["records"] >= len(asserted)
    assert [i["code"] for i in report["info"]] == ["stigmem.unresolved_reference"]
    assert os.stat(out).st_mode & 0o077 == 0
    documents = [json.loads(line) for line in out.read_text().splitlines()]
    by_id = {d["id"]: d for d in documents}
    # the CIDs agree: ours, computed from the written fact, is the node's own
    for name, record in asserted.items():
        written = by_id[record["id"]]
        assert parse_fact(written).cid == record["cid"], name
    assert by_id[asserted["int"]["id"]]["value"] == {"type": "number", "v": 5}
    assert by_id[asserted["null"]["id"]]["value"] == {"type": "null", "v": None}
    assert by_id[asserted["text"]["id"]]["entity"] == "urn:pull:alice"  # the node lowercases
    assert by_id[asserted["text"]["id"]]["ts"].endswith("Z")
    # two commands: add (unchanged file) and audit
    db = tmp_path / "facts.db"
    runner = CliRunner()
    added = runner.invoke(affidavit, ["facts", "add", "--json", str(db), str(out)])
    assert added.exit_code == 0, added.output
    assert len(json.loads(added.output)["added"]) == len(documents)
    audited = runner.invoke(affidavit, ["facts", "audit", "--store", str(db), "--json"])
    assert audited.exit_code == 0, audited.output
    assert json.loads(audited.output)["facts"] == len(documents)
    assert runner.invoke(affidavit, ["facts", "audit", "--store", str(out)]).exit_code == 0


def test_lineage_matches_the_nodes_depth_one_provenance(
    node: Node, asserted: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    out = tmp_path / "node.jsonl"
    assert pull(node, out).exit_code == 0
    documents = [json.loads(line) for line in out.read_text().splitlines()]
    hash_of = {d["id"]: parse_fact(d).hash for d in documents}
    derived = asserted["derived"]
    theirs = node.get(f"/v1/facts/{derived['id']}/provenance")
    node_parents = [hash_of[e["fact_id"]] for e in theirs["derived_from"] if e["exists"]]
    walked = CliRunner().invoke(
        affidavit,
        ["facts", "walk", "--json", hash_of[derived["id"]], "--store", str(out), "--depth", "1"],
    )
    assert walked.exit_code == 0, walked.output
    ours = json.loads(walked.output)
    our_parents = [n["id"] for n in ours["nodes"][1:] if n["exists"]]
    assert (
        our_parents
        == node_parents
        == [hash_of[asserted["text"]["id"]], hash_of[asserted["int"]["id"]]]
    )
    assert [e["exists"] for e in theirs["derived_from"]] == [True, True, False]


def test_paging_follows_the_cursor_and_reports_that_it_may_skip(
    node: Node, asserted: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    from affidavit.registry.clients.stigmem import fetch_node_facts

    one_page = fetch_node_facts(node.url, api_key=node.key)
    assert (one_page.pages, one_page.repeated) == (1, 0)
    assert len(one_page.records) >= len(asserted)
    # stigmem-node 0.9.0a12 sorts by timestamp but pages by id > cursor: small pages skip or
    # repeat facts. Repeats are dropped; a pull that needed two pages says it may be incomplete.
    tiny = fetch_node_facts(node.url, api_key=node.key, page_size=2)
    assert tiny.pages > 1
    ids = [r["id"] for r in tiny.records]
    assert len(ids) == len(set(ids))
    assert set(ids) <= {r["id"] for r in one_page.records}
    result = pull(node, tmp_path / "paged.jsonl", "--page-size", "2", "--json")
    assert result.exit_code == 1
    assert_output_schema("facts pull", result.output)
    codes = [f["code"] for f in json.loads(result.output)["findings"]]
    assert "stigmem.paging_unreliable" in codes


def test_contradicted_facts_come_only_on_request(node: Node, tmp_path: Path) -> None:
    first = node.post(_fact("urn:pull:twice", {"type": "text", "v": "a"}))
    second = node.post(_fact("urn:pull:twice", {"type": "text", "v": "b"}))
    plain, with_them = tmp_path / "plain.jsonl", tmp_path / "all.jsonl"
    assert pull(node, plain).exit_code == 0
    assert pull(node, with_them, "--include-contradicted").exit_code == 0
    ids_plain = {json.loads(x)["id"] for x in plain.read_text().splitlines()}
    rows = [json.loads(x) for x in with_them.read_text().splitlines()]
    assert not {first["id"], second["id"]} & ids_plain
    marked = {r["id"]: r["stigmem"]["contradicted"] for r in rows}
    assert marked[first["id"]] is marked[second["id"]] is True


def test_a_value_that_cannot_round_trip_is_a_finding(node: Node, tmp_path: Path) -> None:
    big = node.post(_fact("urn:pull:big", {"type": "number", "v": 1e16}))
    out = tmp_path / "big.jsonl"
    result = pull(node, out, "--json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert [(f["code"], f["details"]["id"]) for f in report["findings"]] == [
        ("stigmem.record_refused", big["id"])
    ]
    assert report["written"] == report["records"] - 1  # everything else is still written
    assert big["id"] not in out.read_text()


def test_node_errors_exit_2_with_one_line(node: Node, tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path / "x.jsonl")
    wrong = runner.invoke(affidavit, ["facts", "pull", node.url, "--api-key", "nope", "--out", out])
    assert wrong.exit_code == 2
    assert wrong.stderr.startswith("error: stigmem.node_error: ")
    assert "401" in wrong.stderr
    assert wrong.stderr.count("\n") == 1
    with refused_port() as port:
        closed = f"http://127.0.0.1:{port}"
        gone = runner.invoke(affidavit, ["facts", "pull", closed, "--out", out, "--timeout", "2"])
    assert gone.exit_code == 2
    assert gone.stderr.startswith("error: stigmem.node_unreachable: ")
    assert not Path(out).exists()
