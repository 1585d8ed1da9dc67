"""Messages name things, not Python values (issue 33): each mistake is one line
``error: <code>: ...`` on stderr naming the file or the thing, and exit 2 (style.md §11)."""

from __future__ import annotations

import re
from pathlib import Path

from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.conftest import ROOT


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(affidavit, [str(a) for a in args])


def one_line(result: Result, code: str) -> str:
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert re.fullmatch(rf"error: {re.escape(code)}: [^\n]+\n", result.stderr), result.stderr
    return result.stderr


def _publisher(tmp_path: Path) -> tuple[Path, Path]:
    made = run("keys", "generate", "--dir", tmp_path / "keys", "--publisher-id", "acme",
               "--key-id", "k1")  # fmt: skip
    assert made.exit_code == 0, made.output
    return tmp_path / "keys" / "k1.key", tmp_path / "keys" / "acme-publisher.json"


def test_a_manifest_entry_given_as_a_manifest_is_called_an_entry(tmp_path: Path) -> None:
    key, document = _publisher(tmp_path)
    assert run("adapter", "scaffold", "--id", "acme.x.v0", "--out", tmp_path).exit_code == 0
    entry = tmp_path / "entry.json"
    attested = run("adapter", "attest", tmp_path / "adapter_contract.json", "--key", key,
                   "--out", entry)  # fmt: skip
    assert attested.exit_code == 0, attested.output
    for trust in ([], ["--publisher-doc", document]):
        line = one_line(run("adapter", "manifest", "verify", entry, *trust), "manifest.invalid")
        assert f"{entry}: a manifest entry" in line
        assert "None" not in line
        assert "adapter manifest verify-entry" in line


def test_facts_add_names_the_file_that_is_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"a":\n')
    for args in (["--store", tmp_path / "f.db", bad], [tmp_path / "f.db", bad]):
        line = one_line(run("facts", "add", *args), "json.syntax")
        assert line.startswith(f"error: json.syntax: {bad}: ")


def test_log_init_on_the_same_log_says_it_exists(tmp_path: Path) -> None:
    key, _ = _publisher(tmp_path)
    db = tmp_path / "log.db"
    assert run("log", "init", db, "--key", key, "--log-id", "acme/log").exit_code == 0
    leaf = tmp_path / "leaf.txt"
    leaf.write_text("one\n")
    assert run("log", "append", db, leaf).exit_code == 0
    assert run("log", "head", db).exit_code == 0  # a signed head: the key's state beside it
    line = one_line(run("log", "init", db, "--key", key, "--log-id", "acme/log"), "log.exists")
    assert "already exists" in line
    assert "fork" not in line
    # A new, empty database under the same key and log ID is still the fork it was.
    fork = run("log", "init", tmp_path / "other.db", "--key", key, "--log-id", "acme/log")
    assert "fork" in one_line(fork, "log.state_mismatch")


def test_the_unanchored_hint_lists_the_publisher_document() -> None:
    bundle = ROOT / "vectors" / "bundles" / "stamped-accepted-2.0.0.json"
    result = run("verify", "bundle", bundle)
    assert result.exit_code == 1, result.output
    hints = [line for line in result.output.splitlines() if "give a key you trust" in line]
    assert hints, result.output
    assert all("--publisher-doc FILE" in line for line in hints)
