"""Cross-checking a decision Statement against its bundle (library and ``verify dsse --bundle``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.dsse import predicates
from affidavit.verify.dsse.statement import parse_statement
from affidavit.verify.dsse.verify import _same_json, cross_check_bundle
from affidavit.verify.json.strict import loads
from click.testing import CliRunner

from tests.conftest import raises_code
from tests.schemas import assert_output_schema
from tests.verify.dsse.dsse_fixtures import ALICE, BOB, envelope_bytes, payload_of, sign, statement

ROOT = Path(__file__).resolve().parents[3]
BUNDLE_FILE = ROOT / "vectors" / "bundles" / "stamped-accepted-3.0.0.json"


@pytest.fixture(scope="module")
def bundle() -> dict[str, Any]:
    document: dict[str, Any] = loads(BUNDLE_FILE.read_bytes())
    return document


def decision_statement(bundle: dict[str, Any]) -> dict[str, Any]:
    """The decision Statement of ``bundle``, built by the predicate builders."""
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [predicates.subject_for_bundle(bundle)],
        "predicateType": predicates.DECISION_V1,
        "predicate": predicates.decision_predicate(bundle),
    }


def test_the_builders_subject_is_the_recomputed_hash(bundle: dict[str, Any]) -> None:
    subject = predicates.subject_for_bundle(bundle)
    assert subject["name"] == bundle["deal_id"]
    assert subject["digest"]["sha256"] == bundle_hash(bundle)


def test_a_matching_statement(bundle: dict[str, Any]) -> None:
    cross_check_bundle(parse_statement(payload_of(decision_statement(bundle))), bundle)


def _check(document: dict[str, Any], bundle: Any) -> None:
    cross_check_bundle(parse_statement(payload_of(document)), bundle)


def test_subject_digest_of_another_bundle(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["subject"][0]["digest"]["sha256"] = "0" * 64
    with raises_code("statement.subject_mismatch") as caught:
        _check(document, bundle)
    assert caught.value.details["expected"] == bundle_hash(bundle)


def test_a_changed_bundle_no_longer_matches(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    changed = copy.deepcopy(bundle)
    changed["events"][0]["payload"] = {"forged": True}
    with raises_code("statement.subject_mismatch"):
        _check(document, changed)


def test_the_recorded_bundle_hash_is_not_trusted(bundle: dict[str, Any]) -> None:
    """A subject naming the hash the bundle *records* (not what its content hashes to) fails."""
    changed = copy.deepcopy(bundle)
    changed["proofs"] = []  # content changed, recorded bundle_hash left as it was
    document = decision_statement(bundle)
    assert document["subject"][0]["digest"]["sha256"] == changed["bundle_hash"]
    with raises_code("statement.subject_mismatch"):
        _check(document, changed)


def test_subject_name_is_the_deal_id(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["subject"][0]["name"] = "another-deal"
    with raises_code("statement.subject_mismatch"):
        _check(document, bundle)


def test_exactly_one_subject(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["subject"].append(copy.deepcopy(document["subject"][0]))
    with raises_code("statement.subject_mismatch"):
        _check(document, bundle)


def test_a_subject_field_the_builder_would_not_write(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["subject"][0]["uri"] = "https://evil.example/other"
    with raises_code("statement.subject_mismatch"):
        _check(document, bundle)


def test_predicate_changed(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["predicate"]["smuggled"] = True
    with raises_code("statement.predicate_mismatch") as caught:
        _check(document, bundle)
    assert caught.value.details["differs_at"] == "predicate.smuggled"
    assert caught.value.exit_code == 1


def test_predicate_missing(bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    del document["predicate"]
    with raises_code("statement.predicate_mismatch"):
        _check(document, bundle)


def test_another_predicate_type_cannot_be_cross_checked(bundle: dict[str, Any]) -> None:
    with raises_code("usage.invalid"):
        _check(statement(), bundle)


@pytest.mark.parametrize("source", [[], "x", {"deal_id": 1}, {}])
def test_a_bundle_that_is_not_one(bundle: dict[str, Any], source: Any) -> None:
    with raises_code("bundle.malformed"):
        _check(decision_statement(bundle), source)


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (True, 1, False),
        (1, 1.0, True),
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True),
        ({"a": [1]}, {"a": [1, 2]}, False),
        ({"a": 1}, {"b": 1}, False),
        ("1", 1, False),
        (None, {}, False),
    ],
)
def test_json_equality(left: Any, right: Any, same: bool) -> None:
    assert _same_json(left, right) is same


# -- the CLI ---------------------------------------------------------------------------------------


def _cli(tmp_path: Path, document: dict[str, Any], bundle_path: Path) -> tuple[int, dict[str, Any]]:
    envelope = tmp_path / "decision.dsse.json"
    envelope.write_bytes(envelope_bytes(sign(payload_of(document), [ALICE])))
    args = ["verify", "dsse", str(envelope), "--public-key-base64", ALICE.public_key.b64]
    result = CliRunner().invoke(affidavit, [*args, "--bundle", str(bundle_path), "--json"])
    report = json.loads(result.stdout)
    assert_output_schema("verify dsse", report)
    return result.exit_code, report


def test_cli_cross_check_ok(tmp_path: Path, bundle: dict[str, Any]) -> None:
    code, report = _cli(tmp_path, decision_statement(bundle), BUNDLE_FILE)
    assert code == 0, report
    assert report["steps"][-1] == {"name": "cross_check", "status": "ok"}


def test_cli_cross_check_mismatch(tmp_path: Path, bundle: dict[str, Any]) -> None:
    document = decision_statement(bundle)
    document["predicate"]["smuggled"] = 1
    code, report = _cli(tmp_path, document, BUNDLE_FILE)
    assert code == 1
    assert report["code"] == "statement.predicate_mismatch"
    assert [s["status"] for s in report["steps"]] == ["ok", "ok", "ok", "failed"]


def test_cli_cross_check_against_another_bundle(tmp_path: Path, bundle: dict[str, Any]) -> None:
    other = ROOT / "vectors" / "bundles" / "stamped-rejected-3.0.0.json"
    code, report = _cli(tmp_path, decision_statement(bundle), other)
    assert code == 1
    assert report["code"] == "statement.subject_mismatch"


@pytest.mark.parametrize("name", sorted(p.name for p in BUNDLE_FILE.parent.glob("stamped-*.json")))
def test_every_stamped_vector_round_trips(name: str) -> None:
    """The decision Statement built from each stamped vector bundle cross-checks against it."""
    source: dict[str, Any] = loads((BUNDLE_FILE.parent / name).read_bytes())
    _check(decision_statement(source), source)


def _rehashed(bundle: dict[str, Any]) -> dict[str, Any]:
    """``bundle`` with its recorded ``bundle_hash`` made consistent again with its content."""
    bundle["bundle_hash"] = bundle_hash(bundle)
    return bundle


def test_a_bundle_inconsistent_with_itself(tmp_path: Path, bundle: dict[str, Any]) -> None:
    """The subject is the bundle's content hash, but the bundle records another: the bundle is
    no source to vouch for the Statement (bundle.hash_mismatch, exit 1)."""
    stale = copy.deepcopy(bundle)
    stale["bundle_hash"] = "0" * 64
    document = decision_statement(bundle)
    assert document["subject"][0]["digest"]["sha256"] == bundle_hash(stale)
    with raises_code("bundle.hash_mismatch"):
        _check(document, stale)
    path = tmp_path / "stale.json"
    path.write_text(json.dumps(stale))
    code, report = _cli(tmp_path, document, path)
    assert code == 1
    assert report["code"] == "bundle.hash_mismatch"
    assert report["steps"][-1]["status"] == "failed"


def test_a_bundle_without_a_decision_is_bad_input(tmp_path: Path, bundle: dict[str, Any]) -> None:
    """A subject that matches a bundle recording no decision: the --bundle is not a source a
    decision Statement can be about (predicate.decision_missing, exit 2)."""
    undecided = copy.deepcopy(bundle)
    for event in undecided["events"]:
        if isinstance(event.get("payload"), dict):
            event["payload"].pop("decision", None)
    _rehashed(undecided)
    document = decision_statement(bundle)
    document["subject"] = [predicates.subject_for_bundle(undecided)]
    with raises_code("predicate.decision_missing"):
        _check(document, undecided)
    path = tmp_path / "undecided.json"
    path.write_text(json.dumps(undecided))
    envelope = tmp_path / "decision.dsse.json"
    envelope.write_bytes(envelope_bytes(sign(payload_of(document), [ALICE])))
    args = ["verify", "dsse", str(envelope), "--public-key-base64", ALICE.public_key.b64]
    result = CliRunner().invoke(affidavit, [*args, "--bundle", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: predicate.decision_missing: ")


def test_cli_bundle_not_json_is_bad_input(tmp_path: Path, bundle: dict[str, Any]) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(b'{"deal_id": "a", "deal_id": "b"}')
    envelope = tmp_path / "decision.dsse.json"
    envelope.write_bytes(envelope_bytes(sign(payload_of(decision_statement(bundle)), [ALICE])))
    args = ["verify", "dsse", str(envelope), "--public-key-base64", ALICE.public_key.b64]
    result = CliRunner().invoke(affidavit, [*args, "--bundle", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: json.duplicate_key: ")


def test_cli_cross_check_not_checked_when_signatures_fail(
    tmp_path: Path, bundle: dict[str, Any]
) -> None:
    envelope = tmp_path / "decision.dsse.json"
    envelope.write_bytes(envelope_bytes(sign(payload_of(decision_statement(bundle)), [BOB])))
    args = ["verify", "dsse", str(envelope), "--public-key-base64", ALICE.public_key.b64]
    result = CliRunner().invoke(affidavit, [*args, "--bundle", str(BUNDLE_FILE), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert_output_schema("verify dsse", report)
    assert [s["status"] for s in report["steps"]] == ["ok", "failed", "not_checked", "not_checked"]
    assert report["code"] == "dsse.signature_unverified"
