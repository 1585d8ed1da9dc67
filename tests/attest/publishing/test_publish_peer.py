"""Interop with the pinned peer CLI (aigentsy==1.17.2), both ways.

The peer runs as a subprocess (its own process, its own code); Affidavit runs in-process.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.contracts.manifest import ENTRY_HASH_FIELDS, verify_manifest
from click.testing import CliRunner

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    make_manifest,
    write_json,
)

PEER = shutil.which("aigentsy", path=str(Path(sys.executable).parent)) or shutil.which("aigentsy")
pytestmark = pytest.mark.skipif(
    PEER is None, reason="the peer CLI aigentsy==1.17.2 is not installed"
)
KEY_B64 = demo_key().public_key.b64
HASH = make_contract()["contract_hash"]


def peer(*args: str, cwd: Path) -> tuple[int, Any]:
    assert PEER is not None
    done = subprocess.run(
        [PEER, "adapter", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        return done.returncode, done.stdout + done.stderr


def ours(*args: str) -> Any:
    return CliRunner().invoke(affidavit, ["adapter", *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return make_manifest(
        demo_key(), [make_contract(), make_contract("acme.other.v0", "0.2.0", status="deprecated")]
    )


def _peer_verify(tmp_path: Path, document: dict[str, Any]) -> tuple[int, Any]:
    path = write_json(tmp_path / "m.json", document)
    return peer("manifest", "verify", str(path), "--public-key-base64", KEY_B64, cwd=tmp_path)


def test_affidavit_manifest_verifies_ok_in_the_peer(
    tmp_path: Path, manifest: dict[str, Any]
) -> None:
    code, report = _peer_verify(tmp_path, manifest)
    assert code == 0, report
    assert report["ok"] is True
    assert (report["manifest_hash_status"], report["manifest_signature_status"]) == ("ok", "ok")
    assert [e["entry_signature_status"] for e in report["entries"]] == ["ok", "ok"]
    ours_report = verify_manifest(manifest, public_key=demo_key().public_key).to_json()
    for key in ("ok", "manifest_hash_status", "manifest_signature_status", "entry_count"):
        assert ours_report[key] == report[key]
    assert ours_report["entries"] == report["entries"]


def _tamper_cases(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for field in ENTRY_HASH_FIELDS:
        tampered = copy.deepcopy(manifest)
        value = tampered["contracts"][0][field]
        tampered["contracts"][0][field] = value + "x" if value else "x"
        cases.append((f"entry.{field}", tampered))
    reordered = copy.deepcopy(manifest)
    reordered["contracts"].reverse()
    cases.append(("order", reordered))
    rehashed = copy.deepcopy(manifest)
    rehashed["manifest_hash"] = "0" * 64
    cases.append(("manifest_hash", rehashed))
    return cases


def test_every_tamper_fails_both_verifiers_with_the_same_statuses(
    tmp_path: Path, manifest: dict[str, Any]
) -> None:
    for name, tampered in _tamper_cases(manifest):
        code, report = _peer_verify(tmp_path, tampered)
        mine = verify_manifest(tampered, public_key=demo_key().public_key)
        assert code == 1, name
        assert report["ok"] is False, name
        assert not mine.ok, name
        assert mine.manifest_hash_status == report["manifest_hash_status"], name
        assert mine.manifest_signature_status == report["manifest_signature_status"], name
        assert [e.to_json() for e in mine.entries] == report["entries"], name
        if name.startswith("entry."):
            assert report["entries"][0]["entry_hash_status"] == "mismatch", name
        else:
            assert report["manifest_hash_status"] == "mismatch", name


def test_peer_attested_entry_verifies_in_affidavit(tmp_path: Path) -> None:
    contract = write_json(tmp_path / "a.json", make_contract())
    code, document = peer("attest", str(contract), cwd=tmp_path)
    assert code == 0, document
    entry_file = write_json(tmp_path / "peer.entry.json", document)
    result = ours(
        "manifest", "verify-entry", str(entry_file), "--public-key-base64", KEY_B64, "--json"
    )
    report = json.loads(result.stdout)
    assert (report["entry_hash_status"], report["entry_signature_status"]) == ("ok", "absent")
    assert result.exit_code == 1  # an unsigned entry is never "verified"
    allowed = ours("manifest", "verify-entry", str(entry_file), "--allow-unsigned")
    assert allowed.exit_code == 0


def test_pin_files_are_readable_both_ways(tmp_path: Path, manifest: dict[str, Any]) -> None:
    manifest_path = write_json(tmp_path / "m.json", manifest)
    pins = tmp_path / "pinned_adapters.json"
    code, _ = peer(
        "pin",
        "--id",
        "acme.eval_suite.v0",
        "--version",
        "0.1.0",
        "--hash",
        HASH,
        "--manifest",
        str(manifest_path),
        "--public-key-base64",
        KEY_B64,
        "--out",
        str(pins),
        cwd=tmp_path,
    )
    assert code == 0
    peer_pin = json.loads(pins.read_text())["pinned_adapters"][0]
    # Affidavit adds a pin to the peer's file and keeps the peer's pin byte for byte.
    result = ours(
        "pin",
        "--id",
        "acme.other.v0",
        "--version",
        "0.2.0",
        "--hash",
        make_contract("acme.other.v0", "0.2.0")["contract_hash"],
        "--manifest",
        str(manifest_path),
        "--public-key-base64",
        KEY_B64,
        "--file",
        str(pins),
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("WARNING:")
    both = json.loads(pins.read_text())["pinned_adapters"]
    assert both[0] == peer_pin
    # The gate finds each pinned contract's declaration where it looks (issue 37).
    write_json(tmp_path / "contracts" / "eval_suite.json", make_contract())
    write_json(tmp_path / "contracts" / "other.json", make_contract("acme.other.v0", "0.2.0"))
    check = ours(
        "pins",
        "check",
        "--file",
        str(pins),
        "--manifest",
        str(manifest_path),
        "--public-key-base64",
        KEY_B64,
        "--require-signed",
    )
    assert check.exit_code == 0, check.output
    # The peer pins into Affidavit's file, keeping Affidavit's pin; both tools record the same pin.
    code, _ = peer(
        "pin",
        "--id",
        "acme.other.v0",
        "--version",
        "0.2.0",
        "--hash",
        make_contract("acme.other.v0", "0.2.0")["contract_hash"],
        "--manifest",
        str(manifest_path),
        "--public-key-base64",
        KEY_B64,
        "--out",
        str(pins),
        cwd=tmp_path,
    )
    assert code == 0
    after = json.loads(pins.read_text())["pinned_adapters"]
    assert after[0] == peer_pin
    ours_pin = {k: v for k, v in both[1].items() if k != "inspection_only"}
    assert {**after[1], "lifecycle_advice": ""} == {**ours_pin, "lifecycle_advice": ""}
