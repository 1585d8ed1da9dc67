"""verify.manifest: entry and manifest hashes, statuses, tamper cases (docs/formats.md §3)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from affidavit.verify.contracts.manifest import (
    ENTRY_HASH_FIELDS,
    entry_hash,
    manifest_hash,
    parse_publisher_document,
    verify_entry,
    verify_manifest,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    make_manifest,
    other_key,
)
from tests.conftest import raises_code


def _independent_hash(value: Any) -> str:
    # docs/formats.md §1 py-compact, written out here independently of
    # affidavit.verify.json.canonical.
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return make_manifest(
        demo_key(),
        [
            make_contract("acme.b.v0", "0.10.0"),
            make_contract("acme.b.v0", "0.9.0"),
            make_contract("acme.a.v0"),
        ],
    )


def test_entry_hash_covers_exactly_15_keys_missing_as_empty() -> None:
    entry = {"adapter_id": "acme.x.v0", "extra": "ignored", "entry_hash": "also ignored"}
    expected = _independent_hash({k: entry.get(k, "") for k in ENTRY_HASH_FIELDS})
    assert len(ENTRY_HASH_FIELDS) == 15
    assert entry_hash(entry) == expected
    assert entry_hash({**entry, "unrelated": 1}) == expected


def test_manifest_hash_formula(manifest: dict[str, Any]) -> None:
    body = {
        "manifest_schema_version": "1.0.0",
        "publisher_id": manifest["publisher_id"],
        "publisher_key_id": manifest["publisher_key_id"],
        "ordered_entry_hashes": [e["entry_hash"] for e in manifest["contracts"]],
    }
    assert manifest_hash(manifest) == _independent_hash(body) == manifest["manifest_hash"]


def test_signed_manifest_verifies_with_the_key(manifest: dict[str, Any]) -> None:
    report = verify_manifest(manifest, public_key=demo_key().public_key)
    assert report.ok, report.failures()
    assert (report.manifest_hash_status, report.manifest_signature_status) == ("ok", "ok")
    assert report.entry_count == 3
    assert all(e.entry_signature_status == "ok" for e in report.entries)
    assert report.to_json()["loud_collisions"] == []


def test_no_public_key_is_never_ok_unless_allowed(manifest: dict[str, Any]) -> None:
    report = verify_manifest(manifest, public_key=None)
    assert not report.ok
    assert report.manifest_signature_status == "no_public_key"
    assert {e.entry_signature_status for e in report.entries} == {"no_public_key"}
    assert verify_manifest(manifest, public_key=None, allow_unsigned=True).ok


def test_wrong_key_gives_bad_even_with_allow_unsigned(manifest: dict[str, Any]) -> None:
    report = verify_manifest(manifest, public_key=other_key().public_key, allow_unsigned=True)
    assert not report.ok
    assert report.manifest_signature_status == "bad"
    assert {e.entry_signature_status for e in report.entries} == {"bad"}


@pytest.mark.parametrize("field", ENTRY_HASH_FIELDS)
def test_tampering_any_hashed_field_is_a_mismatch(manifest: dict[str, Any], field: str) -> None:
    tampered = copy.deepcopy(manifest)
    entry = tampered["contracts"][1]
    entry[field] = entry[field] + "x" if entry[field] else "x"
    report = verify_manifest(tampered, public_key=demo_key().public_key)
    assert not report.ok
    bad = report.entries[1]
    assert bad.entry_hash_status == "mismatch"
    assert bad.expected == manifest["contracts"][1]["entry_hash"]
    assert bad.recomputed == entry_hash(entry)
    assert report.entries[0].entry_hash_status == "ok"


def test_tampering_entry_hash_breaks_hash_signature_and_manifest(manifest: dict[str, Any]) -> None:
    tampered = copy.deepcopy(manifest)
    tampered["contracts"][0]["entry_hash"] = "0" * 64
    report = verify_manifest(tampered, public_key=demo_key().public_key)
    assert report.entries[0].entry_hash_status == "mismatch"
    assert report.entries[0].entry_signature_status == "bad"
    assert report.manifest_hash_status == "mismatch"


def test_reordering_entries_breaks_the_manifest_hash(manifest: dict[str, Any]) -> None:
    tampered = copy.deepcopy(manifest)
    tampered["contracts"].reverse()
    report = verify_manifest(tampered, public_key=demo_key().public_key)
    assert not report.ok
    assert report.manifest_hash_status == "mismatch"
    assert report.manifest_hash_expected == manifest["manifest_hash"]
    assert all(e.entry_hash_status == "ok" for e in report.entries)


@pytest.mark.parametrize(
    ("field", "value", "hash_status", "signature_status"),
    [
        ("manifest_hash", "f" * 64, "mismatch", "bad"),
        ("publisher_id", "someone.else", "mismatch", "ok"),
        ("manifest_signature", "A" * 86 + "==", "ok", "bad"),
        ("manifest_signature", "not base64!", "ok", "bad"),
    ],
)
def test_manifest_level_tamper(
    manifest: dict[str, Any], field: str, value: str, hash_status: str, signature_status: str
) -> None:
    tampered = {**manifest, field: value}
    report = verify_manifest(tampered, public_key=demo_key().public_key)
    assert not report.ok
    assert (report.manifest_hash_status, report.manifest_signature_status) == (
        hash_status,
        signature_status,
    )


def test_absent_hash_and_signatures(manifest: dict[str, Any]) -> None:
    stripped = {
        k: v for k, v in manifest.items() if k not in ("manifest_hash", "manifest_signature")
    }
    stripped["contracts"] = [
        {k: v for k, v in e.items() if k != "entry_signature"} for e in manifest["contracts"]
    ]
    report = verify_manifest(stripped, public_key=demo_key().public_key, allow_unsigned=True)
    assert (report.manifest_hash_status, report.manifest_signature_status) == ("absent", "absent")
    assert {e.entry_signature_status for e in report.entries} == {"absent"}
    assert not report.ok  # an absent manifest hash never passes


def test_loud_collision_and_duplicate(manifest: dict[str, Any]) -> None:
    colliding = copy.deepcopy(manifest)
    twin = copy.deepcopy(colliding["contracts"][0])
    colliding["contracts"].append(twin)
    report = verify_manifest(colliding, public_key=None, allow_unsigned=True)
    assert report.duplicate_keys == (("acme.a.v0", "0.1.0"),)
    assert not report.ok
    twin["contract_hash"] = "e" * 64
    report = verify_manifest(colliding, public_key=None, allow_unsigned=True)
    assert report.loud_collisions == (("acme.a.v0", "0.1.0"),)
    assert report.to_json()["loud_collisions"] == [["acme.a.v0", "0.1.0"]]


def test_unknown_status_is_invalid() -> None:
    entry = {"adapter_id": "acme.x.v0", "adapter_version": "0.1.0", "status": "retired"}
    entry["entry_hash"] = entry_hash(entry)
    report = verify_entry(entry, None)
    assert report.entry_hash_status == "ok"
    assert not report.status_valid
    assert report.to_json()["status_validity"] == "invalid"


@pytest.mark.parametrize(
    "document", [[], {"contracts": {}}, {"contracts": [1]}, {"contracts": "x"}]
)
def test_malformed_manifest_is_an_input_error(document: Any) -> None:
    with raises_code("manifest.invalid") as info:
        verify_manifest(document, public_key=None)
    assert info.value.code == "manifest.invalid"
    assert info.value.exit_code == 2


@settings(max_examples=40, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=2),
    field=st.sampled_from(ENTRY_HASH_FIELDS),
    suffix=st.text(min_size=1, max_size=5),
)
def test_any_single_change_fails(
    manifest: dict[str, Any], index: int, field: str, suffix: str
) -> None:
    tampered = copy.deepcopy(manifest)
    tampered["contracts"][index][field] = str(tampered["contracts"][index][field]) + suffix
    assert not verify_manifest(tampered, public_key=demo_key().public_key).ok


def test_publisher_document_parse_and_binding(manifest: dict[str, Any]) -> None:
    key = demo_key()
    document = parse_publisher_document(
        {
            "publisher_id": "demo.publisher",
            "publisher_key_id": "demo-k1",
            "public_key_base64": key.public_key.b64,
        }
    )
    document.check_matches(manifest)
    with raises_code("manifest.publisher_mismatch"):
        document.check_matches({**manifest, "publisher_key_id": "demo-k2"})


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"publisher_id": "p", "publisher_key_id": "k"},
        {"publisher_id": "p", "publisher_key_id": "k", "public_key_base64": "AAAA"},
        {"publisher_id": "p", "publisher_key_id": "k", "public_key_base64": "A" * 43 + "="},
        {"publisher_id": 1, "publisher_key_id": "k", "public_key_base64": "x"},
    ],
)
def test_bad_publisher_documents(document: Any) -> None:
    with raises_code("manifest.publisher_document_invalid") as info:
        parse_publisher_document(document)
    assert info.value.code == "manifest.publisher_document_invalid"
