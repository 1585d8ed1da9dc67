"""``affidavit export intoto``: kinds, --json and its schema, refusals with exact codes, atomic
output that our verifier and securesystemslib accept."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import private_key_pem
from affidavit.cli.main import affidavit
from affidavit.verify.dsse import predicates
from click.testing import CliRunner, Result

from tests.attest.intoto.helpers import (
    BUNDLES,
    KEY,
    assert_predicate_schema,
    entry_document,
    payload_of,
    report,
    sslib_verify,
)
from tests.schemas import assert_output_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def key_file(tmp_path: Path) -> str:
    path = tmp_path / "signer.key"
    path.write_bytes(private_key_pem(KEY))
    os.chmod(path, 0o600)
    return str(path)


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["export", "intoto", *args])


def _write(tmp_path: Path, document: Any, name: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def _sources(tmp_path: Path) -> dict[str, str]:
    return {
        "bundle": str(BUNDLES / "stamped-accepted-3.0.0.json"),
        "entry": _write(tmp_path, entry_document(), "entry.json"),
        "audit": _write(tmp_path, report(), "audit.json"),
    }


SCHEMA_OF = {"bundle": "decision-v1", "entry": "manifest-entry-v1", "audit": "fact-audit-v1"}


@pytest.mark.parametrize("kind", ["bundle", "entry", "audit"])
def test_export_each_kind(tmp_path: Path, key_file: str, kind: str) -> None:
    out = tmp_path / f"{kind}.intoto.json"
    result = _run(_sources(tmp_path)[kind], "--key", key_file, "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert_output_schema("export intoto", document)
    envelope = json.loads(out.read_text(encoding="ascii"))
    statement = payload_of(envelope)
    assert document["kind"] == kind
    assert document["predicateType"] == statement["predicateType"]
    assert document["subject"] == statement["subject"]
    assert document["keyid"] == envelope["signatures"][0]["keyid"]
    assert document["out"] == str(out)
    assert_predicate_schema(SCHEMA_OF[kind], statement["predicate"])
    sslib_verify(envelope, KEY.public_key.raw)


def test_export_is_deterministic_and_one_line(tmp_path: Path, key_file: str) -> None:
    source = _sources(tmp_path)["bundle"]
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    assert _run(source, "--key", key_file, "--out", str(first)).exit_code == 0
    assert _run(source, "--key", key_file, "--out", str(second)).exit_code == 0
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes().count(b"\n") == 1


def test_human_output(tmp_path: Path, key_file: str) -> None:
    out = tmp_path / "e.json"
    result = _run(_sources(tmp_path)["bundle"], "--key", key_file, "--out", str(out))
    assert result.stdout == (
        f"wrote {out}: {predicates.DECISION_V1} about accepted sha256:"
        "75105eedf281abceeeb5fa9557c0853c1bc8d9ab43c01e5bf1038e2f804a1ffa\n"
    )


def test_a_real_facts_audit_report_exports(tmp_path: Path, key_file: str) -> None:
    audit = CliRunner().invoke(
        affidavit,
        ["facts", "audit", "--store", str(ROOT / "vectors/lineage/store.jsonl"), "--json"],
    )
    assert audit.exit_code == 0, audit.output
    source = _write(tmp_path, json.loads(audit.stdout), "report.json")
    out = tmp_path / "audit.intoto.json"
    result = _run(source, "--key", key_file, "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kind"] == "audit"
    assert_predicate_schema("fact-audit-v1", payload_of(json.loads(out.read_text()))["predicate"])


def test_verify_dsse_accepts_the_export_with_the_bundle(tmp_path: Path, key_file: str) -> None:
    source = _sources(tmp_path)["bundle"]
    out = tmp_path / "e.json"
    assert _run(source, "--key", key_file, "--out", str(out)).exit_code == 0
    verified = CliRunner().invoke(
        affidavit,
        ["verify", "dsse", str(out), "--public-key-base64", KEY.public_key.b64, "--bundle", source],
    )
    assert verified.exit_code == 0, verified.output


def test_a_bundle_failing_its_own_hash_is_exit_1_and_nothing_written(
    tmp_path: Path, key_file: str
) -> None:
    out = tmp_path / "e.json"
    result = _run(
        str(BUNDLES / "tamper-payload-without-rehash.json"), "--key", key_file, "--out", str(out)
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: bundle.hash_mismatch: ")
    assert not out.exists()


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ({"hello": "world"}, "predicate.kind_unknown"),
        ([1, 2], "predicate.kind_unknown"),
        ({"deal_id": "d", "events": [], "bundle_hash": "0", "ok": True, "facts": 1,
          "findings": [], "info": []}, "predicate.kind_ambiguous"),
    ],
)  # fmt: skip
def test_unknown_and_ambiguous_kinds_are_exit_2(
    tmp_path: Path, key_file: str, document: Any, code: str
) -> None:
    out = tmp_path / "e.json"
    result = _run(_write(tmp_path, document, "s.json"), "--key", key_file, "--out", str(out))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {code}: ")
    assert not out.exists()


def test_kind_overrides_detection(tmp_path: Path, key_file: str) -> None:
    out = tmp_path / "e.json"
    bundle = _sources(tmp_path)["bundle"]
    result = _run(bundle, "--key", key_file, "--out", str(out), "--kind", "entry")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: entry.invalid: ")


def test_bad_json_and_missing_key(tmp_path: Path, key_file: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1, "a": 2}')
    result = _run(str(bad), "--key", key_file, "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: json.")
    source = _sources(tmp_path)["bundle"]
    missing = _run(source, "--key", str(tmp_path / "nope.key"), "--out", str(tmp_path / "o"))
    assert missing.exit_code == 2
