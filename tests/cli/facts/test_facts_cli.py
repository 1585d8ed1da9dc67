"""`affidavit facts`: hash, add, sign, walk, audit, export; exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.verify.lineage.test_lineage import ABSENT, chain, make_fact


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(affidavit, ["facts", *args], input=input)


def jsonl(path: Path, documents: list[Any]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, list[Any]]:
    facts = chain(4)
    source = jsonl(tmp_path / "facts.jsonl", [dict(f.document) for f in facts])
    db = tmp_path / "facts.db"
    result = run("add", str(db), str(source))
    assert result.exit_code == 0, result.output
    return db, facts


def test_hash_one_fact_and_jsonl(tmp_path: Path) -> None:
    facts = chain(2)
    single = tmp_path / "one.json"
    single.write_text(json.dumps(dict(facts[0].document)))
    assert run("hash", str(single)).output == facts[0].hash + "\n"
    lines = jsonl(tmp_path / "two.jsonl", [dict(f.document) for f in facts])
    assert run("hash", str(lines)).output.split() == [f.hash for f in facts]
    as_json = json.loads(
        run("hash", "--json", "-", input=json.dumps(dict(facts[0].document))).output
    )
    assert as_json["facts"] == [{"fact_hash": facts[0].hash, "stigmem_cid": facts[0].cid}]


def test_malformed_fact_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = jsonl(tmp_path / "bad.jsonl", [dict(make_fact("a").document), {"entity": "urn:x"}])
    db = tmp_path / "facts.db"
    result = run("add", str(db), str(bad))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: fact.invalid: ")
    assert "line 2" in result.stderr
    assert (
        not db.exists()
        or sqlite3.connect(db).execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    )


def test_broken_json_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(dict(make_fact("a").document)) + "\n{nope\n")
    result = run("hash", str(path))
    assert result.exit_code == 2
    assert "line 2" in result.stderr
    assert result.stderr.startswith("error: json.")


def test_add_reports_cycles_and_immutability_and_stores_nothing(
    store: tuple[Path, list[Any]], tmp_path: Path
) -> None:
    db, _ = store
    x = make_fact("x")
    y = make_fact("y", x)  # y names x, which is not stored yet: dangling, valid
    assert run("add", str(db), "-", input=json.dumps(dict(y.document))).exit_code == 0
    cyclic = make_fact("x", y)  # x derived from y closes x -> y -> x
    result = run("add", str(db), "-", input=json.dumps(dict(cyclic.document)))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: provenance_cycle_detected: ")
    changed = make_fact("f1", ABSENT)
    result = run("add", str(db), "-", input=json.dumps(dict(changed.document)))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: derived_from_immutable: ")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM facts").fetchone()[0] == 5


def test_add_json_output(tmp_path: Path) -> None:
    fact = make_fact("a")
    db = tmp_path / "f.db"
    first = json.loads(
        run("add", "--json", str(db), "-", input=json.dumps(dict(fact.document))).output
    )
    assert first == {"ok": True, "added": [fact.hash], "existing": []}
    again = json.loads(
        run("add", "--json", str(db), "-", input=json.dumps(dict(fact.document))).output
    )
    assert again == {"ok": True, "added": [], "existing": [fact.hash]}


def test_walk_formats_and_depth(store: tuple[Path, list[Any]]) -> None:
    db, facts = store
    result = run("walk", "--json", facts[-1].hash, "--store", str(db))
    assert result.exit_code == 0
    document = json.loads(result.output)
    assert document["depth_limit"] == 3
    assert document["truncated"] is False
    assert len(document["nodes"]) == 4
    for form in ("text", "dot", "mermaid", "svg", "html"):
        assert run("walk", facts[-1].hash, "--store", str(db), "--format", form).exit_code == 0
    # text for people by default (issue 22); --json and --format json are the machine form
    default = run("walk", facts[-1].hash, "--store", str(db))
    assert (
        default.output == run("walk", facts[-1].hash, "--store", str(db), "--format", "text").output
    )
    assert not default.output.lstrip().startswith("{")
    assert (
        json.loads(run("walk", facts[-1].hash, "--store", str(db), "--format", "json").output)
        == document
    )
    deep = run("walk", "--json", facts[-1].hash, "--store", str(db), "--depth", "6")
    assert deep.exit_code == 2
    assert deep.stderr.startswith("error: graph_depth_exceeded: ")
    assert deep.stdout == ""


def test_walk_unknown_and_forbidden_roots(store: tuple[Path, list[Any]]) -> None:
    db, facts = store
    missing = run("walk", "--json", ABSENT, "--store", str(db))
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: fact_not_found: ")
    forbidden = run(
        "walk", "--json", facts[-1].hash, "--store", str(db), "--readable-scopes", "local"
    )
    assert forbidden.exit_code == 3
    assert forbidden.stdout == ""
    assert forbidden.stderr.startswith("error: lineage.root_forbidden: ")
    unknown = run(
        "walk", "--json", facts[-1].hash, "--store", str(db), "--readable-scopes", "galaxy"
    )
    assert unknown.exit_code == 2


def test_walk_hidden_equals_absent_through_the_cli(tmp_path: Path) -> None:
    secret = make_fact("secret", make_fact("gp"), scope="company")
    root = make_fact("root", secret)
    with_secret = jsonl(tmp_path / "a.jsonl", [dict(secret.document), dict(root.document)])
    without = jsonl(tmp_path / "b.jsonl", [dict(root.document)])
    for form in ("json", "text", "dot", "mermaid", "svg", "html"):
        hidden = run(
            "walk",
            root.hash,
            "--store",
            str(with_secret),
            "--readable-scopes",
            "team",
            "--format",
            form,
        )
        absent = run("walk", root.hash, "--store", str(without), "--format", form)
        assert hidden.exit_code == absent.exit_code == 0
        assert hidden.stdout_bytes == absent.stdout_bytes, form


def test_audit_exit_codes(store: tuple[Path, list[Any]], tmp_path: Path) -> None:
    db, facts = store
    clean = run("audit", "--store", str(db))
    assert clean.exit_code == 0
    assert "audited 4 facts: ok" in clean.output
    export = tmp_path / "export.jsonl"
    export.write_bytes(run("export", str(db)).stdout_bytes)
    assert run("audit", "--store", str(export)).exit_code == 0
    tampered = export.read_text().replace('"v":"f2"', '"v":"forged"')
    export.write_text(tampered)
    found = run("audit", "--store", str(export), "--json")
    assert found.exit_code == 1
    report = json.loads(found.output)
    assert [f["code"] for f in report["findings"]] == ["lineage.fact_hash_mismatch"]
    assert report["findings"][0]["fact"] == facts[2].hash
    unreadable = run("audit", "--store", str(tmp_path / "missing.db"))
    assert unreadable.exit_code == 2
    assert unreadable.stderr.startswith("error: io.unreadable: ")


def _keys(tmp_path: Path, name: str) -> tuple[Path, Path]:
    key = derive_test_key(f"TEST-ONLY lineage cli {name}")  # TEST-ONLY key from a fixed seed
    private = tmp_path / f"{name}.key"
    private.write_bytes(private_key_pem(key))
    os.chmod(private, 0o600)
    public = tmp_path / f"{name}.pub"
    public.write_text(key.public_key.b64 + "\n")
    return private, public


def test_sign_then_walk_and_audit_with_trusted_keys(tmp_path: Path) -> None:
    private, public = _keys(tmp_path, "alice")
    _, mallory_public = _keys(tmp_path, "mallory")
    facts = chain(2)
    signed = run("sign", "--key", str(private), "-", input=json.dumps(dict(facts[1].document)))
    assert signed.exit_code == 0, signed.output
    signed_doc = json.loads(signed.output)
    assert signed_doc["signature"]["key_id"] == "alice"
    assert signed_doc["signature"]["alg"] == "Ed25519"
    store = jsonl(tmp_path / "s.jsonl", [dict(facts[0].document), signed_doc])
    walked = json.loads(
        run(
            "walk", "--json", facts[1].hash, "--store", str(store), "--trusted-key", str(public)
        ).output
    )
    assert [n["signature"] for n in walked["nodes"]] == ["signed", "unsigned"]
    ok = run("audit", "--store", str(store), "--trusted-key", str(public), "--json")
    assert ok.exit_code == 0
    assert json.loads(ok.output)["signatures"] == {"signed": 1, "unsigned": 1, "bad": 0}
    wrong_key = run("audit", "--store", str(store), "--trusted-key", str(mallory_public))
    assert wrong_key.exit_code == 1
    assert "lineage.signature_bad" in wrong_key.output


def test_a_signature_moved_to_another_fact_is_bad(tmp_path: Path) -> None:
    private, public = _keys(tmp_path, "alice")
    facts = chain(2)
    signed = json.loads(
        run("sign", "--key", str(private), "-", input=json.dumps(dict(facts[0].document))).output
    )
    moved = {**dict(facts[1].document), "signature": signed["signature"]}
    store = jsonl(tmp_path / "s.jsonl", [signed, moved])
    walked = json.loads(
        run(
            "walk", "--json", facts[1].hash, "--store", str(store), "--trusted-key", str(public)
        ).output
    )
    assert [n["signature"] for n in walked["nodes"]] == ["bad", "signed"]
    audited = json.loads(
        run("audit", "--store", str(store), "--trusted-key", str(public), "--json").output
    )
    assert [(f["code"], f["fact"]) for f in audited["findings"]] == [
        ("lineage.signature_bad", facts[1].hash)
    ]


# Audit friction: every bad fact, empty inputs ------------------------------------------------


def test_add_reports_every_bad_fact_not_the_first(tmp_path: Path) -> None:
    good = dict(make_fact("a").document)
    bad_uri = {**good, "entity": "no uri"}
    bad_number = {**good, "value": {"type": "number", "v": 1e16}}
    source = jsonl(tmp_path / "bad.jsonl", [bad_uri, good, bad_number])
    with source.open("a") as handle:
        handle.write("{not json\n")
    db = tmp_path / "facts.db"
    result = run("add", str(db), str(source))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    # unreadable lines first, then bad facts: each one named
    assert result.stderr.startswith("error: fact.batch_invalid: 3 facts are bad: json.")
    for where in ("line 1", "line 3", "line 4"):
        assert where in result.stderr
    facts_only = jsonl(tmp_path / "bad2.jsonl", [bad_uri, good, bad_number])
    result = run("add", str(db), str(facts_only))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: fact.batch_invalid: 2 facts are bad: ")
    assert "line 1" in result.stderr
    assert "line 3" in result.stderr
    assert "fact.invalid" in result.stderr
    assert "canonical.unsafe_integer" in result.stderr
    assert not db.exists()


def test_add_reports_every_store_rule_break(tmp_path: Path) -> None:
    facts = chain(2)
    db = tmp_path / "facts.db"
    assert (
        run("add", str(db), str(jsonl(tmp_path / "a.jsonl", [dict(facts[0].document)]))).exit_code
        == 0
    )
    moved_a = {**dict(facts[0].document), "derived_from": [ABSENT]}
    self_cycle = {**dict(facts[1].document), "derived_from": [facts[1].hash]}
    result = run("add", str(db), str(jsonl(tmp_path / "b.jsonl", [moved_a, self_cycle])))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: fact.batch_invalid: 2 facts are bad: ")
    assert "derived_from_immutable" in result.stderr
    assert "provenance_cycle_detected" in result.stderr


@pytest.mark.parametrize("content", ["", "\n\n", "  \n"])
def test_empty_input_is_reported_as_no_facts_read(tmp_path: Path, content: str) -> None:
    source = tmp_path / "empty.jsonl"
    source.write_text(content)
    db = tmp_path / "facts.db"
    for args in (["add", str(db), str(source)], ["hash", str(source)]):
        result = run(*args)
        assert result.exit_code == 2
        assert (
            result.stderr
            == f"error: fact.input_empty: {source}: no facts read (the input is empty)\n"
        )
    assert not db.exists()
    audited = run("audit", "--store", str(source))
    assert audited.exit_code == 2
    assert audited.stderr.startswith("error: lineage.store_empty: ")
    assert "ok" not in audited.output


def test_audit_of_an_empty_sqlite_store_is_not_ok(tmp_path: Path) -> None:
    from affidavit.attest.stores.facts import FactStore

    db = tmp_path / "empty.db"
    FactStore.open(db, create=True).close()
    result = run("audit", "--store", str(db), "--json")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: lineage.store_empty: ")


def test_facts_group_does_not_import_httpx() -> None:
    import subprocess
    import sys

    code = "import sys, affidavit.cli.facts.group; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert "pull" in run("--help").output
