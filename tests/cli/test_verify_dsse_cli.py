"""``affidavit verify dsse``: key options, steps, verdicts, exit codes, --json and its schema."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.dsse.envelope import envelope_json
from click.testing import CliRunner, Result

from tests.schemas import assert_output_schema
from tests.verify.dsse.dsse_fixtures import (
    ALICE,
    BOB,
    MALLORY,
    envelope_bytes,
    payload_of,
    sign,
    signed_statement,
    statement,
)


def _run(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(affidavit, ["verify", "dsse", *args], input=stdin)


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    result = _run(*args, "--json")
    document = json.loads(result.stdout)
    assert_output_schema("verify dsse", document)
    return result.exit_code, document


@pytest.fixture
def envelope_file(tmp_path: Path) -> Path:
    path = tmp_path / "statement.dsse.json"
    path.write_bytes(envelope_bytes(signed_statement(keys=(ALICE,))))
    return path


def _write(tmp_path: Path, data: bytes | dict[str, Any], name: str = "e.json") -> str:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return str(path)


def test_verified_human(envelope_file: Path) -> None:
    result = _run(str(envelope_file), "--public-key-base64", ALICE.public_key.b64)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"{envelope_file}: verified"
    assert [line.split()[:2] for line in lines[1:4]] == [
        ["envelope", "ok"],
        ["signatures", "ok"],
        ["statement", "ok"],
    ]
    assert "predicateType: https://example.com/test-predicate/v1" in result.stdout


def test_verified_json(envelope_file: Path) -> None:
    code, document = _json(str(envelope_file), "--public-key-base64", ALICE.public_key.b64)
    assert code == 0
    assert document["verdict"] == "verified"
    assert document["verified"] is True
    assert document["keys_verified"] == [ALICE.public_key.b64]
    assert document["signatures"] == [
        {"index": 0, "keyid": "", "verified_by": [ALICE.public_key.b64]}
    ]
    assert document["statement"]["subjects"][0]["name"] == "artifact"
    assert [s["status"] for s in document["steps"]] == ["ok", "ok", "ok"]


def test_stdin(envelope_file: Path) -> None:
    result = _run(
        "-", "--public-key-base64", ALICE.public_key.b64, stdin=envelope_file.read_bytes()
    )
    assert result.exit_code == 0, result.output


def test_trusted_keys_folder_and_threshold(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "alice.pub").write_text(ALICE.public_key.b64 + "\n")
    (keys / "bob.pub").write_text(BOB.public_key.b64 + "\n")
    both = _write(tmp_path, envelope_bytes(sign(payload_of(statement()), [ALICE, BOB])))
    assert _run(both, "--trusted-keys", str(keys), "--threshold", "2").exit_code == 0
    one = _write(tmp_path, envelope_bytes(sign(payload_of(statement()), [ALICE, ALICE])), "1.json")
    code, document = _json(one, "--trusted-keys", str(keys), "--threshold", "2")
    assert code == 1
    assert document["code"] == "dsse.threshold_not_met"
    assert [s["status"] for s in document["steps"]] == ["ok", "failed", "not_checked"]


@pytest.mark.parametrize(
    "args",
    [
        (),  # neither key option
        ("--public-key-base64", ALICE.public_key.b64, "--trusted-keys", "."),  # both
        ("--public-key-base64", ALICE.public_key.b64, "--threshold", "0"),
        ("--public-key-base64", ALICE.public_key.b64, "--threshold", "2"),
    ],
)
def test_usage_errors(envelope_file: Path, args: tuple[str, ...]) -> None:
    result = _run(str(envelope_file), *args)
    assert result.exit_code == 2
    assert "error: usage.invalid:" in result.stderr


def test_bad_key_is_exit_2(envelope_file: Path) -> None:
    result = _run(str(envelope_file), "--public-key-base64", "AAAA")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: key.")


def _tampered(kind: str) -> dict[str, Any]:
    envelope = signed_statement(keys=(ALICE,))
    if kind == "payload":
        envelope = dataclasses.replace(
            envelope, payload=envelope.payload.replace(b"PASSED", b"PASSEE")
        )
    elif kind == "sig":
        sig = bytearray(envelope.signatures[0].sig)
        sig[0] ^= 0x80
        envelope = dataclasses.replace(
            envelope, signatures=(dataclasses.replace(envelope.signatures[0], sig=bytes(sig)),)
        )
    elif kind == "payload_type":
        envelope = dataclasses.replace(envelope, payload_type="application/json")
    elif kind == "untrusted":
        envelope = signed_statement(keys=(MALLORY,))
    return envelope_json(envelope)


@pytest.mark.parametrize("kind", ["payload", "sig", "payload_type", "untrusted"])
def test_tampered_envelopes_fail_with_exit_1(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path, _tampered(kind))
    code, document = _json(path, "--public-key-base64", ALICE.public_key.b64)
    assert code == 1
    assert document["code"] == "dsse.signature_unverified"
    assert document["verdict"] == "failed"
    human = _run(path, "--public-key-base64", ALICE.public_key.b64)
    assert human.exit_code == 1
    assert "failed at signatures: dsse.signature_unverified" in human.stdout


def test_payload_type_other_than_in_toto_fails_closed(tmp_path: Path) -> None:
    envelope = sign(payload_of(statement()), [ALICE], payload_type="application/json")
    code, document = _json(
        _write(tmp_path, envelope_bytes(envelope)), "--public-key-base64", ALICE.public_key.b64
    )
    assert code == 1
    assert document["code"] == "dsse.payload_type_unsupported"
    assert document["statement"] is None


@pytest.mark.parametrize(
    ("document", "code"),
    [
        (statement(_type="https://in-toto.io/Statement/v0.1"), "statement.version_unsupported"),
        (statement(subject=[]), "statement.subject_invalid"),
        (statement(predicate=[1]), "statement.predicate_invalid"),
    ],
)
def test_signed_non_statement_fails(tmp_path: Path, document: Any, code: str) -> None:
    envelope = sign(payload_of(document), [ALICE])
    path = _write(tmp_path, envelope_bytes(envelope))
    exit_code, report = _json(path, "--public-key-base64", ALICE.public_key.b64)
    assert exit_code == 1
    assert report["code"] == code
    assert [s["status"] for s in report["steps"]] == ["ok", "ok", "failed"]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{", "json.syntax"),
        (b'{"payload": "", "payloadType": "t", "signatures": []}', "dsse.no_signatures"),
        (b'{"payload": "!", "payloadType": "t", "signatures": [{"sig": ""}]}', "dsse.bad_base64"),
        (b"[]", "dsse.malformed"),
    ],
)
def test_unreadable_envelope_is_exit_2(tmp_path: Path, data: bytes, code: str) -> None:
    path = _write(tmp_path, data)
    result = _run(path, "--public-key-base64", ALICE.public_key.b64)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {code}: ")
    exit_code, document = _json(path, "--public-key-base64", ALICE.public_key.b64)
    assert exit_code == 2
    assert document["verdict"] == "unreadable"
    assert document["code"] == code
    assert [s["name"] for s in document["steps"]] == ["envelope"]


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope.json"), "--public-key-base64", ALICE.public_key.b64)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: io.unreadable:")


def test_bundle_with_a_predicate_type_we_cannot_cross_check(
    envelope_file: Path, tmp_path: Path
) -> None:
    bundle = _write(tmp_path, {"deal_id": "d"}, "bundle.json")
    result = _run(
        str(envelope_file), "--public-key-base64", ALICE.public_key.b64, "--bundle", bundle
    )
    assert result.exit_code == 2
    assert "error: usage.invalid:" in result.stderr


def test_an_envelope_over_the_limit_is_unreadable(
    envelope_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("affidavit.verify.dsse.envelope.MAX_ENVELOPE_BYTES", 64)
    code, document = _json(str(envelope_file), "--public-key-base64", ALICE.public_key.b64)
    assert (code, document["verdict"], document["code"]) == (2, "unreadable", "dsse.too_large")
    assert [s["name"] for s in document["steps"]] == ["parse"]
    text = _run(str(envelope_file), "--public-key-base64", ALICE.public_key.b64)
    assert text.stderr.startswith(f"error: dsse.too_large: {envelope_file}: larger than 64 bytes")
