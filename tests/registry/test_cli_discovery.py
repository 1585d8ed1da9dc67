"""The CLI's explicit network paths against a registry: `adapter list --registry` and
`verify bundle --fetch-key` (the registry app runs in-process behind httpx's ASGI transport)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.cli.main import affidavit
from affidavit.registry.clients import registry as registry_client
from affidavit.verify.contracts.policy import AcceptancePolicy
from click.testing import CliRunner

from tests.registry.conftest import SpecClient, registry_key

BASE = "http://testserver"
POLICY = {"rules": [], "default": "require_review"}


@pytest.fixture
def routed(client: SpecClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every httpx.Client the registry client opens talks to the in-process app."""
    transport = client.client._transport
    real_client = httpx.Client

    def routed_client(*args: Any, **kwargs: Any) -> httpx.Client:
        kwargs["transport"] = transport
        return real_client(*args, **kwargs)

    monkeypatch.setattr(registry_client.httpx, "Client", routed_client)


def _stamp(folder: Path, label: str) -> Path:
    key = derive_test_key(label) if label else registry_key()
    with TransparencyLog.create(folder / "log.db", key, "cli-discovery-log") as log:
        (bundle,) = stamp_bundles(
            log,
            [StampItem("deal-1", example_contract(), {"signal_a": True, "signal_b": True})],
            AcceptancePolicy.from_json(POLICY),
            when=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
        )
    path = folder / "bundle.json"
    path.write_text(json.dumps(bundle))
    return path


@pytest.mark.usefixtures("routed")
def test_adapter_list_reads_the_registry_manifest(client: SpecClient) -> None:
    served = client.get("/specs/adapter-contracts.manifest.json").json()
    result = CliRunner().invoke(affidavit, ["adapter", "list", "--registry", BASE, "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert listed["contracts"] == served["contracts"]
    assert listed["entry_count"] == len(served["contracts"]) >= 5


def test_adapter_list_refuses_two_sources() -> None:
    result = CliRunner().invoke(
        affidavit, ["adapter", "list", "--registry", BASE, "--manifest", "m"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: ")


@pytest.mark.usefixtures("routed")
def test_fetched_key_anchors_a_bundle_signed_by_the_registry_key(tmp_path: Path) -> None:
    path = _stamp(tmp_path, "")
    result = CliRunner().invoke(
        affidavit, ["verify", "bundle", str(path), "--fetch-key", BASE, "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["verdict"] == "verified"
    assert "fetched from http://testserver" in result.stderr


@pytest.mark.usefixtures("routed")
def test_fetched_key_does_not_anchor_a_bundle_signed_by_another_key(tmp_path: Path) -> None:
    path = _stamp(tmp_path, "some other log key (TEST-ONLY)")
    result = CliRunner().invoke(
        affidavit, ["verify", "bundle", str(path), "--fetch-key", BASE, "--json"]
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["results"][0]["verdict"] != "verified"
