"""Export, import and migrate: round trips between the two store kinds with the root unchanged,
every tampered dump refused with its code, and nothing written when it is refused."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
import string
import warnings
from base64 import b64decode, b64encode
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.registry.app import create_app
from affidavit.registry.dump import (
    TABLES,
    export_store,
    import_store,
    migrate_store,
    signature_document,
)
from affidavit.registry.settings import Settings
from affidavit.verify.crypto.signature import verify_ed25519

from tests.conftest import raises_code
from tests.registry.conftest import Clock, make_key, registry_key
from tests.registry.helpers import contract, fact, fact_hash

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TRUSTED = registry_key().public_key
ROUTES = (
    "/protocol/adapter-contracts",
    "/specs/adapter-contracts.manifest.json",
    "/protocol/merkle/latest",
    "/tlog/checkpoint",
)


def _settings(tmp_path: Path, name: str, database_url: str = "") -> Settings:
    return Settings(
        data_dir=tmp_path / name, contracts_dir=tmp_path / "none", database_url=database_url
    )


def _fill(settings: Settings) -> dict[str, bytes]:
    """Publish contracts and facts through the API; return what the routes answer."""
    with TestClient(create_app(settings, clock=Clock(), signing_key=registry_key())) as client:
        publish = make_key(settings, "publish")
        write = make_key(settings, "facts:write", "facts:read:*")
        for i in range(3):
            answer = client.post(
                "/protocol/adapter-contracts",
                json=contract(f"acme.moved_{i}.v0"),
                headers={"Authorization": f"Bearer {publish}"},
            )
            assert answer.status_code == 201
        parent = fact("urn:moved:parent")
        child = fact("urn:moved:child", derived_from=[fact_hash(parent)])
        answer = client.put(
            "/v1/facts",
            json={"facts": [parent, child]},
            headers={"Authorization": f"Bearer {write}"},
        )
        assert answer.status_code in (200, 201), answer.text
        return {route: client.get(route).content for route in ROUTES}


def _serve(settings: Settings) -> dict[str, bytes]:
    with TestClient(create_app(settings, clock=Clock(), signing_key=registry_key())) as client:
        return {route: client.get(route).content for route in ROUTES}


@pytest.mark.parametrize(("source", "target"), [("sqlite", "postgresql"), ("postgresql", "sqlite")])
def test_round_trip_between_store_kinds(
    tmp_path: Path, pg_url: str, source: str, target: str
) -> None:
    urls = {"sqlite": "", "postgresql": pg_url}
    origin = _settings(tmp_path, "origin", urls[source])
    before = _fill(origin)
    manifest = export_store(origin.database, tmp_path / "dump", signing_key=registry_key())
    assert manifest["counts"]["registry_contracts"] == 3
    assert manifest["counts"]["facts"] == 2
    # The key folder moves with the data folder (docs/postgresql.md).
    moved = _settings(tmp_path, "moved", urls[target])
    (moved.data_dir).mkdir()
    (origin.data_dir / "keys").rename(moved.data_dir / "keys")
    if not urls[target]:
        moved = _settings(tmp_path, "moved")
    result = import_store(moved.database, tmp_path / "dump", trusted_key=TRUSTED)
    assert (result["tree_size"], result["root_hash"]) == (
        manifest["log"]["tree_size"],
        manifest["log"]["root_hash"],
    )
    assert _serve(moved) == before  # the same catalog, manifest, head and checkpoint bytes


def _dump(tmp_path: Path) -> tuple[Settings, Path]:
    origin = _settings(tmp_path, "origin")
    _fill(origin)
    export_store(origin.database, tmp_path / "dump", signing_key=registry_key())
    return origin, tmp_path / "dump"


def test_the_dump_is_the_bytes_formats_md_names(tmp_path: Path) -> None:
    """docs/formats.md §9, restated here rather than read from the exporter: each table file is
    its rows in key order, each a JSON array (``ensure_ascii=False``, BLOBs as ``{"b64"}``) and a
    newline; manifest.json is ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`` and a
    newline, naming each file's SHA-256 and count; manifest.sig is ``json.dumps(indent=2)`` and a
    newline, an Ed25519 signature over the context line and manifest.json's bytes."""
    origin = _settings(tmp_path, "origin")
    _fill(origin)
    with sqlite3.connect(origin.database) as db:  # text beyond ASCII, copied as it is
        db.execute("UPDATE registry_api_keys SET label = 'café ünïcode'")
    dump = tmp_path / "dump"
    export_store(origin.database, dump, signing_key=registry_key())
    assert "café".encode() in (dump / "registry_api_keys.jsonl").read_bytes()  # not \\u-escaped
    manifest_bytes = (dump / "manifest.json").read_bytes()
    manifest = json.loads(manifest_bytes)
    assert manifest_bytes == (
        json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    ).encode("utf-8")
    with sqlite3.connect(origin.database) as db:
        for table, (columns, order) in TABLES.items():
            rows = db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
            lines = [
                [{"b64": b64encode(v).decode()} if isinstance(v, bytes) else v for v in row]
                for row in rows
            ]
            data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
            assert (dump / f"{table}.jsonl").read_bytes() == data.encode("utf-8"), table
            assert manifest["counts"][table] == len(lines)
            assert manifest["files"][f"{table}.jsonl"] == hashlib.sha256(data.encode()).hexdigest()
    signature = json.loads((dump / "manifest.sig").read_bytes())
    assert (dump / "manifest.sig").read_bytes() == (json.dumps(signature, indent=2) + "\n").encode()
    assert signature["format"] == "affidavit.registry-export-signature/v1"
    assert (signature["algorithm"], signature["public_key"]) == ("Ed25519", TRUSTED.b64)
    message = b"affidavit.registry-export/v1\n" + manifest_bytes
    verify_ed25519(TRUSTED, message, b64decode(signature["signature"]))


def _rewrite(path: Path, edit: Any) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(edit(lines)) + "\n")


def _rehash(dump: Path, name: str) -> None:
    """Make the manifest agree with an edited file and sign it again with the trusted key (so
    only the deeper checks can catch it)."""
    manifest = json.loads((dump / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((dump / name).read_bytes()).hexdigest()
    manifest["counts"][name.removesuffix(".jsonl")] = len((dump / name).read_text().splitlines())
    body = json.dumps(manifest).encode()
    (dump / "manifest.json").write_bytes(body)
    (dump / "manifest.sig").write_bytes(signature_document(registry_key(), body))


def _swap_fact_keys(lines: list[str]) -> list[str]:
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first[0], second[0] = second[0], first[0]
    return [json.dumps(first), json.dumps(second), *lines[2:]]


def test_tampered_dumps_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    _, dump = _dump(tmp_path)
    target = tmp_path / "target.db"

    copies = iter(range(100))

    def refused(edit: Any, name: str, code: str, *, rehash: bool) -> None:
        copy = tmp_path / f"copy-{next(copies)}"
        shutil.copytree(dump, copy)
        _rewrite(copy / name, edit)
        if rehash:
            _rehash(copy, name)
        with raises_code(code):
            import_store(target, copy, trusted_key=TRUSTED)

    # An edited file, caught by its hash; then the same edit in a manifest the trusted key
    # signed again, caught by the root, the nodes or the fact's own hash.
    flip = lambda lines: [lines[0].replace('"b64": "', '"b64": "A', 1), *lines[1:]]  # noqa: E731
    refused(flip, "log_nodes.jsonl", "registry.dump_file_mismatch", rehash=False)
    refused(flip, "log_nodes.jsonl", "registry.dump_root_mismatch", rehash=True)
    refused(lambda lines: lines[:-1], "log_nodes.jsonl", "registry.dump_root_mismatch", rehash=True)
    refused(_swap_fact_keys, "facts.jsonl", "registry.dump_fact_mismatch", rehash=True)
    assert not target.exists()  # a refused dump never opens the destination
    with raises_code("registry.dump_invalid"):
        import_store(target, tmp_path, trusted_key=TRUSTED)  # not a dump at all
    with raises_code("registry.dump_signature_invalid"):
        import_store(target, dump, trusted_key=derive_test_key("a stranger").public_key)
    assert not target.exists()


def test_import_refuses_a_store_that_is_not_empty(tmp_path: Path) -> None:
    origin, dump = _dump(tmp_path)
    with raises_code("registry.store_not_empty"):
        import_store(origin.database, dump, trusted_key=TRUSTED)
    with raises_code("usage.invalid"):  # the folder exists and is not empty
        export_store(origin.database, dump, signing_key=registry_key())
    with raises_code("log.key_mismatch"):  # signed by a key that is not the log's
        export_store(origin.database, tmp_path / "other", signing_key=derive_test_key("other"))
    assert not (tmp_path / "other").exists()


def test_migrate_is_idempotent_and_refuses_a_newer_schema(tmp_path: Path) -> None:
    location = tmp_path / "fresh.db"
    first = migrate_store(location)
    assert {c: v["before"] for c, v in first.items()} == {"log": 0, "registry": 0, "scitt": 0}
    again = migrate_store(location)
    assert all(v["before"] == v["after"] for v in again.values())
    with sqlite3.connect(location) as db:
        db.execute("UPDATE schema_versions SET version = 99 WHERE component = 'log'")
    with raises_code("store.schema_too_new"):
        migrate_store(location)


def test_a_rotated_log_round_trips_under_its_current_key(tmp_path: Path) -> None:
    """After a rotation (docs/adr/0011) the dump is signed by the new key; heads signed by the
    old key verify through the key history, each inside its key's window."""
    import datetime

    from affidavit.attest.log.transparency import TransparencyLog

    origin = _settings(tmp_path, "origin")
    _fill(origin)
    new_key = derive_test_key("the rotated key", key_id="registry-2")
    log = TransparencyLog.open(
        origin.database_path, registry_key().with_labels(key_id="registry-1", publisher_id=None)
    )
    try:
        log.rotate_key(new_key, datetime.datetime(2025, 6, 2, tzinfo=datetime.UTC))
        log.signed_tree_head(datetime.datetime(2025, 6, 3, tzinfo=datetime.UTC))
        log.checkpoint(timestamp=datetime.datetime(2025, 6, 3, tzinfo=datetime.UTC))
    finally:
        log.close()
    with raises_code("log.key_mismatch"):  # the old key no longer signs for the log
        export_store(origin.database, tmp_path / "old", signing_key=registry_key())
    manifest = export_store(origin.database, tmp_path / "dump", signing_key=new_key)
    with raises_code("registry.dump_signature_invalid"):
        import_store(tmp_path / "a.db", tmp_path / "dump", trusted_key=TRUSTED)
    result = import_store(tmp_path / "b.db", tmp_path / "dump", trusted_key=new_key.public_key)
    assert result["root_hash"] == manifest["log"]["root_hash"]
    assert result["heads_verified"] == manifest["counts"]["log_heads"] >= 3
    assert not (tmp_path / "a.db").exists()


def test_a_contract_id_postgresql_cannot_hold_is_refused_before_writing(
    tmp_path: Path, pg_url: str
) -> None:
    """A SQLite store may hold a contract stored before the id bounds (docs/adr/0017): moving it
    to PostgreSQL is refused with its code, and the target gets no table at all."""
    origin = _settings(tmp_path, "origin")
    _fill(origin)
    letters = random.Random(27).choices(string.ascii_lowercase, k=3000)  # PostgreSQL compresses
    long_id = "acme." + "".join(letters)  # a repeated pattern under its row limit; these it cannot
    with sqlite3.connect(origin.database) as db:
        row = list(db.execute("SELECT * FROM registry_contracts ORDER BY seq LIMIT 1").fetchone())
        columns = [d[0] for d in db.execute("SELECT * FROM registry_contracts").description]
        row[columns.index("adapter_id")] = long_id
        row[columns.index("seq")] = 1000
        db.execute(f"INSERT INTO registry_contracts VALUES ({', '.join('?' * len(row))})", row)
    export_store(origin.database, tmp_path / "dump", signing_key=registry_key())
    with raises_code("registry.dump_unportable"):
        import_store(pg_url, tmp_path / "dump", trusted_key=TRUSTED)
    import psycopg

    with psycopg.connect(pg_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert tables == (0,)
    # The same dump restores into SQLite, which holds such rows (served, listed by `check`).
    result = import_store(tmp_path / "sqlite.db", tmp_path / "dump", trusted_key=TRUSTED)
    assert result["counts"]["registry_contracts"] == 4
