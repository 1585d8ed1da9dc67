"""registry/index.py: what each kind of leaf is filed under, derived from its bytes alone."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.intoto.export import statement_for
from affidavit.attest.intoto.sign import sign_statement
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.publishing.publish import build_entry, sign_entry
from affidavit.attest.receipts import make_receipt
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.registry.contracts import CONTRACT_RECORD_TYPE, leaf_data
from affidavit.registry.index import FIELDS, KINDS, Subject, kind_of, name_digest, subjects
from affidavit.verify.bundles.events import leaf_data as bundle_leaf
from affidavit.verify.contracts.policy import AcceptancePolicy
from affidavit.verify.dsse.envelope import envelope_json
from affidavit.verify.json.canonical import jcs, sha256_hex
from affidavit.verify.scitt.statement import parse_statement

from tests.registry.helpers import contract, fact, fact_hash
from tests.verify.scitt.support import statement

KEY = derive_test_key("affidavit index test TEST-ONLY key")
EVENT = {
    "event_id": "e1",
    "event_type": "OUTCOME_RECORDED",
    "deal_id": "deal-1",
    "actor_id": "affidavit",
    "timestamp": "2026-01-01T00:00:00Z",
    "payload": {"decision": "auto_accept"},
    "prev_hash": "",
    "hash": "ab" * 32,
}


def _rows(data: bytes) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for subject in subjects(data):
        found.setdefault(subject.field, set()).add(subject.digest)
    return found


def _entry(declaration: dict[str, Any]) -> dict[str, Any]:
    entry = build_entry(
        declaration,
        publisher_id="acme",
        publisher_key_id="acme_k1",
        published_at="2026-01-01T00:00:00Z",
    )
    return sign_entry(entry, KEY)


def test_every_leaf_is_filed_under_its_leaf_hash_and_the_hash_of_its_bytes() -> None:
    for data in (b"", b"x", b"\xd2\x84", b"{}", b'{"a":1}', b"[1]", b"\xff\xfe", b"\x00" * 32):
        rows = subjects(data)
        assert rows[0] == Subject(kind_of(data), "leaf_hash", sha256_hex(b"\x00" + data))
        assert rows[1] == Subject(kind_of(data), "data_sha256", sha256_hex(data))
        assert {row.kind for row in rows} == {kind_of(data)} <= set(KINDS)


def test_a_contract_record_is_filed_under_its_recomputed_hashes_and_names() -> None:
    declaration = contract()
    entry = _entry(declaration)
    data = leaf_data(entry, declaration)
    assert kind_of(data) == "contract"
    rows = _rows(data)
    assert rows["contract_hash"] == {declaration["contract_hash"]}
    assert rows["entry_hash"] == {entry["entry_hash"]}
    assert rows["adapter_id"] == {name_digest("acme.eval_suite.v0")}
    assert rows["adapter_id@version"] == {name_digest("acme.eval_suite.v0@0.1.0")}
    assert list(dict.fromkeys(s.field for s in subjects(data))) == [f for f in FIELDS if f in rows]


def test_a_contract_record_claiming_another_contract_hash_is_filed_under_the_real_one() -> None:
    declaration = contract()
    claimed = "cd" * 32
    entry = {**_entry(declaration), "contract_hash": claimed, "entry_hash": "ef" * 32}
    rows = _rows(leaf_data(entry, {**declaration, "contract_hash": claimed}))
    assert rows["contract_hash"] == {contract()["contract_hash"]} != {claimed}
    assert "ef" * 32 not in rows["entry_hash"]


def test_a_bundle_leaf_is_filed_under_its_event_hash_and_deal_id() -> None:
    data = bundle_leaf(EVENT)
    assert kind_of(data) == "bundle"
    rows = _rows(data)
    assert rows["event_hash"] == {"ab" * 32}
    assert rows["deal_id"] == {hashlib.sha256(b"deal-1").hexdigest()}


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.replace(b'","', b'", "', 1),  # not the py-compact bytes of the leaf
        lambda d: d.replace(b"OUTCOME_RECORDED", b"DEAL_CREATED"),  # not a finality event
        lambda d: d.replace(b"ab" * 32, b"AB" * 32),  # not a hex digest
        lambda d: d[:-1] + b',"x":"y"}',  # another key
    ],
)
def test_a_leaf_that_is_not_exactly_a_finality_leaf_is_raw(change: Any) -> None:
    data = change(bundle_leaf(EVENT))
    assert data != bundle_leaf(EVENT)
    assert kind_of(data) == "raw"
    assert set(_rows(data)) == {"leaf_hash", "data_sha256"}


def test_a_receipt_is_filed_under_its_receipt_hash_source_and_content() -> None:
    receipt = make_receipt(
        b"Hello  world\n",
        b"Hello  world",
        adapter="cursor",
        adapter_version="1.0.0",
        transformations=["whitespace_trim"],
        key=KEY,
    )
    data = jcs(receipt)
    assert kind_of(data) == "receipt"
    rows = _rows(data)
    body = {k: v for k, v in receipt.items() if k != "signature"}
    assert rows["receipt_hash"] == {sha256_hex(jcs(body))}
    assert rows["source_sha256"] == {sha256_hex(b"Hello  world\n")}
    assert rows["content_sha256"] == {sha256_hex(b"Hello  world")}
    # the same receipt in other bytes than jcs is not what `receipt log` appends
    assert kind_of(json.dumps(receipt, indent=1).encode()) == "raw"


def test_a_fact_is_filed_under_its_fact_hash_parents_and_entity() -> None:
    parent = fact("urn:index:parent")
    child = fact("urn:index:child", derived_from=[fact_hash(parent)])
    data = jcs(child)
    assert kind_of(data) == "fact"
    rows = _rows(data)
    assert rows["fact_hash"] == {fact_hash(child)}
    assert rows["derived_from"] == {fact_hash(parent)}
    assert rows["entity"] == {name_digest("urn:index:child")}


def test_a_stamped_bundle_and_its_decision_statement_are_filed_under_its_hashes(
    tmp_path: Path,
) -> None:
    log = TransparencyLog.create(tmp_path / "log.db", KEY, "index-test-log")
    policy = AcceptancePolicy.from_json({"rules": [], "default": "require_review"})
    item = StampItem("deal-7", example_contract(), {"signal_a": True, "signal_b": True})
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    (bundle,) = stamp_bundles(log, [item], policy, when=when)
    leaf = log.leaf(bundle["merkle_inclusion"]["leaf_index"])
    log.close()
    rows = _rows(leaf)
    assert kind_of(leaf) == "bundle"
    assert rows["leaf_hash"] == {bundle["merkle_inclusion"]["leaf_hash"]}
    assert rows["event_hash"] == {bundle["events"][-1]["hash"]}
    assert rows["deal_id"] == {name_digest("deal-7")}
    # bundle_hash covers merkle_inclusion, so no leaf of the bundle can hold it; its decision
    # Statement names it (docs/formats.md §8), and is filed under it when logged
    _, statement = statement_for(bundle, "bundle")
    data = json.dumps(envelope_json(sign_statement(statement, KEY))).encode()
    assert kind_of(data) == "dsse"
    rows = _rows(data)
    assert rows["subject_sha256"] == {bundle["bundle_hash"]}
    assert rows["subject_name"] == {name_digest("deal-7")}


def test_a_statement_of_any_subject_is_filed_under_its_digests() -> None:
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "a.tar", "digest": {"sha256": "12" * 32}}],
        "predicateType": "https://example.com/p/v1",
        "predicate": {},
    }
    payload = base64.b64encode(json.dumps(statement).encode()).decode()
    envelope = {
        "payloadType": "application/vnd.in-toto+json",
        "payload": payload,
        "signatures": [{"keyid": "", "sig": base64.b64encode(b"\x00" * 64).decode()}],
    }
    rows = _rows(json.dumps(envelope).encode())
    assert rows["subject_sha256"] == {"12" * 32}
    assert rows["subject_name"] == {name_digest("a.tar")}


def test_a_signed_statement_is_filed_under_its_statement_hash_subject_and_issuer() -> None:
    data = statement(subject="pkg:index@1")
    parsed = parse_statement(data)
    assert kind_of(data) == "scitt"
    rows = _rows(data)
    assert rows["statement_hash"] == {parsed.leaf_entry.hex()}  # docs/formats.md §10
    assert rows["subject"] == {name_digest("pkg:index@1")}
    assert rows["issuer"] == {name_digest("https://issuer.example")}
    # the registry's SCITT service logs the statement's SHA-256: found by that hash
    assert kind_of(parsed.leaf_entry) == "digest"
    assert _rows(parsed.leaf_entry)["statement_hash"] == {parsed.leaf_entry.hex()}
    # a COSE_Sign1 that does not parse is raw
    assert kind_of(b"\xd2\x84\x43\xa1\x01\x27\xa0\x41x\x40" + b"\x00" * 64) == "raw"


def test_a_registered_statement_files_its_digest_leaf_under_its_subject_and_issuer() -> None:
    data = statement(subject="pkg:index@2")
    entry = parse_statement(data).leaf_entry
    found = {(s.kind, s.field, s.digest) for s in subjects(entry, statement=data)}
    assert ("digest", "subject", name_digest("pkg:index@2")) in found
    assert ("digest", "issuer", name_digest("https://issuer.example")) in found
    assert found >= {(s.kind, s.field, s.digest) for s in subjects(entry)}
    # a statement that is not the one the leaf is the entry of proves nothing
    other = statement(subject="pkg:index@3")
    altered = data[:-1] + bytes([data[-1] ^ 1])
    for wrong in (other, altered, b"", entry):
        assert subjects(entry, statement=wrong) == subjects(entry), wrong[:8]
    # and a leaf that is not a 32-byte entry is filed by its own bytes only
    assert subjects(data, statement=data) == subjects(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"record_type":"' + CONTRACT_RECORD_TYPE.encode() + b'","entry":1,"declaration":{}}',
        b'{"record_type":"' + CONTRACT_RECORD_TYPE.encode() + b'"}',
        b'{"receipt_version":"9"}',
        b'{"entity":"urn:x","relation":"r"}',
        b'{"payloadType":"x","payload":"!!"}',
        b'{"a":1,"a":2}',  # not strict JSON
        b'{"a":NaN}',
        b"\xff" * 10,
    ],
)
def test_what_claims_a_kind_and_is_not_it_is_raw_and_never_raises(data: bytes) -> None:
    assert kind_of(data) == "raw"
    assert set(_rows(data)) == {"leaf_hash", "data_sha256"}


def test_a_name_is_filed_under_the_sha256_of_its_utf8() -> None:
    assert name_digest("é") == hashlib.sha256("é".encode()).hexdigest()
    assert name_digest("\ud800") == hashlib.sha256(b"\xed\xa0\x80").hexdigest()
