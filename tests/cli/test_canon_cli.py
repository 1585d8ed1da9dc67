"""`affidavit canon` and `affidavit hash`: bytes to stdout, one-line errors with exit code 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rfc8785
from affidavit.cli.main import affidavit
from click.testing import CliRunner

DOC = {"b": 1.0, "a": ["é", 1e21]}


@pytest.fixture
def doc_file(tmp_path: Path) -> Path:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC))
    return path


def test_canon_writes_exact_bytes_for_each_form(doc_file: Path) -> None:
    runner = CliRunner()
    jcs = runner.invoke(affidavit, ["canon", str(doc_file)])
    assert jcs.exit_code == 0
    assert jcs.stdout_bytes == rfc8785.dumps(DOC)
    compact = runner.invoke(affidavit, ["canon", "--form", "py-compact", str(doc_file)])
    assert compact.stdout_bytes == json.dumps(DOC, sort_keys=True, separators=(",", ":")).encode()
    spaced = runner.invoke(affidavit, ["canon", "--form", "py-spaced", str(doc_file)])
    assert spaced.stdout_bytes == json.dumps(DOC, sort_keys=True).encode()


def test_hash_reads_stdin_and_prints_hex() -> None:
    result = CliRunner().invoke(
        affidavit, ["hash", "--form", "py-compact", "-"], input=json.dumps(DOC)
    )
    assert result.exit_code == 0
    expected = hashlib.sha256(
        json.dumps(DOC, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert result.stdout == expected + "\n"


def test_json_output_is_one_document(doc_file: Path) -> None:
    result = CliRunner().invoke(affidavit, ["hash", "--json", str(doc_file)])
    document = json.loads(result.stdout)
    assert document == {
        "ok": True,
        "form": "jcs",
        "sha256": hashlib.sha256(rfc8785.dumps(DOC)).hexdigest(),
    }
    canon = json.loads(CliRunner().invoke(affidavit, ["canon", "--json", str(doc_file)]).stdout)
    assert canon["canonical"].encode() == rfc8785.dumps(DOC)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"a": 1, "a": 2}', "json.duplicate_key"),
        (b'{"a": NaN}', "json.non_finite"),
        (b"[" * 10_000 + b"]" * 10_000, "json.too_deep"),
        (b"[9007199254740993]", "canonical.unsafe_integer"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, content: bytes, code: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    result = CliRunner().invoke(affidavit, ["hash", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {code}: ")


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(affidavit, ["canon", str(tmp_path / "absent.json")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: io.unreadable: ")


def test_unknown_form_is_a_usage_error(doc_file: Path) -> None:
    result = CliRunner().invoke(affidavit, ["canon", "--form", "xml", str(doc_file)])
    assert result.exit_code == 2
