"""``affidavit receipt make|log|fact``, and receipts in the fact store: ``facts walk`` shows
content <- transformations <- source, ``facts audit --receipts`` catches an altered receipt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.json.canonical import jcs
from affidavit.verify.receipts.format import load_receipt
from click.testing import CliRunner, Result

from tests.schemas import assert_output_schema
from tests.verify.receipts.receipt_fixtures import (
    ADAPTER,
    CONTENT,
    LOSSY,
    OTHER,
    SOURCE,
    TS,
    receipt,
    write_json,
    write_key,
)

SOURCE_FACT = {
    "entity": "urn:demo:source:notes/a.txt",
    "relation": "affidavit:ingested",
    "value": {"type": "text", "v": "notes/a.txt as read"},
    "source": "file:///notes/a.txt",
    "scope": "local",
    "confidence": 1,
    "ts": TS,
}


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "src.txt").write_bytes(SOURCE)
    (tmp_path / "out.txt").write_bytes(CONTENT)
    write_key(tmp_path / "keys")
    return tmp_path


def _make(work: Path, *extra: str, transforms: tuple[str, ...] = LOSSY) -> Result:
    chain = [a for t in transforms for a in ("--transform", t)]
    return run(
        "receipt", "make", "--source", str(work / "src.txt"), "--adapter", "demo-lossy",
        "--adapter-version", "1.0.0", *chain, "--source-uri", "notes/a.txt",
        "--issued-at", TS, "--key", str(work / "keys" / "adapter.key"),
        "--out", str(work / "out.txt.receipt.json"), *extra,
    )  # fmt: skip


def test_make_human_and_verify(work: Path) -> None:
    result = _make(work, "--content", str(work / "out.txt"))
    assert result.exit_code == 0, result.output
    written = json.loads((work / "out.txt.receipt.json").read_text())
    assert written == receipt()  # the library's receipt, byte for byte the same fields
    parsed = load_receipt((work / "out.txt.receipt.json").read_bytes())
    assert result.stdout.splitlines() == [
        f"wrote {work / 'out.txt.receipt.json'}: declared_lossy (newline_normalize, "
        "whitespace_trim)",
        f"receipt_hash {parsed.receipt_hash}",
    ]
    verified = run(
        "verify", "receipt", str(work / "out.txt.receipt.json"), "--source",
        str(work / "src.txt"), "--content", str(work / "out.txt"),
        "--trusted-keys", str(work / "keys"),
    )  # fmt: skip
    assert verified.exit_code == 0, verified.output


def test_make_json(work: Path) -> None:
    result = _make(work, "--content", str(work / "out.txt"), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert_output_schema("receipt make", document)
    assert document["capability"] == "declared_lossy"
    assert document["chunks"] is None
    assert document["key_id"] == receipt()["signature"]["key_id"]


def test_make_with_chunks_only(work: Path) -> None:
    (work / "c0").write_bytes(CONTENT[:10])
    (work / "c1").write_bytes(CONTENT[10:])
    result = _make(work, "--chunk", str(work / "c0"), "--chunk", str(work / "c1"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["chunks"] == 2
    swapped = _make(
        work, "--content", str(work / "out.txt"), "--chunk", str(work / "c1"), "--chunk",
        str(work / "c0"),
    )  # fmt: skip
    assert swapped.exit_code == 1
    assert swapped.stderr.startswith("error: receipt.chunk_mismatch: ")


def test_make_refuses_a_content_that_does_not_replay(work: Path) -> None:
    (work / "out.txt").write_bytes(CONTENT + b" (edited by hand)")
    result = _make(work, "--content", str(work / "out.txt"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: receipt.replay_mismatch: ")
    assert not (work / "out.txt.receipt.json").exists()
    undeclared = _make(work, "--content", str(work / "out.txt"), transforms=("newline_normalize",))
    assert undeclared.exit_code == 1


def test_make_refuses_unimplemented(work: Path) -> None:
    result = _make(
        work, "--content", str(work / "out.txt"), transforms=(*LOSSY, "acme.secret_sauce")
    )
    assert result.exit_code == 2  # the transforms room's exit code for transform.unimplemented
    assert result.stderr.startswith("error: transform.unimplemented: refusing to sign: ")
    assert not (work / "out.txt.receipt.json").exists()


def test_make_usage(work: Path) -> None:
    result = _make(work)  # neither --content nor --chunk
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: ")


# -- log ------------------------------------------------------------------------------------


def test_log(work: Path) -> None:
    write_json(work / "r.json", receipt())
    db = work / "log.db"
    key = work / "keys" / "adapter.key"
    assert run("log", "init", str(db), "--key", str(key), "--log-id", "receipts").exit_code == 0
    result = run("receipt", "log", str(work / "r.json"), "--log", str(db), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert_output_schema("receipt log", document)
    parsed = load_receipt((work / "r.json").read_bytes())
    assert document["index"] == 0
    assert document["leaf_hash"] == leaf_hash(jcs(receipt())).hex()
    assert document["receipt_hash"] == parsed.receipt_hash
    human = run("receipt", "log", str(work / "r.json"), "--log", str(db))
    assert human.stdout == f"1\t{document['leaf_hash']}\t{parsed.receipt_hash}\n"
    (work / "bad.json").write_text("{}")
    bad = run("receipt", "log", str(work / "bad.json"), "--log", str(db))
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: receipt.malformed: ")


# -- facts ------------------------------------------------------------------------------------


def _store(work: Path) -> tuple[Path, str]:
    """A fact store holding the source's fact; its FactHash."""
    write_json(work / "source-fact.json", SOURCE_FACT)
    db = work / "facts.db"
    assert run("facts", "add", str(db), str(work / "source-fact.json")).exit_code == 0
    return db, run("facts", "hash", str(work / "source-fact.json")).stdout.strip()


def _record(
    work: Path, db: Path, source_fact: str, name: str = "r.json", **kw: Any
) -> dict[str, Any]:
    write_json(work / "receipts" / name, receipt(**kw))
    result = run(
        "receipt", "fact", str(work / "receipts" / name), "--source-fact", source_fact,
        "--store", str(db), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    assert_output_schema("receipt fact", document)
    return document


def test_fact_and_walk(work: Path) -> None:
    db, source_fact = _store(work)
    recorded = _record(work, db, source_fact)
    assert recorded["added"] is True
    assert recorded["fact"]["derived_from"] == [source_fact]
    assert recorded["fact"]["ts"] == TS
    again = run(
        "receipt", "fact", str(work / "receipts" / "r.json"), "--source-fact", source_fact,
        "--store", str(db),
    )  # fmt: skip
    assert again.stdout == f"already stored {recorded['fact_hash']}\n"
    walk = run("facts", "walk", recorded["fact_hash"], "--store", str(db), "--format", "text")
    assert walk.exit_code == 0, walk.output
    content_sha = receipt()["content"]["sha256"]
    text = walk.stdout
    # content <- transformations <- source, in that order
    assert (
        text.index(f"urn:affidavit:content:sha256:{content_sha}")
        < text.index('"demo-lossy 1.0.0: newline_normalize -> whitespace_trim"')
        < text.index(f"derived from {source_fact}")
        < text.index(SOURCE_FACT["entity"])
    )


def test_fact_bad_source_fact(work: Path) -> None:
    write_json(work / "r.json", receipt())
    result = run(
        "receipt", "fact", str(work / "r.json"), "--source-fact", "nope", "--store",
        str(work / "f.db"),
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: ")


def _audit(db: Path, *extra: str) -> Result:
    return run("facts", "audit", "--store", str(db), *extra)


def test_audit_receipts(work: Path) -> None:
    db, source_fact = _store(work)
    recorded = _record(work, db, source_fact)
    receipts = work / "receipts"
    plain = _audit(db)
    assert plain.exit_code == 0
    assert plain.stdout == "audited 2 facts: ok\n"  # unchanged without --receipts
    result = _audit(db, "--receipts", str(receipts))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    digest = recorded["receipt_hash"]
    assert lines == [
        f"receipt ok {digest} fact {recorded['fact_hash']}",
        "receipts: 1 checked, 0 failed",
        "audited 2 facts: ok",
    ]
    as_json = json.loads(_audit(db, "--receipts", str(receipts), "--json").stdout)
    assert_output_schema("facts audit", as_json)
    assert as_json["ok"] is True
    assert as_json["receipts"]["results"][0]["ok"] is True
    keys = work / "keys"
    assert (
        _audit(db, "--receipts", str(receipts), "--receipt-trusted-keys", str(keys)).exit_code == 0
    )


def test_audit_catches_altered_receipt(work: Path) -> None:
    db, source_fact = _store(work)
    recorded = _record(work, db, source_fact)
    path = work / "receipts" / "r.json"
    document = json.loads(path.read_text())
    document["transformations"] = ["newline_normalize"]  # the altered claim
    write_json(path, document)
    result = _audit(db, "--receipts", str(work / "receipts"))
    assert result.exit_code == 1
    assert f"FAIL receipt.not_found receipt {recorded['receipt_hash']}" in result.stdout
    assert result.stdout.endswith("audited 2 facts: 1 finding(s)\n")
    as_json = json.loads(_audit(db, "--receipts", str(work / "receipts"), "--json").stdout)
    assert_output_schema("facts audit", as_json)
    assert as_json["ok"] is False
    assert as_json["receipts"]["results"][0]["code"] == "receipt.not_found"


def test_audit_names_an_altered_file_named_by_hash(work: Path) -> None:
    db, source_fact = _store(work)
    recorded = _record(work, db, source_fact)
    digest = recorded["receipt_hash"]
    named = work / "receipts" / f"{digest}.receipt.json"
    (work / "receipts" / "r.json").rename(named)
    assert _audit(db, "--receipts", str(work / "receipts")).exit_code == 0
    document = json.loads(named.read_text())
    document["adapter"]["version"] = "9.9.9"
    write_json(named, document)
    result = _audit(db, "--receipts", str(work / "receipts"), "--json")
    assert result.exit_code == 1
    check = json.loads(result.stdout)["receipts"]["results"][0]
    assert check["code"] == "receipt.hash_mismatch"
    named.write_text("{")
    result = _audit(db, "--receipts", str(work / "receipts"), "--json")
    assert json.loads(result.stdout)["receipts"]["results"][0]["code"] == "json.syntax"


def test_audit_receipt_untrusted_signature(work: Path) -> None:
    db, source_fact = _store(work)
    _record(work, db, source_fact, key=OTHER)
    result = _audit(
        db, "--receipts", str(work / "receipts"), "--receipt-trusted-keys", str(work / "keys")
    )
    assert result.exit_code == 1
    assert "FAIL receipt.key_untrusted" in result.stdout


def test_audit_fact_disagreeing_with_receipt(work: Path) -> None:
    db, source_fact = _store(work)
    recorded = _record(work, db, source_fact)
    forged_fact = dict(recorded["fact"])
    forged_fact["value"] = {"type": "text", "v": "demo-lossy 1.0.0: byte_preserving"}
    write_json(work / "forged.json", forged_fact)
    assert run("facts", "add", str(db), str(work / "forged.json")).exit_code == 0
    result = _audit(db, "--receipts", str(work / "receipts"))
    assert result.exit_code == 1
    assert "FAIL receipt.fact_mismatch" in result.stdout
    assert "receipts: 2 checked, 1 failed" in result.stdout


def test_audit_receipt_keys_need_receipts(work: Path) -> None:
    db, _ = _store(work)
    result = _audit(db, "--receipt-trusted-keys", str(work / "keys"))
    assert result.exit_code == 2


def test_unused_key_fixture_is_the_adapter() -> None:
    assert receipt()["signature"]["key_id"] != receipt(key=OTHER)["signature"]["key_id"]
    assert ADAPTER.public_key != OTHER.public_key
