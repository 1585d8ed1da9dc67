"""A monitor's check of the lookup index (registry/clients/lookup.py ``audit_index``), against a
real registry process: every entry replayed from the tiles is answered under every hash it is
filed under; a row missing from the index, an answer that leaves an entry out, or a tile that
does not bind is caught. A registered SCITT statement's 32-byte leaf is checked under the subject
and issuer of the statement the registry answers with it (issue 31, hole 6: the gap the old
server left when the leaf was appended raw before its registration), and the whole audit keeps
one deadline."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.registry.clients.lookup import audit_index
from affidavit.registry.errors import RegistryError
from affidavit.registry.index import name_digest
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import TrustedKey
from affidavit.verify.json.canonical import jcs
from affidavit.verify.scitt.statement import parse_statement
from affidavit.verify.trust import TrustRoot

from tests.processes import RegistryProcess, api_key
from tests.registry.helpers import contract, fact
from tests.registry.tamper_proxy import tamper_proxy
from tests.verify.scitt.support import ISSUER, statement

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
        yield {"url": process.url, "trust": _trust(process.url), "db": data / "registry.db"}
    finally:
        process.stop()


def _trust(url: str) -> TrustRoot:
    served = httpx.get(url + "/protocol/merkle/public-key", timeout=10).json()
    key = Ed25519PublicKey.from_b64(served["public_key_base64"])
    vkey = parse_verifier_key(verifier_key_string(ORIGIN, key))
    return TrustRoot((TrustedKey(key, "test", "vkey", verifier=vkey),))


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


def test_one_deadline_for_the_whole_audit(registry: dict[str, Any]) -> None:
    """Every lookup answer 0.4 s late: each within a per-request 1 s timeout, but not the 18
    lookups of the audit within one 1 s deadline. No request starts after it, so at most three
    lookups are served."""
    served: list[str] = []
    lock = threading.Lock()

    def late(path: str, body: bytes) -> bytes:
        if path.startswith("/v1/lookup/"):
            with lock:
                served.append(path)
            time.sleep(0.4)
        return body

    with tamper_proxy(registry["url"]) as proxy:
        proxy.tamper = late  # type: ignore[attr-defined]
        with pytest.raises(RegistryError) as raised:
            audit_index(proxy.url, registry["trust"], timeout=1)  # type: ignore[attr-defined]
    assert raised.value.code == "registry.unavailable", raised.value
    assert "deadline" in raised.value.message
    assert len(served) <= 3, served


# -- a registered statement whose entry was appended raw first (issue 31, hole 6) ---------------

SUBJECT = "pkg:audit-scitt@1"
ISSUER_NAME = "https://issuer.example"  # tests/verify/scitt/support.py signs for it


@pytest.fixture(scope="module")
def scitt_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Leaf 0: a statement's 32-byte entry, appended raw, then registered by the SCITT service
    (which finds it in the log); leaf 1: another statement, registered only."""
    tmp = tmp_path_factory.mktemp("audit-scitt")
    issuers = tmp / "issuers"
    issuers.mkdir()
    (issuers / "issuer.pub").write_text(ISSUER.public_key.b64 + "\n")
    (issuers / "issuer.pub.iss").write_text(ISSUER_NAME + "\n")
    writer = api_key(tmp / "data", "log:write")
    process = RegistryProcess(tmp / "data", env={"AFFIDAVIT_SCITT_ISSUERS": str(issuers)})
    process.start()
    try:
        first = statement(subject=SUBJECT)
        raw = httpx.post(
            process.url + "/v1/log/entries",
            content=parse_statement(first).leaf_entry,
            params={"wait": "integrated"},
            headers={"Authorization": f"Bearer {writer}"},
            timeout=30,
        )
        assert (raw.status_code, raw.json()["index"]) == (201, 0), raw.text
        for signed in (first, statement(payload=b'{"artefact": 2}', subject="pkg:other@1")):
            registered = httpx.post(
                process.url + "/entries",
                content=signed,
                headers={"Content-Type": "application/cose"},
                timeout=30,
            )
            assert registered.status_code == 201, registered.content
        yield {
            "url": process.url,
            "trust": _trust(process.url),
            "db": tmp / "data" / "registry.db",
            "other": statement(payload=b'{"artefact": 3}', subject="pkg:someone-else@1"),
        }
    finally:
        process.stop()


def test_a_registered_statement_is_checked_under_its_subject_and_issuer(
    scitt_registry: dict[str, Any],
) -> None:
    result = audit_index(scitt_registry["url"], scitt_registry["trust"])
    assert result.verdict == "verified", result.to_json()
    assert (result.subject["tree_size"], result.subject["entries"]) == (2, 2)
    # each leaf: leaf hash, SHA-256 of its bytes, statement hash, and its statement's subject
    # and issuer
    assert result.subject["hashes"] == 5 + 5


def test_the_gap_the_old_server_left_is_caught(scitt_registry: dict[str, Any]) -> None:
    """Before the fix the registry did not file leaf 0 under its statement's subject and issuer
    (its entry was in the log before the registration): that index, made here by deleting the
    rows, is reported."""
    with sqlite3.connect(scitt_registry["db"]) as db:
        rows = db.execute(
            "DELETE FROM registry_lookup WHERE leaf_index = 0 AND field IN ('subject', 'issuer') "
            "RETURNING hash, leaf_index, field, kind"
        ).fetchall()
    assert sorted((bytes(h).hex(), f) for h, _, f, _ in rows) == sorted(
        [(name_digest(SUBJECT), "subject"), (name_digest(ISSUER_NAME), "issuer")]
    )
    try:
        result = audit_index(scitt_registry["url"], scitt_registry["trust"])
        assert (result.verdict, result.code) == ("failed", "lookup.index_missing")
        assert result.failed_step is not None
        assert result.failed_step.details == {"index": 0, "field": "subject"}
    finally:
        with sqlite3.connect(scitt_registry["db"]) as db:
            db.executemany("INSERT INTO registry_lookup VALUES (?, ?, ?, ?)", rows)
    assert audit_index(scitt_registry["url"], scitt_registry["trust"]).verified


def test_a_statement_not_bound_to_its_leaf_is_caught(scitt_registry: dict[str, Any]) -> None:
    """A registry that answers leaf 0 with another statement (one that does not hash to it)."""
    other = base64.b64encode(scitt_registry["other"]).decode()

    def other_statement(path: str, body: bytes) -> bytes:
        if not path.startswith("/v1/lookup/"):
            return body
        document = json.loads(body)
        for entry in document["entries"]:
            if entry["index"] == 0 and "statement" in entry:
                entry["statement"] = other
        return json.dumps(document).encode()

    with tamper_proxy(scitt_registry["url"]) as proxy:
        proxy.tamper = other_statement  # type: ignore[attr-defined]
        result = audit_index(proxy.url, scitt_registry["trust"])  # type: ignore[attr-defined]
    assert (result.verdict, result.code) == ("failed", "lookup.not_about")
    assert result.failed_step is not None
    assert result.failed_step.details == {"index": 0, "field": "statement"}
