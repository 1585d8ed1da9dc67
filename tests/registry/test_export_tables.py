"""Export carries every table (issue 31, hole 5): the live schema's tables, listed from each store
(SQLite's catalogue, PostgreSQL's information_schema) after a registry wrote every kind of row
(contract publication, facts, raw entries, a SCITT registration), are each in the dump, or in
:data:`NOT_EXPORTED` with the reason; and an export, import and restart keeps every route's
answers, ``GET /entries/{id}`` and the lookup by a statement's subject included.

On both stores (``settings_on_each_store``); in-process apps on a fixed clock, so a restored
registry signs the very same bytes."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from affidavit.registry.app import create_app
from affidavit.registry.dump import TABLES, export_store, import_store, signature_document
from affidavit.registry.scitt import ScittSettings
from affidavit.registry.settings import Settings
from affidavit.verify.scitt.statement import parse_statement

from tests.conftest import raises_code
from tests.registry.conftest import Clock, SpecClient, make_key, registry_key
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.openapi_check import Coverage
from tests.registry.test_transfer import _rehash, _rewrite
from tests.verify.scitt.support import ISSUER_COSE, statement

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

# Tables a dump leaves out on purpose, each with why (docs/formats.md §9).
NOT_EXPORTED = {
    "schema_versions": "the store's own bookkeeping: the import migrates the target itself",
    "registry_lookup": "derived from the log alone: a restored store reindexes it at start",
    "registry_lookup_size": "derived from the log alone, as registry_lookup",
}
SUBJECT = "pkg:export@1"


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    return ScittSettings(issuers=(ISSUER_COSE,)).into(settings_on_each_store)


def _client(settings: Settings) -> Iterator[SpecClient]:
    app = create_app(settings, clock=Clock(), signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield SpecClient(raw, Coverage())


def _live_tables(settings: Settings) -> set[str]:
    """The tables the store holds now, as its own catalogue lists them."""
    if settings.database_url:
        with psycopg.connect(settings.database_url) as db:
            rows = db.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            ).fetchall()
    else:
        with sqlite3.connect(settings.database) as db:
            rows = db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
    return {str(row[0]) for row in rows}


def _write_every_kind(client: SpecClient, settings: Settings) -> str:
    """A publication, facts, a raw entry and a SCITT registration; the SCITT entry ID."""
    publish = make_key(settings, "publish")
    writer = make_key(settings, "facts:write", "facts:read:*", "log:write")
    posted = client.request(
        "POST", "/protocol/adapter-contracts", json_body=contract(), key=publish
    )
    assert posted.status_code == 201, posted.text
    document = fact("urn:export:1")
    assert client.request("PUT", "/v1/facts", json_body=document, key=writer).status_code == 201
    raw = client.request(
        "POST", "/v1/log/entries", raw=b"raw entry", key=writer,
        headers={"Content-Type": "application/octet-stream"},
    )  # fmt: skip
    assert raw.status_code == 201, raw.text
    signed = statement(subject=SUBJECT)
    registered = client.request(
        "POST", "/entries", raw=signed, headers={"Content-Type": "application/cose"}
    )
    assert registered.status_code == 201, registered.content
    return parse_statement(signed).entry_id


def _answers(client: SpecClient, entry_id: str, fact_id: str, token: str) -> dict[str, Any]:
    """Every route's answer worth keeping across a restore (bytes as served)."""
    subject = hashlib.sha256(SUBJECT.encode()).hexdigest()
    issuer = hashlib.sha256(b"https://issuer.example").hexdigest()
    gets = [
        f"/entries/{entry_id}",
        f"/v1/lookup/{subject}",
        f"/v1/lookup/{issuer}",
        f"/v1/lookup/{entry_id}",
        "/protocol/adapter-contracts",
        "/protocol/adapter-contracts/acme.eval_suite.v0",
        "/protocol/merkle/latest",
        "/protocol/merkle/checkpoint",
        "/tlog/checkpoint",
        "/protocol/merkle/entries",
        "/specs/adapter-contracts.manifest.json",
        "/.well-known/scitt-keys",
    ]
    answers: dict[str, Any] = {
        path: (r.status_code, r.content) for path in gets for r in [client.get(path)]
    }
    mine = client.request("GET", f"/v1/facts/{fact_id}", key=token)
    answers["fact"] = (mine.status_code, mine.content)
    assert answers[f"/entries/{entry_id}"][0] == 200
    return answers


def test_the_dump_carries_every_table_and_a_restore_answers_alike(
    settings: Settings, tmp_path: Path
) -> None:
    fact_id = fact_hash(fact("urn:export:1"))
    for client in _client(settings):
        entry_id = _write_every_kind(client, settings)
        token = make_key(settings, "facts:read:*")
        before = _answers(client, entry_id, fact_id, token)
    live = _live_tables(settings)
    left_out = live - set(TABLES) - set(NOT_EXPORTED)
    assert not left_out, f"tables the dump leaves out: {sorted(left_out)}"
    assert not set(TABLES) - live, f"dumped tables the store lacks: {sorted(set(TABLES) - live)}"
    # export, import into a fresh SQLite store, restart on it: the same answers
    dump = tmp_path / "dump"
    export_store(settings.database, dump, signing_key=registry_key())
    target = Settings(
        data_dir=tmp_path / "restored", contracts_dir=tmp_path / "contracts", port=8080
    )
    target = ScittSettings(issuers=(ISSUER_COSE,)).into(target)
    target.data_dir.mkdir(mode=0o700)
    import_store(target.database, dump, trusted_key=registry_key().public_key)
    for client in _client(target):
        after = _answers(client, entry_id, fact_id, token)
    for path, answer in before.items():
        assert after[path] == answer, f"{path}: {answer[0]} -> {after[path][0]}"
    _tampered_and_older_dumps(dump, tmp_path)


def _tampered_and_older_dumps(dump: Path, tmp_path: Path) -> None:
    """A SCITT row moved to another leaf, under a manifest the trusted key signed again, is
    ``registry.dump_entry_mismatch``; a dump written before scitt_entries and log_sequenced were
    exported (neither listed) still imports."""
    trusted = registry_key().public_key
    moved = tmp_path / "moved"
    shutil.copytree(dump, moved)
    _rewrite(
        moved / "scitt_entries.jsonl",
        lambda lines: [re.sub(r", \d+, ", ", 0, ", lines[0], count=1)],
    )
    _rehash(moved, "scitt_entries.jsonl")
    with raises_code("registry.dump_entry_mismatch"):
        import_store(tmp_path / "moved.db", moved, trusted_key=trusted)
    older = tmp_path / "older"
    shutil.copytree(dump, older)
    manifest = json.loads((older / "manifest.json").read_text())
    for table in ("scitt_entries", "log_sequenced"):
        (older / f"{table}.jsonl").unlink()
        del manifest["files"][f"{table}.jsonl"], manifest["counts"][table]
    body = json.dumps(manifest).encode()
    (older / "manifest.json").write_bytes(body)
    (older / "manifest.sig").write_bytes(signature_document(registry_key(), body))
    summary = import_store(tmp_path / "older.db", older, trusted_key=trusted)
    assert summary["counts"]["scitt_entries"] == 0
