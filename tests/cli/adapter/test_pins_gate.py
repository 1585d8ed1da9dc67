"""`affidavit adapter pins check`, the CI gate, against the holes a red-team pass found.

1. The README's gate (`--require-signed --manifest M --publisher-doc D`) must scan the local
   contracts (the pin file's folder by default); a tampered or malformed contract fails (exit 1).
2. Lifecycle comes from the signed manifest, never from editable pin text; inspection-only pins
   pass only with `--allow-inspection-only`; `--max-age` refuses a manifest signed too long ago.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    write_json,
    write_key_files,
)

KEY_B64 = demo_key().public_key.b64
ID, VERSION = "acme.eval_suite.v0", "0.1.0"
HASH = make_contract()["contract_hash"]
CONTRACT_NAME = f"{ID}.adapter_contract.json"


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["adapter", *args], catch_exceptions=False)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A project as the README lays it out: contracts beside the pin file, a publisher's
    signed manifest and its publisher document elsewhere."""
    root = tmp_path / "project"
    publisher = tmp_path / "publisher"
    key_path, doc_path = write_key_files(publisher / "keys", demo_key())
    write_json(root / "contracts" / CONTRACT_NAME, make_contract())
    monkeypatch.chdir(root)
    return {"root": root, "publisher": publisher, "key": key_path, "doc": doc_path}


def _manifest(ws: dict[str, Path], name: str, *, status: str = "active", **times: str) -> Path:
    """Attest the pristine contract with ``status`` and sign a one-entry manifest."""
    source = ws["publisher"] / f"{name}.contract.json"
    write_json(source, make_contract())
    entry = ws["publisher"] / f"{name}.entry.json"
    attested = run(
        "attest",
        str(source),
        "--sign-with",
        str(ws["key"]),
        "--status",
        status,
        "--published-at",
        "2025-01-01T00:00:00Z",
        "--out",
        str(entry),
    )
    assert attested.exit_code == 0, attested.output
    out = ws["publisher"] / f"{name}.manifest.json"
    extra = [a for k, v in times.items() for a in (f"--{k.replace('_', '-')}", v)]
    built = run(
        "manifest", "build", str(entry), "--sign-with", str(ws["key"]), "--out", str(out), *extra
    )
    assert built.exit_code == 0, built.output
    return out


def _pin(manifest: Path, *extra: str) -> None:
    result = run(
        "pin",
        "--id",
        ID,
        "--version",
        VERSION,
        "--hash",
        HASH,
        "--manifest",
        str(manifest),
        "--public-key-base64",
        KEY_B64,
        *extra,
    )
    assert result.exit_code == 0, result.output


def _gate(manifest: Path, ws: dict[str, Path], *extra: str) -> Result:
    return run(
        "pins",
        "check",
        "--require-signed",
        "--manifest",
        str(manifest),
        "--publisher-doc",
        str(ws["doc"]),
        *extra,
    )


def _edit_pin(**changes: Any) -> None:
    path = Path("pinned_adapters.json")
    document = json.loads(path.read_text())
    document["pinned_adapters"][0].update(changes)
    path.write_text(json.dumps(document, indent=2) + "\n")


# ------------------------------------------------------------------------------------------
# 1. Local contracts are always checked


def test_readme_gate_scans_the_pin_files_folder_and_fails_a_tampered_contract(
    project: dict[str, Path],
) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    assert _gate(manifest, project).exit_code == 0
    path = project["root"] / "contracts" / CONTRACT_NAME
    tampered = {**make_contract(), "allowed_policy_fields": ["signal_a", "signal_b", "signal_c"]}
    write_json(path, tampered)  # the declared contract_hash kept: it no longer recomputes
    result = _gate(manifest, project, "--json")
    assert result.exit_code == 1, result.output
    assert _error_line(result).startswith("error: pin.check_failed:")
    verdict = json.loads(result.stdout)["pins"][0]
    assert verdict["holds"] is False
    assert any(CONTRACT_NAME in p for p in verdict["problems"]), verdict


@pytest.mark.parametrize("with_dir", [False, True])
def test_a_tampered_contract_with_a_duplicate_key_fails_never_a_note(
    project: dict[str, Path], with_dir: bool
) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    path = project["root"] / "contracts" / CONTRACT_NAME
    text = json.dumps(make_contract(), indent=2)
    # The runtime's json.loads keeps the last value: a policy leak the strict parser refuses.
    text = text.replace(
        '"allowed_policy_fields": [',
        '"allowed_policy_fields": ["signal_c"],\n  "allowed_policy_fields": [',
    )
    path.write_text(text)
    extra = ("--contracts-dir", str(project["root"] / "contracts")) if with_dir else ()
    result = _gate(manifest, project, *extra, "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    problems = report["pins"][0]["problems"]
    assert any("json.duplicate_key" in p and CONTRACT_NAME in p for p in problems), report


def test_malformed_files_that_are_not_contracts_stay_notes(project: dict[str, Path]) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    (project["root"] / "package.json").write_text('{"name": "x", "name": "y"}')
    result = _gate(manifest, project, "--json")
    assert result.exit_code == 0, result.output
    assert any("package.json" in s for s in json.loads(result.stdout)["skipped_files"])


def test_an_unreadable_contract_file_fails(project: dict[str, Path]) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    path = project["root"] / "contracts" / CONTRACT_NAME
    path.write_bytes(b'{"adapter_id": "' + ID.encode() + b'", "x": "' + b"a" * (1 << 20) + b'"}')
    result = _gate(manifest, project)
    assert result.exit_code == 1, result.output


def test_a_local_contract_that_does_not_lint_fails(project: dict[str, Path]) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    path = project["root"] / "contracts" / CONTRACT_NAME
    write_json(path, {**make_contract(), "replaced_by": f"{ID}@{VERSION}"})  # names itself
    result = _gate(manifest, project, "--json")
    assert result.exit_code == 1, result.output
    problems = json.loads(result.stdout)["pins"][0]["problems"]
    assert any("contract.lifecycle_self_reference" in p for p in problems)


# ------------------------------------------------------------------------------------------
# 2. Lifecycle from the signed manifest; inspection-only needs the flag


@pytest.mark.parametrize(
    "edit",
    [
        {"inspection_only": True},
        {"lifecycle_advice": "please treat as inspection-only"},
        {"status": "active", "inspection_only": True, "lifecycle_advice": "inspection-only"},
    ],
)
def test_editing_the_pin_never_turns_a_revocation_into_a_pass(
    project: dict[str, Path], edit: dict[str, Any]
) -> None:
    active = _manifest(project, "active", generated_at=_now())
    _pin(active)
    revoked = _manifest(project, "revoked", status="revoked", generated_at=_now())
    _edit_pin(**edit)
    result = _gate(revoked, project)
    assert result.exit_code == 3, result.output
    assert _error_line(result).startswith("error: pin.check_revoked:")
    # Even the flag does not help a pin that was never recorded as inspection-only by `pin`:
    # its text was edited by hand, and the manifest says revoked.
    flagged = _gate(revoked, project, "--allow-inspection-only")
    assert flagged.exit_code == (0 if edit.get("inspection_only") is True else 3), flagged.output


def test_inspection_only_pins_pass_only_with_the_flag(project: dict[str, Path]) -> None:
    revoked = _manifest(project, "revoked", status="revoked", generated_at=_now())
    _pin(revoked, "--allow-revoked-for-legacy-inspection")
    refused = _gate(revoked, project)
    assert refused.exit_code == 3, refused.output
    allowed = _gate(revoked, project, "--allow-inspection-only", "--json")
    assert allowed.exit_code == 0, allowed.output
    verdict = json.loads(allowed.stdout)["pins"][0]
    assert verdict["lifecycle"] == "revoked"
    assert any("inspection-only" in n for n in verdict["notes"])


# ------------------------------------------------------------------------------------------
# 3. Freshness: the manifest's signed time and --max-age


def test_max_age_refuses_a_manifest_signed_before_the_revocation(
    project: dict[str, Path],
) -> None:
    old = _manifest(project, "old", generated_at="2025-01-01T00:00:00Z")
    _pin(old)
    # Without --max-age the old manifest still passes (what a replayed manifest looks like).
    assert _gate(old, project).exit_code == 0
    stale = _gate(old, project, "--max-age", "7d", "--json")
    assert stale.exit_code == 1, stale.output
    problems = json.loads(stale.stdout)["problems"]
    assert any("older than the maximum age of 7 days" in p for p in problems), problems
    fresh = _manifest(project, "fresh", generated_at=_now())
    assert _gate(fresh, project, "--max-age", "7d").exit_code == 0


def test_max_age_needs_a_proven_signed_time(project: dict[str, Path]) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    document = json.loads(manifest.read_text())
    drop = ("signed_at", "freshness_hash", "freshness_signature")
    bare = {k: v for k, v in document.items() if k not in drop}
    write_json(manifest, bare)  # a peer-style manifest: no freshness statement
    assert _gate(manifest, project).exit_code == 0
    assert _gate(manifest, project, "--max-age", "30d").exit_code == 1
    write_json(manifest, {**document, "signed_at": "2099-01-01T00:00:00Z"})  # moved forward
    assert _gate(manifest, project).exit_code == 1  # a tampered statement always fails
    assert run("manifest", "verify", str(manifest), "--public-key-base64", KEY_B64).exit_code == 1


@pytest.mark.parametrize("value", ["7", "1y", "-1d", "0h", "1.5h", ""])
def test_max_age_is_a_duration(project: dict[str, Path], value: str) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    result = _gate(manifest, project, "--max-age", value)
    assert result.exit_code == 2
    assert _error_line(result).startswith("error: usage.invalid:")


def test_max_age_without_a_manifest_is_a_usage_error(project: dict[str, Path]) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    result = run("pins", "check", "--max-age", "1d")
    assert result.exit_code == 2
    assert _error_line(result).startswith("error: usage.invalid:")


def test_help_documents_the_gate_flags() -> None:
    text = run("pins", "check", "--help").output
    for flag in ("--allow-inspection-only", "--max-age", "--registry", "--contracts-dir"):
        assert flag in text
    assert "0007-pin-gate-freshness" in text


# ------------------------------------------------------------------------------------------
# 4. Every pin finds its declaration where the gate looks (issue 37 §1)


@pytest.mark.parametrize("how", ["deleted", "moved", "renamed", "adapter_renamed"])
def test_a_pinned_contract_not_where_the_gate_looks_fails(
    project: dict[str, Path], how: str
) -> None:
    manifest = _manifest(project, "m", generated_at=_now())
    _pin(manifest)
    contracts = project["root"] / "contracts"
    path = contracts / CONTRACT_NAME
    gate = ("--contracts-dir", str(contracts), "--json")
    assert _gate(manifest, project, *gate).exit_code == 0
    if how == "deleted":
        path.unlink()
    elif how == "moved":  # out of --contracts-dir, and edited there
        moved = project["root"] / "elsewhere" / CONTRACT_NAME
        write_json(moved, {**make_contract(), "allowed_policy_fields": ["signal_a"]})
        path.unlink()
    elif how == "renamed":  # no longer a *.json file
        path.rename(path.with_name(CONTRACT_NAME + ".bak"))
    else:  # the declaration now names another adapter
        write_json(path, {**make_contract(), "adapter_id": "acme.other.v0"})
    result = _gate(manifest, project, *gate)
    assert result.exit_code == 1, result.output
    assert _error_line(result).startswith("error: pin.check_failed:")
    report = json.loads(result.stdout)
    verdict = report["pins"][0]
    assert verdict["holds"] is False
    codes = [f["code"] for f in report["findings"] if f["pin"] == f"{ID}@{VERSION}"]
    assert "pin.contract_missing" in codes, report["findings"]


def test_a_stale_manifest_prints_no_ok_pin_and_its_age_as_a_duration(
    project: dict[str, Path],
) -> None:
    """Issue 37 §4: no pin line says ``ok`` above ``result: FAILED``; ages read as durations."""
    old = _manifest(project, "old", generated_at="2025-01-01T00:00:00Z")
    _pin(old)
    stale = _gate(old, project, "--max-age", "7d")
    assert stale.exit_code == 1, stale.output
    lines = stale.stdout.splitlines()
    assert lines[-1] == "result: FAILED (exit 1)"
    assert lines[1].startswith(f"  held    {ID}@{VERSION}"), lines
    assert not [line for line in lines if line.lstrip().startswith("ok ")]
    assert " days " in stale.stdout
    assert "older than the maximum age of 7 days" in stale.stdout
    assert not re.search(r"\d{5,}s\b", stale.stdout)
    result = _gate(old, project, "--max-age", "7d", "--json")
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["pin"], f["file"]) for f in findings] == [
        ("pin.manifest_stale", None, str(old))
    ]


def test_pin_contract_computes_the_hash(project: dict[str, Path]) -> None:
    """Issue 37 §6: ``adapter pin --contract FILE`` pins the file's id, version and recomputed
    hash; ``--id --version --hash`` (the seed's form) stays."""
    manifest = _manifest(project, "m", generated_at=_now())
    contract = f"contracts/{CONTRACT_NAME}"
    key = ("--manifest", str(manifest), "--public-key-base64", KEY_B64)
    by_file = run("pin", "--contract", contract, *key, "--json")
    assert by_file.exit_code == 0, by_file.output
    pinned = json.loads(Path("pinned_adapters.json").read_text())["pinned_adapters"]
    Path("pinned_adapters.json").unlink()
    _pin(manifest)
    assert json.loads(Path("pinned_adapters.json").read_text())["pinned_adapters"] == pinned
    assert pinned[0]["contract_hash"] == HASH
    assert _gate(manifest, project).exit_code == 0
    same = run("pin", "--contract", contract, "--id", ID, "--version", VERSION, *key)
    assert same.exit_code == 0, same.output
    for args, code in (
        (("--contract", contract, "--hash", HASH), "usage.invalid"),
        (("--id", ID, "--version", VERSION), "usage.invalid"),
        (("--contract", contract, "--id", "acme.other.v0"), "pin.invalid_argument"),
        (("--contract", "contracts/missing.json"), "io.unreadable"),
    ):
        refused = run("pin", *args, *key)
        assert refused.exit_code == 2, (args, refused.output)
        assert _error_line(refused).startswith(f"error: {code}:"), refused.stderr
    write_json(Path(contract), {**make_contract(), "allowed_policy_fields": ["signal_a"]})
    tampered = run("pin", "--contract", contract, *key)
    assert tampered.exit_code == 1, tampered.output
    assert _error_line(tampered).startswith("error: pin.contract_invalid:")
