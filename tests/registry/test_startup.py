"""Start-up: the contracts directory (bad files skipped, built-ins win), restarts keep bytes."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings

from tests.registry.conftest import Clock, make_key, registry_key
from tests.registry.helpers import contract


def _write(folder: Path, name: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.adapter_contract.json").write_bytes(data)


def test_contracts_dir_loading(
    settings: Settings, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    folder = settings.contracts_dir
    _write(folder, "good", json.dumps(contract("acme.dir.v0")).encode())
    _write(folder, "dup_key", b'{"adapter_id": "a", "adapter_id": "b"}')
    _write(
        folder,
        "tampered",
        json.dumps(dict(contract("acme.bad.v0"), contract_hash="0" * 64)).encode(),
    )
    _write(
        folder,
        "collides",
        json.dumps(contract("affidavit.examples.langgraph.v0", "9.9.9")).encode(),
    )
    (folder / "ignored.json").write_text("not a contract file name")
    caplog.set_level(logging.WARNING, logger="affidavit.registry")
    with TestClient(create_app(settings, clock=clock, signing_key=registry_key())) as client:
        listed = {
            (c["adapter_id"], c["source"])
            for c in client.get("/protocol/adapter-contracts").json()["contracts"]
        }
        assert ("acme.dir.v0", "directory") in listed
        assert not any(a in {"acme.bad.v0"} for a, _ in listed)
        langgraph = client.get("/protocol/adapter-contracts/affidavit.examples.langgraph.v0").json()
        assert langgraph["contract"]["adapter_version"] == "0.1.0"  # built-ins win
        assert (
            client.get(
                "/protocol/adapter-contracts/affidavit.examples.langgraph.v0/9.9.9"
            ).status_code
            == 404
        )
    text = caplog.text
    assert "dup_key" in text
    assert "json.duplicate_key" in text
    assert "tampered" in text
    assert "registry.contract_rejected" in text
    assert "built-ins win" in text


def test_restart_keeps_manifest_bytes_and_published_contracts(
    settings: Settings, clock: Clock
) -> None:
    app = create_app(settings, clock=clock, signing_key=registry_key())
    with TestClient(app) as client:
        token = make_key(settings.data_dir, "publish")
        published = client.post(
            "/protocol/adapter-contracts",
            content=json.dumps(contract()),
            headers={"Authorization": f"Bearer {token}"},
        )
        assert published.status_code == 201
        manifest = client.get("/specs/adapter-contracts.manifest.json").content
        head = client.get("/protocol/merkle/latest").json()
    clock.now = clock.now.replace(year=2026)  # a later start must not change the manifest bytes
    with TestClient(create_app(settings, clock=clock, signing_key=registry_key())) as client:
        assert client.get("/specs/adapter-contracts.manifest.json").content == manifest
        assert client.get("/protocol/adapter-contracts/acme.eval_suite.v0").status_code == 200
        assert client.get(f"/protocol/merkle/sth/{head['tree_size']}").json() == head


def test_generated_key_is_private(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "d", contracts_dir=tmp_path / "c")
    with TestClient(create_app(settings)) as client:
        key = client.get("/protocol/merkle/public-key").json()["public_key_base64"]
    key_file = settings.key_dir / f"{settings.key_id}.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert (settings.key_dir / f"{settings.key_id}.pub").read_text().strip() == key


@pytest.mark.parametrize(
    "fields", [{"publisher_id": "acme\n"}, {"key_id": "k1\n"}, {"publisher_id": "Acme"}]
)
def test_settings_ids_match_the_whole_string(tmp_path: Path, fields: dict[str, str]) -> None:
    from affidavit.verify import errors

    with pytest.raises(errors.UsageError) as caught:
        Settings(data_dir=tmp_path, **fields)
    assert caught.value.code == "usage.invalid"


def test_a_rotated_log_refuses_to_start_with_its_earlier_key(settings: Settings) -> None:
    import datetime

    from affidavit.attest.keyring import derive_test_key
    from affidavit.attest.log.transparency import TransparencyLog
    from affidavit.registry.startup import open_state

    from tests.conftest import raises_code

    old = registry_key()
    new = derive_test_key("registry rotation: the new key").with_labels(  # TEST-ONLY
        key_id="registry-2", publisher_id=settings.publisher_id
    )
    open_state(settings, signing_key=old).close()
    when = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    with TransparencyLog.open(settings.database_path, old) as log:
        log.rotate_key(new, when)
    with raises_code("log.key_mismatch"):
        open_state(settings, signing_key=old)
    open_state(settings, signing_key=new).close()
