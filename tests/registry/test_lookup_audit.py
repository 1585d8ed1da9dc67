"""A monitor's check of the lookup index (registry/clients/lookup.py ``audit_index``), against a
real registry process: every entry replayed from the tiles is answered under every hash it is
filed under; a row missing from the index, an answer that leaves an entry out, or a tile that
does not bind is caught."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.registry.clients.lookup import audit_index
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import TrustedKey
from affidavit.verify.json.canonical import jcs
from affidavit.verify.trust import TrustRoot

from tests.processes import RegistryProcess, api_key
from tests.registry.helpers import contract, fact
from tests.registry.tamper_proxy import tamper_proxy

pytestmark = pytest.mark.network_local
ORIGIN = "affidavit-registry"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("audit") / "data"
    publisher, writer = api_key(data, "publish"), api_key(data, "log:write")
    process = RegistryProcess(data)
    process.start()
    try:
        for version in ("0.1.0", "0.2.0"):
            published = httpx.post(
                process.url + "/protocol/adapter-contracts",
                json=contract(version=version),
                headers={"Authorization": f"Bearer {publisher}"},
                timeout=10,
            )
            assert published.status_code == 201, published.text
        for entry in (jcs(fact("urn:audit:a")), b"a raw entry"):
            posted = httpx.post(
                process.url + "/v1/log/entries",
                content=entry,
                params={"wait": "integrated"},
                headers={"Authorization": f"Bearer {writer}"},
                timeout=30,
            )
            assert posted.status_code == 201, posted.text
        served = httpx.get(process.url + "/protocol/merkle/public-key", timeout=10).json()
        key = Ed25519PublicKey.from_b64(served["public_key_base64"])
        vkey = parse_verifier_key(verifier_key_string(ORIGIN, key))
        trust = TrustRoot((TrustedKey(key, "test", "vkey", verifier=vkey),))
        yield {"url": process.url, "trust": trust, "db": data / "registry.db"}
    finally:
        process.stop()


def test_every_entry_is_answered_under_every_hash_it_is_filed_under(
    registry: dict[str, Any],
) -> None:
    result = audit_index(registry["url"], registry["trust"])
    assert result.verdict == "verified", result.to_json()
    assert (result.subject["tree_size"], result.subject["entries"]) == (4, 4)
    assert result.subject["hashes"] == 6 + 6 + 4 + 2  # two contracts, a fact, a raw entry
    later = audit_index(registry["url"], registry["trust"], start=3)  # a monitor's next round
    assert (later.verified, later.subject["entries"]) == (True, 1)


def test_an_answer_that_leaves_an_entry_out_is_caught(registry: dict[str, Any]) -> None:
    def drop_leaf_2(path: str, body: bytes) -> bytes:
        if not path.startswith("/v1/lookup/"):
            return body
        document = json.loads(body)
        document["entries"] = [e for e in document["entries"] if e["index"] != 2]
        return json.dumps(document).encode()

    with tamper_proxy(registry["url"]) as proxy:
        proxy.tamper = drop_leaf_2  # type: ignore[attr-defined]
        result = audit_index(proxy.url, registry["trust"])  # type: ignore[attr-defined]
    assert (result.verdict, result.code) == ("failed", "lookup.index_missing")
    assert result.failed_step is not None
    assert result.failed_step.details["index"] == 2


def test_a_tile_that_does_not_bind_is_caught(registry: dict[str, Any]) -> None:
    def other_entry(path: str, body: bytes) -> bytes:
        if "/tlog/tile/entries/" not in path:
            return body
        return body.replace(b"a raw entry", b"a raw entrY")

    with tamper_proxy(registry["url"]) as proxy:
        proxy.tamper = other_entry  # type: ignore[attr-defined]
        result = audit_index(proxy.url, registry["trust"])  # type: ignore[attr-defined]
    assert (result.verdict, result.code) == ("failed", "tlog.tile_mismatch")


def test_a_row_missing_from_the_index_is_caught(registry: dict[str, Any], tmp_path: Path) -> None:
    with sqlite3.connect(registry["db"]) as db:
        rows = db.execute(
            "DELETE FROM registry_lookup WHERE leaf_index = 1 AND field = 'entry_hash' "
            "RETURNING hash, leaf_index, field, kind"
        ).fetchall()
    try:
        result = audit_index(registry["url"], registry["trust"])
        assert (result.verdict, result.code) == ("failed", "lookup.index_missing")
        assert result.failed_step is not None
        assert result.failed_step.details == {"index": 1, "field": "entry_hash"}
    finally:
        with sqlite3.connect(registry["db"]) as db:
            db.executemany("INSERT INTO registry_lookup VALUES (?, ?, ?, ?)", rows)
    assert audit_index(registry["url"], registry["trust"]).verified
