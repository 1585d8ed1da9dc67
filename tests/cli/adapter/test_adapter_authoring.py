"""`affidavit adapter scaffold | lint | bump | diff` in-process: text by default, JSON shapes
(--json), exit codes, files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli._group import ADAPTER_COMMANDS
from affidavit.cli.main import affidavit
from aigentsy_verify.adapter import recompute_contract_hash, recompute_input_schema_hash
from click.testing import CliRunner, Result

from tests.cli.test_newcomer_output import _on_a_terminal
from tests.conftest import VECTORS
from tests.processes import AFFIDAVIT

CHECK_CONTRACT_HASH = "8be7185ecdce9cf43f8f1084cd37205eccf669fc47d73356c438cbf7b490b7af"
CHECK_INPUT_SCHEMA_HASH = "b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0"
SCAFFOLD = ["adapter", "scaffold", "--id", "acme.eval_suite.v0", "--version", "0.1.0"]


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    result = run(*SCAFFOLD, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    return tmp_path / "adapter_contract.json"


def _one_error_line(result: Result, code: str) -> None:
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {code}: ")


def test_scaffold_writes_the_check_value(contract: Path, tmp_path: Path) -> None:
    result = run(*SCAFFOLD, "--out", str(tmp_path / "again"), "--json")
    document = json.loads(result.stdout)
    assert list(document) == [
        "ok",
        "adapter_id",
        "out",
        "contract_hash",
        "input_schema_hash",
        "next",
    ]
    assert document["contract_hash"] == CHECK_CONTRACT_HASH
    assert document["input_schema_hash"] == CHECK_INPUT_SCHEMA_HASH
    declaration = json.loads(contract.read_text())
    assert declaration["validator_name"] == "starter_boolean_validator"
    assert declaration["contract_hash"] == recompute_contract_hash(declaration)
    assert declaration["input_schema_hash"] == recompute_input_schema_hash(declaration)
    assert run("adapter", "lint", str(contract)).exit_code == 0


def test_scaffold_refuses_to_overwrite_without_force(contract: Path, tmp_path: Path) -> None:
    contract.write_text('{"keep": "me"}')
    refused = run(*SCAFFOLD, "--out", str(tmp_path))
    _one_error_line(refused, "io.exists")
    assert contract.read_text() == '{"keep": "me"}'
    forced = run(*SCAFFOLD, "--out", str(tmp_path), "--force", "--fields", "a_b,c")
    assert forced.exit_code == 0
    assert json.loads(contract.read_text())["output_fields"] == ["a_b", "c"]


@pytest.mark.parametrize(
    "args",
    [
        ["--id", "Bad-Id"],
        ["--id", "acme.x", "--version", "1.0"],
        ["--id", "acme.x", "--fields", "a,A"],
        ["--id", "acme.x", "--fields", "a,a"],
        ["--id", "acme.x", "--fields", " , "],
    ],
)
def test_scaffold_rejects_bad_arguments(args: list[str], tmp_path: Path) -> None:
    _one_error_line(run("adapter", "scaffold", "--out", str(tmp_path), *args), "usage.invalid")
    assert not (tmp_path / "adapter_contract.json").exists()


def test_lint_ok_invalid_and_formats(contract: Path) -> None:
    ok = run("adapter", "lint", str(contract), "--json")
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)["ok"] is True
    declaration = json.loads(contract.read_text())
    declaration["adapter_version"] = "0.1.1"
    contract.write_text(json.dumps(declaration))
    bad = run("adapter", "lint", str(contract), "--format", "text")
    assert bad.exit_code == 1
    assert "error contract.hash_mismatch" in bad.stdout
    forced_json = run("adapter", "lint", str(contract), "--format", "text", "--json")
    assert json.loads(forced_json.stdout)["errors"][0].startswith("contract_hash mismatch")


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b'{"adapter_id": "a.b", "adapter_id": "c.d"}', "json.duplicate_key"),
        (b'{"adapter_version": NaN}', "json.non_finite"),
        (b"[" * 10_000 + b"]" * 10_000, "json.too_deep"),
        (b"\xff\xfe", "json.invalid_utf8"),
        (b"[1, 2]", "json.wrong_type"),
    ],
)
def test_lint_unreadable_input_is_one_line_exit_2(raw: bytes, code: str, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(raw)
    result = run("adapter", "lint", str(path))
    _one_error_line(result, code)
    assert result.stdout == ""


def test_lint_missing_file_is_exit_2(tmp_path: Path) -> None:
    _one_error_line(run("adapter", "lint", str(tmp_path / "absent.json")), "io.unreadable")


def test_lint_exit_codes_match_the_vectors() -> None:
    manifest = json.loads((VECTORS / "contracts" / "manifest.json").read_bytes())
    for vector in manifest["vectors"]:
        result = run("adapter", "lint", str(VECTORS / "contracts" / vector["input"]))
        expected = vector["expected"]["cli"]
        assert result.exit_code == expected["exit_code"], vector["id"]
        if "error_code" in expected:
            assert result.stderr.startswith(f"error: {expected['error_code']}: ")
        else:
            report = (VECTORS / "contracts" / vector["expected"]["report"]).read_bytes()
            assert json.loads(
                run(
                    "adapter", "lint", "--json", str(VECTORS / "contracts" / vector["input"])
                ).stdout
            ) == json.loads(report), vector["id"]


def _bump(path: Path, version: str, *extra: str) -> Result:
    return run("adapter", "bump", str(path), "--version", version, *extra)


def test_bump_rewrites_atomically_keeping_other_keys(contract: Path) -> None:
    declaration = json.loads(contract.read_text())
    declaration["x_extra"] = {"kept": [1, 2]}
    declaration["status"] = "active"
    contract.write_text(json.dumps(declaration))
    os.chmod(contract, 0o640)
    result = _bump(contract, "0.2.0", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["previous_version"] == "0.1.0"
    assert document["new_version"] == "0.2.0"
    bumped = json.loads(contract.read_text())
    assert list(bumped) == list(declaration)  # same keys, same order
    assert bumped["x_extra"] == {"kept": [1, 2]}
    assert bumped["_comment"] == declaration["_comment"]
    assert (
        bumped["contract_hash"] == document["new_contract_hash"] == recompute_contract_hash(bumped)
    )
    assert bumped["input_schema_hash"] == CHECK_INPUT_SCHEMA_HASH
    assert contract.stat().st_mode & 0o777 == 0o640
    assert run("adapter", "lint", str(contract)).exit_code == 0
    assert not [p for p in contract.parent.iterdir() if p.name.startswith(".adapter_contract")]


@pytest.mark.parametrize("version", ["0.1.0", "0.0.9", "0.0.99"])
def test_bump_refuses_lower_or_equal(contract: Path, version: str) -> None:
    before = contract.read_bytes()
    _one_error_line(_bump(contract, version), "contract.version_not_increasing")
    assert contract.read_bytes() == before


def test_bump_refuses_bad_version_and_invalid_contracts(contract: Path) -> None:
    _one_error_line(_bump(contract, "1.0"), "usage.invalid")
    declaration = json.loads(contract.read_text())
    declaration["allowed_policy_fields"] = ["not_an_output"]
    contract.write_text(json.dumps(declaration))
    before = contract.read_bytes()
    result = _bump(contract, "0.2.0", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error_details"][0]["code"] == (
        "contract.policy_fields_not_subset"
    )
    assert contract.read_bytes() == before


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_diff_flags_lifecycle_as_hash_irrelevant(contract: Path, tmp_path: Path) -> None:
    old = json.loads(contract.read_text())
    same = run("adapter", "diff", str(contract), str(contract), "--json")
    assert same.exit_code == 0
    assert json.loads(same.stdout)["diff_field_count"] == 0
    lifecycle = _write(tmp_path / "l.json", {**old, "status": "deprecated", "_note": "x"})
    result = run("adapter", "diff", str(contract), str(lifecycle), "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["changes"] == [
        {
            "field": "status",
            "kind": "lifecycle",
            "hash_relevant": False,
            "old": None,
            "new": "deprecated",
            "change": "added",
        }
    ]
    assert document["hash_changed"] is False


def test_diff_flags_hashed_fields(contract: Path, tmp_path: Path) -> None:
    assert _bump(contract, "0.2.0").exit_code == 0
    old = _write(
        tmp_path / "old.json", {**json.loads(contract.read_text()), "adapter_version": "0.1.0"}
    )
    result = run("adapter", "diff", str(old), str(contract))
    assert result.exit_code == 1
    assert "adapter_version [hash-impacting]" in result.stdout
    document = json.loads(run("adapter", "diff", str(old), str(contract), "--json").stdout)
    kinds = {c["field"]: c["kind"] for c in document["changes"]}
    assert kinds == {"adapter_version": "hash-impacting"}
    assert document["hash_changed"] is True
    assert document["recomputed_old_contract_hash"] == CHECK_CONTRACT_HASH
    # Python-equal but JSON-different values are a change (1 vs true).
    a = _write(tmp_path / "a.json", {"x": 1})
    b = _write(tmp_path / "b.json", {"x": True})
    assert run("adapter", "diff", str(a), str(b)).exit_code == 1


def test_adapter_group_maps_every_verb() -> None:
    assert set(ADAPTER_COMMANDS) == {
        "scaffold",
        "lint",
        "bump",
        "diff",
        "attest",
        "manifest",
        "list",
        "lifecycle",
        "pin",
        "pins",
    }
    for verb in ("scaffold", "lint", "bump", "diff"):
        helped = run("adapter", verb, "--help")
        assert helped.exit_code == 0
        assert "--json" in helped.stdout
        assert "--format" not in helped.stdout  # the deprecated alias is hidden


def test_text_on_a_terminal_and_in_a_pipe(tmp_path: Path) -> None:
    # issue 33 (was issue 22's terminal test): output never depends on whether stdout is a
    # terminal; text for people everywhere, --json (or the hidden --format json) the seed's
    # document, unchanged.
    scaffold = [AFFIDAVIT, *SCAFFOLD, "--out", str(tmp_path)]
    contract = (tmp_path / "adapter_contract.json").resolve()
    assert _on_a_terminal(scaffold, tmp_path).decode().splitlines() == [
        f"wrote {contract}",
        f"  contract_hash      {CHECK_CONTRACT_HASH}",
        f"  input_schema_hash  {CHECK_INPUT_SCHEMA_HASH}",
    ]  # as docs/start.md shows it
    linted = _on_a_terminal([AFFIDAVIT, "adapter", "lint", str(contract)], tmp_path)
    assert linted.decode().splitlines()[0] == f"{contract}: ok (acme.eval_suite.v0)"
    piped = run("adapter", "lint", str(contract))  # CliRunner: not a terminal
    assert piped.stdout.replace("\r", "") == linted.decode().replace("\r", "")
    assert run("adapter", "lint", str(contract), "--format", "text").stdout == piped.stdout
    for extra in (["--json"], ["--format", "json"]):  # --format: a hidden, deprecated alias
        document = json.loads(run("adapter", "lint", str(contract), *extra).stdout)
        assert list(document)[:3] == ["ok", "errors", "warnings"]
        again = run(*SCAFFOLD, "--out", str(tmp_path), "--force", *extra)
        assert json.loads(again.stdout)["contract_hash"] == CHECK_CONTRACT_HASH
