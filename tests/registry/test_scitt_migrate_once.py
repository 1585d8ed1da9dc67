"""Issue 32 item 1: the SCITT service's schema is migrated once, when the registry starts, not on
every registration or receipt read (``registry/scitt.py``; docs/adr/0024).

Every call of :meth:`Store.migrate` is counted (the real method runs), while a statement is
registered, its receipt fetched three times, an unknown entry asked for and the keys read."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.stores.store import Migrations, Store
from affidavit.registry.app import create_app
from affidavit.registry.scitt import ScittSettings
from affidavit.registry.settings import Settings
from affidavit.verify.scitt.statement import parse_statement

from tests.registry.conftest import Clock, registry_key
from tests.verify.scitt.support import ISSUER_COSE, statement

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

COSE = {"Content-Type": "application/cose"}


@pytest.fixture
def migrations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The component of every :meth:`Store.migrate` call from now on."""
    calls: list[str] = []
    real = Store.migrate

    def counted(self: Store, component: str, steps: Migrations) -> int:
        calls.append(component)
        return real(self, component, steps)

    monkeypatch.setattr(Store, "migrate", counted)
    return calls


@pytest.fixture
def client(settings: Settings, migrations: list[str]) -> Iterator[TestClient]:
    del migrations  # counting from before the start
    scitt = ScittSettings(issuers=(ISSUER_COSE,)).into(settings)
    app = create_app(scitt, clock=Clock(), signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield raw


def test_the_scitt_schema_is_migrated_once_at_start(
    client: TestClient, migrations: list[str], tmp_path: Path
) -> None:
    """Reproduction: no SCITT migration at start, then one on every registration and read."""
    del tmp_path
    at_start = list(migrations)
    assert at_start.count("scitt") == 1
    signed = statement(subject="pkg:once@1")
    registered = client.post("/entries", content=signed, headers=COSE)
    assert registered.status_code == 201, registered.content
    entry_id = parse_statement(signed).entry_id
    for _ in range(3):
        assert client.get(f"/entries/{entry_id}").status_code == 200
    assert client.get("/entries/" + "ab" * 32).status_code == 404
    assert client.get("/.well-known/scitt-keys").status_code == 200
    assert migrations == at_start  # nothing migrated after the start
