"""``affidavit adapter attest|manifest|list|lifecycle|pin|pins`` in-process (CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.cli import _sources
from affidavit.cli.main import affidavit
from affidavit.registry.clients.https import MAX_RESPONSE_BYTES
from click.testing import CliRunner, Result

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    write_json,
    write_key_files,
)

KEY_B64 = demo_key().public_key.b64
HASH = make_contract()["contract_hash"]


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["adapter", *args], catch_exceptions=False)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.chdir(tmp_path)
    key_path, doc_path = write_key_files(tmp_path / "keys", demo_key())
    contracts = tmp_path / "contracts"
    write_json(contracts / "a.json", make_contract())
    write_json(contracts / "b.json", make_contract("acme.other.v0", "1.2.0"))
    return {"key": key_path, "doc": doc_path, "contracts": contracts, "root": tmp_path}


def _attest(ws: dict[str, Path], name: str, *extra: str) -> Path:
    out = ws["root"] / f"{name}.entry.json"
    result = run(
        "attest",
        str(ws["contracts"] / f"{name}.json"),
        "--sign-with",
        str(ws["key"]),
        "--published-at",
        "2025-01-01T00:00:00Z",
        "--out",
        str(out),
        *extra,
    )
    assert result.exit_code == 0, result.output
    return out


def _build(ws: dict[str, Path]) -> Path:
    entries = [str(_attest(ws, "a")), str(_attest(ws, "b"))]
    out = ws["root"] / "manifest.json"
    result = run(
        "manifest",
        "build",
        *entries,
        "--sign-with",
        str(ws["key"]),
        "--out",
        str(out),
        "--generated-at",
        "2025-01-01T00:00:00Z",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["entry_count"] == 2
    return out


def _error_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert lines, "expected an error line on stderr"
    return lines[-1]


def test_attest_unsigned_to_stdout_and_lint_failure(workspace: dict[str, Path]) -> None:
    result = run(
        "attest", str(workspace["contracts"] / "a.json"), "--publisher-id", "p.q", "--key-id", "k1"
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["ok"], document["signed"]) == (True, False)
    assert document["entry"]["publisher_id"] == "p.q"
    broken = write_json(
        workspace["root"] / "bad.json", {**make_contract(), "contract_hash": "0" * 64}
    )
    failed = run("attest", str(broken), "--publisher-id", "p.q", "--key-id", "k1")
    assert failed.exit_code == 1
    assert _error_line(failed).startswith("error: entry.lint_failed:")
    missing = run("attest", str(workspace["contracts"] / "a.json"))
    assert missing.exit_code == 2


def test_signed_attest_takes_publisher_from_the_key_folder(workspace: dict[str, Path]) -> None:
    document = json.loads(_attest(workspace, "a").read_text())
    assert document["signed"] is True
    assert document["entry"]["publisher_id"] == "demo.publisher"
    assert document["entry"]["publisher_key_id"] == "demo-k1"
    result = run(
        "manifest",
        "verify-entry",
        str(_attest(workspace, "a")),
        "--public-key-base64",
        KEY_B64,
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["entry_signature_status"] == "ok"


def test_manifest_verify_key_sources_and_exit_codes(workspace: dict[str, Path]) -> None:
    manifest = str(_build(workspace))
    ok = run("manifest", "verify", manifest, "--public-key-base64", KEY_B64, "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["entry_count"] == 2
    via_doc = run(
        "manifest", "verify", manifest, "--publisher-doc", str(workspace["doc"]), "--json"
    )
    assert json.loads(via_doc.stdout)["publisher_document_used"] == str(workspace["doc"])
    no_key = run("manifest", "verify", manifest)
    assert no_key.exit_code == 1
    assert "no_public_key" in no_key.stdout
    assert _error_line(no_key).startswith("error: manifest.verification_failed:")
    assert run("manifest", "verify", manifest, "--allow-unsigned").exit_code == 0
    both = run(
        "manifest",
        "verify",
        manifest,
        "--public-key-base64",
        KEY_B64,
        "--publisher-doc",
        str(workspace["doc"]),
    )
    assert both.exit_code == 2


def test_manifest_verify_tampered_and_foreign_publisher(workspace: dict[str, Path]) -> None:
    path = _build(workspace)
    document = json.loads(path.read_text())
    document["contracts"][0]["status"] = "revoked"
    write_json(path, document)
    result = run("manifest", "verify", str(path), "--public-key-base64", KEY_B64, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["entries"][0]["entry_hash_status"] == "mismatch"
    foreign = write_json(
        workspace["root"] / "foreign.json",
        {**json.loads(workspace["doc"].read_text()), "publisher_key_id": "other"},
    )
    mismatch = run("manifest", "verify", str(path), "--publisher-doc", str(foreign))
    assert mismatch.exit_code == 1
    assert _error_line(mismatch).startswith("error: manifest.publisher_mismatch:")


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"{", "json.syntax"),
        (b"[]", "manifest.invalid"),
        (b'{"contracts": 3}', "manifest.invalid"),
        (b'{"contracts": [], "contracts": []}', "json.duplicate_key"),
    ],
)
def test_malformed_manifests_exit_2_with_one_line(
    tmp_path: Path, content: bytes, code: str
) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    result = run("manifest", "verify", str(path), "--public-key-base64", KEY_B64)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {code}:")


@pytest.mark.parametrize("key", ["AAAA", "!!", "A" * 43 + "="])
def test_malformed_keys_exit_2(workspace: dict[str, Path], key: str) -> None:
    result = run("manifest", "verify", str(_build(workspace)), "--public-key-base64", key)
    assert result.exit_code == 2
    assert _error_line(result).startswith("error: key.")


def test_list_table_and_json(workspace: dict[str, Path]) -> None:
    manifest = str(_build(workspace))
    table = run("list", "--manifest", manifest)
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0].split() == [
        "STATUS",
        "ADAPTER",
        "VERSION",
        "CHANNEL",
        "CONTRACT_HASH",
        "REPLACED_BY",
    ]
    assert lines[1].split()[:3] == ["active", "acme.eval_suite.v0", "0.1.0"]
    as_json = json.loads(run("list", "--manifest", manifest, "--json").stdout)
    assert [c["adapter_id"] for c in as_json["contracts"]] == [
        "acme.eval_suite.v0",
        "acme.other.v0",
    ]
    assert run("list").exit_code == 2  # no ./adapter-contracts.manifest.json here


def test_lifecycle_edits_in_place_and_keeps_hashes(workspace: dict[str, Path]) -> None:
    path = workspace["contracts"] / "a.json"
    result = run(
        "lifecycle",
        str(path),
        "--status",
        "superseded",
        "--replaced-by",
        "acme.eval_suite.v0@0.2.0",
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["hashes_unchanged"] is True
    assert report["contract_hash"] == HASH
    assert json.loads(path.read_text())["replaced_by"] == "acme.eval_suite.v0@0.2.0"
    bad = run("lifecycle", str(path), "--status", "deprecated", "--replaced-by", "nope")
    assert bad.exit_code == 2
    assert _error_line(bad).startswith("error: entry.lifecycle_invalid:")


def _relifecycle(ws: dict[str, Path], *args: str) -> Path:
    run("lifecycle", str(ws["contracts"] / "a.json"), *args)
    return _build(ws)


def test_pin_lifecycle_messages_and_revocation(workspace: dict[str, Path]) -> None:
    pin_args = ("pin", "--id", "acme.eval_suite.v0", "--version", "0.1.0", "--hash", HASH)
    plain = run(*pin_args)
    assert plain.exit_code == 0
    pins = json.loads(Path("pinned_adapters.json").read_text())["pinned_adapters"]
    assert pins[0]["entry_hash_status"] == "no_manifest_supplied"
    manifest = str(
        _relifecycle(
            workspace, "--status", "superseded", "--replaced-by", "acme.eval_suite.v0@0.2.0"
        )
    )
    notice = run(*pin_args, "--manifest", manifest, "--public-key-base64", KEY_B64)
    assert notice.exit_code == 0
    assert notice.stderr.startswith("NOTICE: acme.eval_suite.v0@0.1.0 is superseded")
    manifest = str(_relifecycle(workspace, "--status", "deprecated"))
    warning = run(*pin_args, "--manifest", manifest, "--publisher-doc", str(workspace["doc"]))
    assert warning.stderr.startswith("WARNING: acme.eval_suite.v0@0.1.0 is DEPRECATED")
    manifest = str(_relifecycle(workspace, "--status", "revoked"))
    before = Path("pinned_adapters.json").read_bytes()
    refused = run(*pin_args, "--manifest", manifest, "--public-key-base64", KEY_B64)
    assert refused.exit_code == 3
    assert _error_line(refused).startswith("error: pin.revoked:")
    assert Path("pinned_adapters.json").read_bytes() == before
    allowed = run(
        *pin_args,
        "--manifest",
        manifest,
        "--public-key-base64",
        KEY_B64,
        "--allow-revoked-for-legacy-inspection",
        "--json",
    )
    assert allowed.exit_code == 0
    pin = json.loads(allowed.stdout)["pinned"][0]
    assert (pin["status"], pin["inspection_only"]) == ("revoked", True)
    # The gate accepts an inspection-only revoked pin only when told to (exit 3 otherwise).
    gate = ("pins", "check", "--contracts-dir", str(workspace["contracts"]))
    assert run(*gate).exit_code == 3
    assert run(*gate, "--allow-inspection-only").exit_code == 0


def test_pin_argument_errors(workspace: dict[str, Path]) -> None:
    for args in (
        ("--id", "Bad", "--version", "0.1.0", "--hash", HASH),
        ("--id", "a.b", "--version", "1", "--hash", HASH),
        ("--id", "a.b", "--version", "0.1.0", "--hash", "ABC"),
    ):
        result = run("pin", *args)
        assert result.exit_code == 2
        assert _error_line(result).startswith("error: pin.invalid_argument:")


def test_pins_check_exit_codes(workspace: dict[str, Path]) -> None:
    contracts = str(workspace["contracts"])
    manifest = str(_build(workspace))
    run(
        "pin",
        "--id",
        "acme.eval_suite.v0",
        "--version",
        "0.1.0",
        "--hash",
        HASH,
        "--manifest",
        manifest,
        "--public-key-base64",
        KEY_B64,
    )
    ok = run(
        "pins",
        "check",
        "--contracts-dir",
        contracts,
        "--manifest",
        manifest,
        "--public-key-base64",
        KEY_B64,
        "--require-signed",
    )
    assert ok.exit_code == 0, ok.output
    assert "result: OK (exit 0)" in ok.stdout
    unsigned = run("pins", "check", "--manifest", manifest, "--require-signed", "--json")
    assert unsigned.exit_code == 2  # no trusted key: bad flags (issue 37 §6)
    assert _error_line(unsigned).startswith("error: usage.invalid: --require-signed needs")
    path = workspace["contracts"] / "a.json"
    declaration: dict[str, Any] = json.loads(path.read_text())
    declaration["allowed_policy_fields"] = ["signal_a"]
    write_json(path, declaration)
    failed = run("pins", "check", "--contracts-dir", contracts, "--json")
    assert failed.exit_code == 1
    report = json.loads(failed.stdout)
    assert report["pins"][0]["holds"] is False
    assert _error_line(failed).startswith("error: pin.check_failed:")
    write_json(path, {**make_contract(), "status": "revoked"})
    revoked = run("pins", "check", "--contracts-dir", contracts)
    assert revoked.exit_code == 3
    assert _error_line(revoked).startswith("error: pin.check_revoked:")
    path.unlink()
    assert run("pins", "check", "--contracts-dir", contracts).exit_code == 1


@pytest.mark.parametrize(
    "content", [b"{", b'{"pinned_adapters": [{"adapter_id": "a.b"}]}', b'{"pinned_adapters": 1}']
)
def test_pins_check_malformed_pin_file_exits_2(workspace: dict[str, Path], content: bytes) -> None:
    Path("pinned_adapters.json").write_bytes(content)
    result = run("pins", "check", "--contracts-dir", str(workspace["contracts"]))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert run("pins", "check", "--file", "absent.json").exit_code == 2


def test_url_manifest_and_fetch_publisher(
    workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest_bytes = _build(workspace).read_bytes()
    publisher_bytes = workspace["doc"].read_bytes()
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/specs/m.json":
            return httpx.Response(200, content=manifest_bytes)
        if request.url.path == "/.well-known/demo.publisher-publisher.json":
            return httpx.Response(200, content=publisher_bytes)
        if request.url.path == "/big.json":
            return httpx.Response(200, content=b" " * (MAX_RESPONSE_BYTES + 1))
        return httpx.Response(404)

    monkeypatch.setattr(_sources, "_HTTP_TRANSPORT", httpx.MockTransport(handler))
    ok = run(
        "manifest", "verify", "https://pub.example/specs/m.json", "--fetch-publisher", "--json"
    )
    assert ok.exit_code == 0, ok.output
    assert seen == [
        "https://pub.example/specs/m.json",
        "https://pub.example/.well-known/demo.publisher-publisher.json",
    ]
    assert json.loads(ok.stdout)["publisher_document_used"] == seen[1]
    for url, code in (
        ("https://pub.example/missing.json", "manifest.fetch_failed"),
        ("https://pub.example/big.json", "manifest.fetch_failed"),
        ("http://pub.example/specs/m.json", "manifest.fetch_failed"),
    ):
        result = run("manifest", "verify", url, "--public-key-base64", KEY_B64)
        assert result.exit_code == 2
        assert _error_line(result).startswith(f"error: {code}:")


def test_local_paths_never_touch_the_network(
    workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected network access: {request.url}")

    monkeypatch.setattr(_sources, "_HTTP_TRANSPORT", httpx.MockTransport(refuse))
    manifest = str(_build(workspace))
    assert (
        run("manifest", "verify", manifest, "--publisher-doc", str(workspace["doc"])).exit_code == 0
    )
    assert run("list", "--manifest", manifest).exit_code == 0
