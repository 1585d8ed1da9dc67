"""``affidavit verify anchor``: exit codes, text and --json (validated against its schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.schemas import assert_output_schema
from tests.verify.anchor_tsa import (
    LOG_KEY,
    OPENSSL,
    LocalTsa,
    TestCa,
    receipt_for,
    signed_sth,
    sth_bytes,
)


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> LocalTsa:
    if OPENSSL is None:
        pytest.skip("the openssl CLI is not installed")
    return TestCa(tmp_path_factory.mktemp("cli-pki")).tsa("cli-tsa")


@pytest.fixture(scope="module")
def receipt(tsa: LocalTsa) -> Path:
    sth = signed_sth()
    path = tsa.folder / "receipt.json"
    path.write_text(json.dumps(receipt_for(sth, tsa.stamp(sth_bytes(sth)))))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["verify", "anchor", *args])


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    result = _run(*args, "--json")
    document = json.loads(result.stdout)
    assert_output_schema("verify anchor", document)
    return result.exit_code, document


def _write(tmp_path: Path, document: Any, name: str = "r.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def test_verified_with_tsa_cert_and_ca(receipt: Path, tsa: LocalTsa) -> None:
    args = [str(receipt), "--tsa-cert", str(tsa.cert), "--ca-cert", str(tsa.ca.cert)]
    text = _run(*args, "--log-key-base64", LOG_KEY.public_key.b64)
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith("verified: anchor anchor_7 time-stamped at ")
    assert "by CN=cli-tsa (sha256 imprint, chained to CN=Affidavit Test CA)" in text.stdout
    assert "note:" not in text.stdout
    plain = _run(*args)
    assert plain.exit_code == 0
    assert plain.stdout.splitlines()[1] == (
        "  note: no log key given: the tree head's own signature is not checked"
    )
    code, document = _json(*args)
    assert code == 0
    assert document["verdict"] == "verified"
    assert document["token"]["tsa_subject"] == "CN=cli-tsa"


def test_without_tsa_cert_unanchored_exit_1(receipt: Path) -> None:
    text = _run(str(receipt))
    assert text.exit_code == 1
    assert text.stdout.startswith("unanchored: anchor anchor_7: anchor.token_unchecked: ")
    assert "  timestamp_token          not_checked" in text.stdout
    code, document = _json(str(receipt))
    assert (code, document["verdict"], document["code"]) == (
        1,
        "unanchored",
        "anchor.token_unchecked",
    )
    assert document["token"] is None


def test_tampered_receipt_exit_1_with_the_code(
    receipt: Path, tsa: LocalTsa, tmp_path: Path
) -> None:
    document = json.loads(receipt.read_text())
    document["sth"]["tree_size"] = 8
    path = _write(tmp_path, document)
    text = _run(path, "--tsa-cert", str(tsa.cert))
    assert text.exit_code == 1
    assert "anchor.digest_mismatch" in text.stdout.splitlines()[0]
    code, report = _json(path, "--tsa-cert", str(tsa.cert))
    failed = {s["name"]: s["code"] for s in report["steps"] if s["status"] == "failed"}
    assert failed == {
        "sth_digest": "anchor.digest_mismatch",
        "timestamp_token": "anchor.imprint_mismatch",
    }
    assert code == 1


def test_other_tsa_cert_is_a_mismatch(receipt: Path, tsa: LocalTsa) -> None:
    other = TestCa(tsa.folder / "other-ca").tsa("other")
    code, document = _json(str(receipt), "--tsa-cert", str(other.cert))
    assert (code, document["code"]) == (1, "anchor.tsa_cert_mismatch")


@pytest.mark.parametrize(
    ("content", "code"),
    [("{", "json.syntax"), ("[]", "anchor.malformed"), ('{"sth": {}}', "anchor.malformed")],
)
def test_unreadable_receipt_one_line_exit_2(tmp_path: Path, content: str, code: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    text = _run(str(path))
    assert text.exit_code == 2
    assert text.stdout == ""
    assert text.stderr.startswith(f"error: {code}: ")
    assert len(text.stderr.strip().splitlines()) == 1
    exit_code, document = _json(str(path))
    assert (exit_code, document["verdict"], document["code"]) == (2, "unreadable", code)


def test_bad_certificate_or_key_is_usage_exit_2(receipt: Path, tsa: LocalTsa) -> None:
    not_cert = _run(str(receipt), "--tsa-cert", str(tsa.key))
    assert not_cert.exit_code == 2
    assert not_cert.stderr.startswith("error: anchor.tsa_cert_unreadable: ")
    bad_key = _run(str(receipt), "--log-key-base64", "AAAA")
    assert bad_key.exit_code == 2
    assert bad_key.stderr.startswith("error: key.")
    ca_only = _run(str(receipt), "--ca-cert", str(tsa.ca.cert))
    assert ca_only.exit_code == 2
    assert ca_only.stderr.startswith("error: usage.invalid: ")
    not_a_key = _run(str(receipt), "--log-key", str(tsa.cert))  # a certificate, not a key
    assert not_a_key.exit_code == 2
    assert not_a_key.stderr.startswith(f"error: key.unrecognized: {tsa.cert}: ")
    missing = _run(str(receipt), "--tsa-cert", str(tsa.folder / "absent.pem"))
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: io.unreadable: ")


def test_log_key_file_and_verbose(receipt: Path, tsa: LocalTsa, tmp_path: Path) -> None:
    key_file = tmp_path / "log.pub"
    key_file.write_text(LOG_KEY.public_key.b64 + "\n")
    text = _run(str(receipt), "--tsa-cert", str(tsa.cert), "--log-key", str(key_file), "-v")
    assert text.exit_code == 0, text.output
    assert "  sth_signature            ok" in text.stdout
    assert "note:" not in text.stdout


@pytest.mark.parametrize(
    ("window", "status", "code"),
    [
        # the receipt's tree head is dated 2026-03-01T12:00:00Z (tests/verify/anchor_tsa.py)
        ({"valid_from": "2026-01-01T00:00:00Z", "valid_until": "2026-06-01T00:00:00Z"}, "ok", None),
        ({"valid_until": "2026-03-01T12:00:00Z"}, "failed", "treehead.key_outside_window"),
        ({"valid_from": "2026-03-01T13:00:00+01:00"}, "ok", None),  # the same instant: inside
        ({"valid_from": "2026-03-01T12:00:01Z"}, "failed", "treehead.key_outside_window"),
    ],
)
def test_windowed_log_key_is_honoured(
    *,
    receipt: Path,
    tsa: LocalTsa,
    tmp_path: Path,
    window: dict[str, str],
    status: str,
    code: str | None,
) -> None:
    """A log key document with a validity window (docs/formats.md §4) verifies only tree heads
    dated inside it, as ``verify bundle`` does; offsets are compared as instants."""
    key_file = tmp_path / "log.json"
    key_file.write_text(json.dumps({"public_key_base64": LOG_KEY.public_key.b64, **window}))
    exit_code, document = _json(
        str(receipt), "--tsa-cert", str(tsa.cert), "--log-key", str(key_file)
    )
    step = next(s for s in document["steps"] if s["name"] == "sth_signature")
    assert step["status"] == status
    assert step.get("code") == code
    assert exit_code == (0 if status == "ok" else 1)


def test_listed_in_verify_help() -> None:
    result = CliRunner().invoke(affidavit, ["verify", "--help"])
    assert result.exit_code == 0
    assert "anchor" in result.stdout
