"""Issue 32 item 1: each head (the C2SP checkpoint and the signed tree head) is signed once, at
integration, by the log's writer; a GET never signs or writes (docs/adr/0024).

The heads are counted in the store's own table (``log_heads``: every head the log signs is
recorded there before it is handed out), so a GET that signed would show as a new row."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings

from tests.registry.conftest import Clock, registry_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

GETS = (
    "/protocol/merkle/latest",
    "/protocol/merkle/checkpoint",
    "/tlog/checkpoint",
    "/v1/health",
)


@pytest.fixture
def quiet(settings: Settings) -> Settings:
    """No timed integration round within a test: only what the writer is asked to do happens."""
    return replace(settings, integrate_interval_s=60)


@pytest.fixture
def app_client(quiet: Settings, clock: Clock) -> Iterator[TestClient]:
    app = create_app(quiet, clock=clock, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _heads(db: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT kind, tree_size, document FROM log_heads ORDER BY seq")
        return [(str(kind), int(size), str(document)) for kind, size, document in rows]


def test_a_get_of_a_fresh_log_signs_nothing(app_client: TestClient, quiet: Settings) -> None:
    """Reproduction: a fresh registry signed its first heads on the first GET."""
    before = _heads(quiet.database_path)
    for _ in range(3):
        for path in GETS:
            assert app_client.get(path).status_code == 200, path
    assert _heads(quiet.database_path) == before
    kinds = sorted(kind for kind, size, _ in before if size == 0)
    assert kinds == ["checkpoint", "sth"]  # signed once, together, when the writer started
    documents = {document for _, _, document in before}
    assert app_client.get("/protocol/merkle/checkpoint").text in documents
    assert app_client.get("/tlog/checkpoint").text in documents


def test_a_grown_tree_is_signed_by_the_writer_not_the_get(
    app_client: TestClient, quiet: Settings
) -> None:
    """Reproduction: after leaves appended outside the registry (``affidavit stamp --log`` on its
    database), GET /protocol/merkle/checkpoint signed a checkpoint alone and GET
    /protocol/merkle/latest a tree head apart from it, each on the writer thread."""
    with TransparencyLog.open(quiet.database_path) as other:
        other.append([b"from another process %d" % i for i in range(5)])
    checkpoint = app_client.get("/protocol/merkle/checkpoint")
    assert checkpoint.status_code == 200
    grown = [(kind, document) for kind, size, document in _heads(quiet.database_path) if size == 5]
    assert sorted(kind for kind, _ in grown) == ["checkpoint", "sth"]  # one integration signed both
    assert checkpoint.text == next(document for kind, document in grown if kind == "checkpoint")
    after = _heads(quiet.database_path)
    for _ in range(3):
        for path in GETS:
            assert app_client.get(path).status_code == 200, path
    assert app_client.get("/protocol/merkle/sth/5").status_code == 200
    assert _heads(quiet.database_path) == after
    assert app_client.get("/protocol/merkle/latest").json()["tree_size"] == 5
