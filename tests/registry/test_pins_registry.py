"""`adapter pins check --registry URL`: the live manifest catches a revocation that a saved
manifest predates (docs/adr/0007-pin-gate-freshness.md). The registry app runs in-process behind
httpx's ASGI transport, as in test_cli_discovery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.cli.main import affidavit
from affidavit.registry.clients import registry as registry_client
from click.testing import CliRunner, Result

from tests.attest.publishing.test_publish_support import other_key
from tests.registry.conftest import SpecClient, registry_key
from tests.registry.helpers import contract

BASE = "http://testserver"
CONTRACTS = "/protocol/adapter-contracts"
KEY_B64 = registry_key().public_key.b64
ID, VERSION = "acme.eval_suite.v0", "0.1.0"


@pytest.fixture
def routed(client: SpecClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every httpx.Client the registry client opens talks to the in-process app."""
    transport = client.client._transport
    real_client = httpx.Client

    def routed_client(*args: Any, **kwargs: Any) -> httpx.Client:
        kwargs["transport"] = transport
        return real_client(*args, **kwargs)

    monkeypatch.setattr(registry_client.httpx, "Client", routed_client)


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["adapter", *args], catch_exceptions=False)


@pytest.fixture
def pinned(
    client: SpecClient, keys: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A contract published, its manifest saved, and a pin recorded against it."""
    declaration = contract(ID, VERSION)
    published = client.request("POST", CONTRACTS, json_body=declaration, key=keys["publish"])
    assert published.status_code == 201, published.text
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    # The gate finds the pinned contract's declaration where it looks (issue 37).
    (project / "contracts").mkdir()
    (project / "contracts" / "eval_suite.json").write_text(json.dumps(declaration))
    saved = project / "saved.manifest.json"
    saved.write_bytes(client.get("/specs/adapter-contracts.manifest.json").content)
    pin = run(
        "pin",
        "--id",
        ID,
        "--version",
        VERSION,
        "--hash",
        declaration["contract_hash"],
        "--manifest",
        str(saved),
        "--public-key-base64",
        KEY_B64,
    )
    assert pin.exit_code == 0, pin.output
    return saved


@pytest.mark.usefixtures("routed")
def test_live_registry_catches_a_revocation_the_saved_manifest_predates(
    client: SpecClient, keys: dict[str, str], pinned: Path
) -> None:
    gate = ("pins", "check", "--require-signed", "--manifest", str(pinned))
    assert run(*gate, "--public-key-base64", KEY_B64).exit_code == 0
    revoked = client.request(
        "PATCH",
        f"{CONTRACTS}/{ID}/{VERSION}",
        json_body={"status": "revoked"},
        key=keys["publish"],
    )
    assert revoked.status_code == 200, revoked.text
    # The saved manifest still says active: without a live check it passes (the hole).
    assert run(*gate, "--public-key-base64", KEY_B64).exit_code == 0
    live = run(*gate, "--public-key-base64", KEY_B64, "--registry", BASE, "--json")
    assert live.exit_code == 3, live.output
    verdict = json.loads(live.stdout)["pins"][0]
    assert (verdict["lifecycle"], verdict["revoked_refused"]) == ("revoked", True)
    assert "registry" in verdict["sources"]


@pytest.mark.usefixtures("routed")
def test_live_manifest_must_verify_under_the_callers_key(pinned: Path) -> None:
    gate = ("pins", "check", "--manifest", str(pinned), "--registry", BASE)
    no_key = run(*gate)
    assert no_key.exit_code == 2
    assert no_key.stderr.startswith("error: usage.invalid:")
    wrong = run(*gate, "--public-key-base64", other_key().public_key.b64, "--json")
    assert wrong.exit_code == 1
    assert any(p.startswith("registry manifest:") for p in json.loads(wrong.stdout)["problems"])


@pytest.mark.usefixtures("routed")
def test_live_registry_alone_is_a_source(pinned: Path) -> None:
    pinned.unlink()  # no saved manifest: the live one is the only signed source
    result = run("pins", "check", "--registry", BASE, "--public-key-base64", KEY_B64, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pins"][0]["sources"] == [
        "contracts/eval_suite.json",
        "registry",
    ]
