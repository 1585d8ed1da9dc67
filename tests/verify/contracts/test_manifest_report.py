"""The manifest verifier's report and refusals, asserted whole (issue 36 mutation campaign;
docs/formats.md §3): the peer's JSON report of a clean and a tampered manifest, the hashed body
with its defaults, and every refusal's wire form (``{code, message, details}``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.contracts.manifest import (
    check_entry_text,
    check_signature,
    contracts_of,
    entry_hash,
    manifest_hash,
    manifest_hash_body,
    parse_publisher_document,
    verify_entry,
    verify_manifest,
)

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    make_manifest,
    other_key,
)
from tests.conftest import raises_code


def _manifest() -> dict[str, Any]:
    return make_manifest(demo_key(), [make_contract("acme.a.v0"), make_contract("acme.b.v0")])


def _entry_json(index: int, adapter_id: str, **changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": index,
        "adapter_id": adapter_id,
        "adapter_version": "0.1.0",
        "status": "active",
        "entry_hash_status": "ok",
        "entry_signature_status": "ok",
    }
    out.update(changes)
    return out


def test_a_verified_manifest_reports_every_field() -> None:
    report = verify_manifest(_manifest(), public_key=demo_key().public_key)
    assert report.to_json() == {
        "ok": True,
        "manifest_hash_status": "ok",
        "manifest_signature_status": "ok",
        "loud_collisions": [],
        "publisher_document_used": None,
        "public_key_supplied": True,
        "entry_count": 2,
        "entries": [_entry_json(0, "acme.a.v0"), _entry_json(1, "acme.b.v0")],
        "duplicate_keys": [],
        "allow_unsigned": False,
        "failures": [],
    }


def test_a_tampered_manifest_reports_each_failed_check() -> None:
    """One entry's status made unknown, another's release notes edited, the manifest hash
    replaced: the report says what was expected and what was recomputed, entry by entry."""
    document = _manifest()
    original = copy.deepcopy(document)
    document["contracts"][0]["status"] = "retired"
    document["contracts"][1]["release_notes"] = "edited"
    document["manifest_hash"] = "f" * 64
    report = verify_manifest(
        document, public_key=demo_key().public_key, publisher_document_used="publisher.json"
    )
    first, second = document["contracts"]
    assert report.to_json() == {
        "ok": False,
        "manifest_hash_status": "mismatch",
        "manifest_signature_status": "bad",
        "loud_collisions": [],
        "publisher_document_used": "publisher.json",
        "public_key_supplied": True,
        "entry_count": 2,
        "entries": [
            _entry_json(
                0,
                "acme.a.v0",
                status="retired",
                entry_hash_status="mismatch",
                expected=original["contracts"][0]["entry_hash"],
                recomputed=entry_hash(first),
                status_validity="invalid",
            ),
            _entry_json(
                1,
                "acme.b.v0",
                entry_hash_status="mismatch",
                expected=original["contracts"][1]["entry_hash"],
                recomputed=entry_hash(second),
            ),
        ],
        "duplicate_keys": [],
        "allow_unsigned": False,
        "failures": [
            "manifest_hash mismatch",
            "manifest_signature bad",
            "entry[0] acme.a.v0@0.1.0 entry_hash mismatch",
            "entry[0] acme.a.v0@0.1.0 status 'retired' invalid",
            "entry[1] acme.b.v0@0.1.0 entry_hash mismatch",
        ],
        "manifest_hash_expected": "f" * 64,
        "manifest_hash_recomputed": manifest_hash(document),
    }


def test_the_manifest_hash_body_fills_what_is_missing_as_the_peer_does() -> None:
    """docs/formats.md §3: a missing schema version is "1.0.0", missing publisher fields and
    entry hashes are ""; a given schema version is covered as it is."""
    bare = {"contracts": [{"entry_hash": "a" * 64}, {}]}
    assert manifest_hash_body(bare) == {
        "manifest_schema_version": "1.0.0",
        "publisher_id": "",
        "publisher_key_id": "",
        "ordered_entry_hashes": ["a" * 64, ""],
    }
    named = {"manifest_schema_version": "2.0.0", "publisher_id": "p", "publisher_key_id": "k"}
    assert manifest_hash_body({**named, "contracts": None}) == {**named, "ordered_entry_hashes": []}
    assert manifest_hash(bare) != manifest_hash({**bare, "manifest_schema_version": "2.0.0"})


@pytest.mark.parametrize(
    ("document", "error"),
    [
        ([], ("a manifest must be a JSON object", {})),
        ({"contracts": {}}, ("manifest 'contracts' must be an array", {})),
        ({"contracts": [{}, 1]}, ("manifest contracts[1] must be an object", {"index": 1})),
    ],
)
def test_a_malformed_manifest_names_what_is_wrong(document: Any, error: Any) -> None:
    with raises_code("manifest.invalid") as info:
        verify_manifest(document, public_key=None)
    message, details = error
    assert info.value.to_json() == {
        "code": "manifest.invalid",
        "message": message,
        "details": details,
    }
    assert contracts_of({"contracts": None}) == []


def test_an_entry_of_other_types_is_reported_as_text() -> None:
    report = verify_entry({"adapter_id": 7, "adapter_version": None, "status": 3}, None, index=4)
    assert report.to_json() == {
        "index": 4,
        "adapter_id": "7",
        "adapter_version": "None",
        "status": "3",
        "entry_hash_status": "absent",
        "entry_signature_status": "absent",
        "status_validity": "invalid",
    }


def test_a_signature_over_anything_but_a_hash_is_bad_never_an_error() -> None:
    key = demo_key()
    upper = "A" * 64  # signed, but not a lowercase hex digest: docs/formats.md §3
    assert check_signature(key.public_key, upper, key.sign_b64(upper.encode())) == "bad"
    assert check_signature(key.public_key, "a" * 64, 5) == "bad"
    assert check_signature(key.public_key, "a" * 64, key.sign_b64(b"a" * 64)) == "ok"
    assert check_signature(other_key().public_key, "a" * 64, key.sign_b64(b"a" * 64)) == "bad"
    assert check_signature(None, "a" * 64, None) == "absent"
    assert check_signature(None, "a" * 64, "x") == "no_public_key"


@pytest.mark.parametrize(
    ("entry", "field", "code_point", "offset"),
    [
        ({"adapter_id": "acme\nx"}, "adapter_id", "000A", 4),
        ({"docs_url": "ok", "release_notes": "a\x1bb"}, "release_notes", "001B", 1),
        ({"status": "ok\x85"}, "status", "0085", 2),
        ({"adapter_version": "1\x7f"}, "adapter_version", "007F", 1),
        ({"publisher_key_id": "\x00"}, "publisher_key_id", "0000", 0),
    ],
)
def test_a_control_character_in_a_hashed_field_is_refused(
    entry: dict[str, Any], field: str, code_point: str, offset: int
) -> None:
    with raises_code("entry.control_character") as info:
        check_entry_text(entry)
    assert info.value.to_json() == {
        "code": "entry.control_character",
        "message": f"{field} holds control character U+{code_point} at offset {offset}; "
        "nothing is signed",
        "details": {"field": field, "offset": offset},
    }


def test_release_notes_alone_may_span_lines() -> None:
    check_entry_text({"adapter_id": "acme.x.v0", "release_notes": "one\ttwo\nthree\r\n", "n": 1})
    check_entry_text({"unhashed": "a\nb", "status": None})
    with raises_code("entry.control_character"):
        check_entry_text({"docs_url": "https://x.example/\t"})


PUBLISHER = {
    "publisher_id": "demo.publisher",
    "publisher_key_id": "demo-k1",
    "public_key_base64": demo_key().public_key.b64,
}


def test_a_publisher_document_is_read_whole() -> None:
    document = parse_publisher_document({**PUBLISHER, "manifest_url": "https://p.example/m"})
    assert (document.publisher_id, document.publisher_key_id, document.manifest_url) == (
        "demo.publisher",
        "demo-k1",
        "https://p.example/m",
    )
    assert document.public_key.b64 == demo_key().public_key.b64
    assert parse_publisher_document(PUBLISHER).manifest_url is None


@pytest.mark.parametrize(
    ("document", "message", "details"),
    [
        ([], "a publisher document must be a JSON object", {}),
        (
            {**PUBLISHER, "publisher_key_id": ""},
            "publisher document: publisher_key_id missing or not a string",
            {},
        ),
        (
            {k: v for k, v in PUBLISHER.items() if k != "publisher_id"},
            "publisher document: publisher_id missing or not a string",
            {},
        ),
        (
            {**PUBLISHER, "manifest_url": 3},
            "publisher document: manifest_url must be a string",
            {},
        ),
        (
            {**PUBLISHER, "public_key_base64": "AAAA"},
            "publisher document: public_key_base64: an Ed25519 public key is 32 bytes, got 3",
            {"cause": "key.wrong_length"},
        ),
    ],
)
def test_a_bad_publisher_document_says_which_field(
    document: Any, message: str, details: dict[str, Any]
) -> None:
    with raises_code("manifest.publisher_document_invalid") as info:
        parse_publisher_document(document)
    assert info.value.to_json() == {
        "code": "manifest.publisher_document_invalid",
        "message": message,
        "details": details,
    }


@pytest.mark.parametrize(
    ("manifest", "field", "got", "want"),
    [
        ({"publisher_id": "demo.publisher", "publisher_key_id": "demo-k2"}, "publisher_key_id",
         "demo-k2", "demo-k1"),
        ({"publisher_key_id": "demo-k1"}, "publisher_id", None, "demo.publisher"),
    ],
)  # fmt: skip
def test_a_manifest_of_another_publisher_or_key_is_refused(
    manifest: dict[str, Any], field: str, got: str | None, want: str
) -> None:
    document = parse_publisher_document(PUBLISHER)
    document.check_matches({"publisher_id": "demo.publisher", "publisher_key_id": "demo-k1"})
    with raises_code("manifest.publisher_mismatch") as info:
        document.check_matches(manifest)
    assert info.value.to_json() == {
        "code": "manifest.publisher_mismatch",
        "message": f"the manifest's {field} is {got!r}, the publisher document's is {want!r}",
        "details": {"field": field, "manifest": got, "publisher_document": want},
    }


def test_an_entry_without_its_names_or_status_reports_the_defaults() -> None:
    """docs/formats.md §3: a missing status is "active"; missing names are ""."""
    entry: dict[str, Any] = {}
    entry["entry_hash"] = entry_hash(entry)
    assert verify_entry(entry, None).to_json() == {
        "index": 0,
        "adapter_id": "",
        "adapter_version": "",
        "status": "active",
        "entry_hash_status": "ok",
        "entry_signature_status": "absent",
    }


def test_unsigned_is_accepted_only_when_the_caller_says_so() -> None:
    """The hashes all recompute and nothing is signed: ok only under allow_unsigned."""
    document = _manifest()
    del document["manifest_signature"]
    for entry in document["contracts"]:
        del entry["entry_signature"]
    strict = verify_manifest(document, public_key=demo_key().public_key)
    assert strict.failures() == [
        "manifest_signature absent",
        "entry[0] acme.a.v0@0.1.0 entry_signature absent",
        "entry[1] acme.b.v0@0.1.0 entry_signature absent",
    ]
    assert not strict.ok
    allowed = verify_manifest(document, public_key=demo_key().public_key, allow_unsigned=True)
    assert (allowed.ok, allowed.failures()) == (True, [])


def test_a_repeated_entry_is_reported_as_a_duplicate_key() -> None:
    document = _manifest()
    document["contracts"].append(copy.deepcopy(document["contracts"][0]))
    document["manifest_hash"] = manifest_hash(document)
    document["manifest_signature"] = demo_key().sign_b64(document["manifest_hash"].encode())
    out = verify_manifest(document, public_key=demo_key().public_key).to_json()
    assert (out["ok"], out["duplicate_keys"], out["loud_collisions"]) == (
        False,
        [["acme.a.v0", "0.1.0"]],
        [],
    )
    assert out["failures"] == ["duplicate entry acme.a.v0@0.1.0"]
