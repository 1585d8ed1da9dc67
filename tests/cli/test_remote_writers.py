"""Remote log writers (issue 24): ``stamp --log URL``, ``stamp batch --log URL``, ``log append
URL`` and ``receipt log URL`` against a real registry process on 127.0.0.1. A bundle stamped
through the registry verifies offline with ``verify bundle`` exactly as one stamped into a local
log (same fields, same verdict); the same entry again keeps its first index."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import example_contract
from affidavit.cli.main import affidavit
from click.testing import CliRunner

from tests.processes import RegistryProcess, api_key
from tests.schemas import assert_output_schema
from tests.verify.receipts.receipt_fixtures import receipt, write_json

pytestmark = pytest.mark.network_local

POLICY = {
    "rules": [
        {
            "conditions": [
                {"field": "signal_a", "op": "==", "value": True},
                {"field": "signal_b", "op": "==", "value": True},
            ],
            "action": "auto_accept",
        }
    ],
    "default": "require_review",
}
LOG_KEY = derive_test_key("remote writers: a local log's key")  # TEST-ONLY


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryProcess]:
    data = tmp_path_factory.mktemp("registry") / "data"
    data.mkdir()
    server = RegistryProcess(data)
    server.start()
    server.token = api_key(data, "log:write")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "contract.json").write_text(json.dumps(example_contract()))
    (tmp_path / "policy.json").write_text(json.dumps(POLICY))
    for name, raw in {"accepted": (True, True), "review": (True, False)}.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({"signal_a": raw[0], "signal_b": raw[1]}))
    key = tmp_path / "log.key"
    key.write_bytes(private_key_pem(LOG_KEY))
    os.chmod(key, 0o600)
    with TransparencyLog.create(tmp_path / "log.db", LOG_KEY, "local-log"):
        pass
    return tmp_path


def _run(*args: str) -> Any:
    return CliRunner().invoke(affidavit, list(args))


def _registry_key(server: RegistryProcess) -> str:
    return str(httpx.get(server.url + "/protocol/merkle/public-key").json()["public_key_base64"])


def _stamp_args(work: Path, log: list[str], deal: str, out: Path) -> list[str]:
    return ["stamp", "--contract", str(work / "contract.json"), "--policy",
            str(work / "policy.json"), *log, "--time", "2026-03-01T12:00:00Z",
            "--adapter-output", str(work / "accepted.json"), "--deal-id", deal,
            "--out", str(out), "--json"]  # fmt: skip


def test_a_bundle_stamped_through_a_registry_verifies_offline_like_a_local_one(
    registry: RegistryProcess, work: Path
) -> None:
    remote_out, local_out = work / "remote.bundle.json", work / "local.bundle.json"
    remote = _run(*_stamp_args(work, ["--log", registry.url, "--api-key", registry.token],
                               "deal-remote", remote_out))  # fmt: skip
    assert remote.exit_code == 0, remote.output
    assert_output_schema("stamp", json.loads(remote.output))
    local = _run(*_stamp_args(work, ["--log", str(work / "log.db"), "--key",
                                     str(work / "log.key")], "deal-local", local_out))  # fmt: skip
    assert local.exit_code == 0, local.output
    remote_bundle = json.loads(remote_out.read_text())
    local_bundle = json.loads(local_out.read_text())
    assert list(remote_bundle) == list(local_bundle)  # the same fields, in the same order
    assert remote_bundle["signed_tree_head"]["log_id"] == "affidavit-registry"
    verified = _run("verify", "bundle", str(remote_out), "--public-key-base64",
                    _registry_key(registry), "--json")  # fmt: skip
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.output)["verdict"] == "verified"
    # Under another key it does not verify: the registry's key signed it.
    other = _run("verify", "bundle", str(remote_out), "--public-key-base64",
                 LOG_KEY.public_key.b64)  # fmt: skip
    assert other.exit_code == 1


def test_stamp_batch_through_a_registry(registry: RegistryProcess, work: Path) -> None:
    args = ["stamp", "batch", "--contract", str(work / "contract.json"), "--policy",
            str(work / "policy.json"), "--log", registry.url, "--api-key", registry.token,
            "--out-dir", str(work / "out"), "--deal-prefix", "batch-",
            str(work / "accepted.json"), str(work / "review.json")]  # fmt: skip
    done = _run(*args)
    assert done.exit_code == 0, done.output
    verified = _run("verify", "bundle", str(work / "out"), "--public-key-base64",
                    _registry_key(registry))  # fmt: skip
    assert verified.exit_code == 0, verified.output


def test_stamp_refuses_a_key_with_a_registry_and_an_api_key_with_a_db(
    registry: RegistryProcess, work: Path
) -> None:
    with_key = _run(*_stamp_args(work, ["--log", registry.url, "--key", str(work / "log.key")],
                                 "d", work / "x.json"))  # fmt: skip
    assert with_key.exit_code == 2
    assert "error: usage.invalid:" in with_key.output
    with_api_key = _run(*_stamp_args(work, ["--log", str(work / "log.db"), "--key",
                                            str(work / "log.key"), "--api-key", "k"], "d",
                                     work / "y.json"))  # fmt: skip
    assert with_api_key.exit_code == 2
    assert not (work / "x.json").exists()
    assert not (work / "y.json").exists()


def test_log_append_to_a_registry_and_again(registry: RegistryProcess, work: Path) -> None:
    (work / "a.txt").write_bytes(b"remote entry a")
    (work / "b.txt").write_bytes(b"remote entry b")
    files = [str(work / "a.txt"), str(work / "b.txt")]
    first = _run("log", "append", registry.url, *files, "--api-key", registry.token, "--json")
    assert first.exit_code == 0, first.output
    document = json.loads(first.output)
    assert_output_schema("log append", document)
    assert [row["created"] for row in document["appended"]] == [True, True]
    again = _run("log", "append", registry.url, files[1], "--api-key", registry.token, "--json")
    row = json.loads(again.output)["appended"][0]
    assert (row["index"], row["created"]) == (document["appended"][1]["index"], False)
    refused = _run("log", "append", registry.url, files[0], "--api-key", "afk_bad")
    assert refused.exit_code == 2
    assert "registry.remote_error" in refused.output


def test_receipt_log_to_a_registry(registry: RegistryProcess, work: Path) -> None:
    path = work / "out.txt.receipt.json"
    write_json(path, receipt())
    logged = _run("receipt", "log", registry.url, str(path), "--api-key", registry.token, "--json")
    assert logged.exit_code == 0, logged.output
    document = json.loads(logged.output)
    assert_output_schema("receipt log", document)
    same = _run("receipt", "log", str(path), "--log", registry.url, "--api-key", registry.token)
    assert same.exit_code == 0, same.output
    assert same.output.split("\t")[0] == str(document["index"])  # the first index again
    usage = _run("receipt", "log", str(path), str(path))  # two files, no URL
    assert usage.exit_code == 2
