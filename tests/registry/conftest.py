"""Registry fixtures: an app on a fixed clock and a TEST-ONLY key, a client that validates every
request and response against the OpenAPI document, and API keys per scope."""

from __future__ import annotations

import datetime
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    # starlette 1.x asks for httpx2 in its test client; httpx works and is what we ship.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.registry.app import create_app
from affidavit.registry.auth import ApiKey, hash_token, new_token, parse_token
from affidavit.registry.db import open_tables
from affidavit.registry.settings import Settings

from tests.registry.openapi_check import Coverage, check_request, check_response

FIXED_NOW = datetime.datetime(2025, 6, 1, 12, 0, 0, tzinfo=datetime.UTC)
TEST_KEY_LABEL = "affidavit registry TEST-ONLY key"


def registry_key() -> SigningKey:
    """TEST-ONLY: the registry's deterministic signing key."""
    return derive_test_key(TEST_KEY_LABEL)


class Clock:
    """A settable clock (starts at FIXED_NOW)."""

    def __init__(self) -> None:
        self.now = FIXED_NOW

    def __call__(self) -> datetime.datetime:
        return self.now


class SpecClient:
    """A TestClient wrapper: every JSON request and every response is checked against the spec."""

    def __init__(self, client: TestClient, coverage: Coverage) -> None:
        self.client = client
        self.coverage = coverage

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        raw: bytes | None = None,
        key: str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        all_headers = dict(headers or {})
        if key is not None:
            all_headers["Authorization"] = f"Bearer {key}"
        content = raw
        if json_body is not None:
            check_request(method, path, json_body)
            content = json.dumps(json_body).encode()
        if content is not None:
            all_headers.setdefault("Content-Type", "application/json")
        response = self.client.request(
            method, path, content=content, headers=all_headers, params=params
        )
        self.coverage.add(method, path)
        check_response(
            method,
            path,
            response.status_code,
            response.headers.get("content-type", ""),
            response.content,
        )
        return response

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, **kwargs)


def make_key(
    where: Settings | Path, *scopes: str, publishers: tuple[str, ...] | None = None
) -> str:
    """Create an API key directly in the store (the settings' database, or the data folder's
    SQLite file); returns the token. A publish key is bound to the test namespaces ``acme`` and
    ``affidavit.examples`` unless ``publishers`` says otherwise."""
    token = new_token()
    if publishers is None:
        publishers = ("acme", "affidavit.examples") if "publish" in scopes else ()
    if isinstance(where, Settings):
        tables = open_tables(where.database, key_dir=where.key_dir)
    else:
        tables = open_tables(where / "registry.db")
    try:
        tables.add_api_key(
            ApiKey(parse_token(token).key_id, hash_token(token), tuple(scopes), "test", publishers),
            "2025-06-01T12:00:00Z",
        )
    finally:
        tables.close()
    return token


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", contracts_dir=tmp_path / "contracts", port=8080)


@pytest.fixture(params=["sqlite", "postgresql"])
def settings_on_each_store(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The registry's settings on each store (PostgreSQL: a fresh database of the test cluster);
    a module runs on both by defining ``settings`` from it."""
    database_url = request.getfixturevalue("pg_url") if request.param == "postgresql" else ""
    return Settings(
        data_dir=tmp_path / "data",
        contracts_dir=tmp_path / "contracts",
        port=8080,
        database_url=database_url,
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def coverage() -> Coverage:
    return Coverage()


@pytest.fixture
def client(settings: Settings, clock: Clock, coverage: Coverage) -> Iterator[SpecClient]:
    app = create_app(settings, clock=clock, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield SpecClient(raw, coverage)


@pytest.fixture
def keys(client: SpecClient, settings: Settings) -> dict[str, str]:
    """Tokens per scope (the database exists once the client started)."""
    return {
        "publish": make_key(settings, "publish"),
        "write": make_key(settings, "facts:write"),
        "team": make_key(settings, "facts:read:team"),
        "all": make_key(settings, "facts:read:*", "facts:write"),
    }
