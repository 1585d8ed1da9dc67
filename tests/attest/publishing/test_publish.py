"""attest.publish: entries, manifests, lifecycle edits, pin files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.publishing import publish
from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash
from affidavit.verify.contracts.manifest import ENTRY_HASH_FIELDS, verify_entry, verify_manifest
from affidavit.verify.contracts.pin_file import parse_pin_file

from tests.attest.publishing.test_publish_support import (
    DEMO_KEY_ID,
    DEMO_PUBLISHER_ID,
    FIXED_TIME,
    demo_key,
    make_contract,
    make_entry,
    make_manifest,
    other_key,
)
from tests.conftest import raises_code


def test_attest_document_signed_and_unsigned() -> None:
    declaration = make_contract()
    unsigned = make_entry(None, declaration)
    assert unsigned["signed"] is False
    assert "entry_signature" not in unsigned
    assert unsigned["next_steps"][0].startswith("UNSIGNED")
    assert list(unsigned["entry"]) == list(ENTRY_HASH_FIELDS)
    assert unsigned["entry"]["contract_hash"] == declaration["contract_hash"]
    signed = make_entry(demo_key(), declaration)
    assert signed["entry_hash"] == unsigned["entry_hash"]
    entry = {**signed["entry"], "entry_hash": signed["entry_hash"]}
    entry["entry_signature"] = signed["entry_signature"]
    report = verify_entry(entry, demo_key().public_key)
    assert (report.entry_hash_status, report.entry_signature_status) == ("ok", "ok")


def test_entry_fields_are_validated() -> None:
    with raises_code("entry.lifecycle_invalid"):
        make_entry(None, make_contract(), status="retired")
    with raises_code("entry.lifecycle_invalid"):
        make_entry(None, make_contract(), replaced_by="not-a-ref")
    with raises_code("entry.lifecycle_invalid"):
        make_entry(None, make_contract(), distribution_channel="elsewhere")
    with raises_code("entry.control_character") as caught:
        publish.build_entry(
            make_contract(),
            publisher_id=DEMO_PUBLISHER_ID,
            publisher_key_id=DEMO_KEY_ID,
            published_at=FIXED_TIME,
            docs_url="https://example.invalid/\u0000",
        )
    assert caught.value.code == "entry.control_character"


def test_manifest_orders_by_semver_and_verifies() -> None:
    manifest = make_manifest(
        demo_key(),
        [
            make_contract("acme.b.v0", "0.10.0"),
            make_contract("acme.b.v0", "0.9.0"),
            make_contract("acme.a.v0"),
        ],
    )
    order = [(e["adapter_id"], e["adapter_version"]) for e in manifest["contracts"]]
    assert order == [("acme.a.v0", "0.1.0"), ("acme.b.v0", "0.9.0"), ("acme.b.v0", "0.10.0")]
    assert manifest["public_key_base64"] == demo_key().public_key.b64
    assert verify_manifest(manifest, public_key=demo_key().public_key).ok


def test_build_refuses_duplicates_other_publishers_and_foreign_signatures() -> None:
    entry = make_entry(None, make_contract())["entry"]
    kwargs: dict[str, Any] = {
        "publisher_id": DEMO_PUBLISHER_ID,
        "publisher_key_id": DEMO_KEY_ID,
        "generated_at": FIXED_TIME,
    }
    with raises_code("manifest.duplicate_entry"):
        publish.build_manifest([entry, dict(entry)], demo_key(), **kwargs)
    with raises_code("entry.publisher_mismatch"):
        publish.build_manifest([{**entry, "publisher_id": "x"}], demo_key(), **kwargs)
    foreign = publish.sign_entry(entry, other_key())
    with raises_code("entry.signature_invalid"):
        publish.build_manifest([foreign], demo_key(), **kwargs)
    with raises_code("entry.hash_mismatch"):
        publish.build_manifest([{**entry, "entry_hash": "0" * 64}], demo_key(), **kwargs)
    with pytest.raises(errors.ContractError):
        publish.build_manifest([{**entry, "adapter_version": "1.0"}], demo_key(), **kwargs)


def test_entry_from_document_accepts_attest_docs_and_bare_entries() -> None:
    document = make_entry(demo_key(), make_contract())
    entry = publish.entry_from_document(document)
    assert entry["entry_hash"] == document["entry_hash"]
    assert entry["entry_signature"] == document["entry_signature"]
    assert publish.entry_from_document(document["entry"]) == document["entry"]
    with pytest.raises(errors.ContractError):
        publish.entry_from_document({"adapter_id": "a.b"})
    with pytest.raises(errors.ContractError):
        publish.entry_from_document({**document["entry"], "status": 1})


def test_set_lifecycle_keeps_both_hashes() -> None:
    declaration = make_contract()
    for status, pointer in (("deprecated", "acme.eval_suite.v0@0.2.0"), ("revoked", None)):
        updated = publish.set_lifecycle(declaration, status=status, replaced_by=pointer)
        assert updated["status"] == status
        assert contract_hash(updated) == declaration["contract_hash"]
        assert input_schema_hash(updated) == declaration["input_schema_hash"]
    superseded = publish.set_lifecycle(
        declaration, status="superseded", replaced_by="acme.eval_suite.v0@0.2.0"
    )
    assert (superseded["status"], superseded["replaced_by"]) == (
        "active",
        "acme.eval_suite.v0@0.2.0",
    )
    assert "replaced_by" not in publish.set_lifecycle(superseded, status="active")
    with raises_code("entry.lifecycle_invalid"):
        publish.set_lifecycle(declaration, status="superseded")
    with raises_code("entry.lifecycle_invalid"):
        publish.set_lifecycle(
            declaration, status="deprecated", replaced_by="acme.eval_suite.v0@0.1.0"
        )
    with raises_code("entry.lifecycle_invalid"):
        publish.set_lifecycle(declaration, status="gone")


def _pin(adapter_id: str, version: str) -> dict[str, Any]:
    return {"adapter_id": adapter_id, "adapter_version": version, "contract_hash": "a" * 64}


def test_write_pin_keeps_sorts_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "pinned_adapters.json"
    path.write_text(
        json.dumps(
            {"pinned_adapters": [{**_pin("z.z", "1.0.0"), "custom": True}], "_note": "mine", "x": 1}
        )
    )
    publish.write_pin(path, _pin("a.a", "1.0.0"))
    publish.write_pin(path, {**_pin("a.a", "1.0.0"), "contract_hash": "b" * 64})
    document = json.loads(path.read_text())
    assert [p["adapter_id"] for p in document["pinned_adapters"]] == ["a.a", "z.z"]
    assert document["pinned_adapters"][0]["contract_hash"] == "b" * 64
    assert document["pinned_adapters"][1]["custom"] is True
    assert (document["_note"], document["x"]) == ("mine", 1)
    assert path.read_bytes() == publish.render_pin_file(document)
    assert parse_pin_file(document).pins[1].raw["custom"] is True


@pytest.mark.parametrize("content", [b"{not json", b'{"pinned_adapters": 5}', b"[]"])
def test_write_pin_refuses_a_malformed_file_and_keeps_it(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "pinned_adapters.json"
    path.write_bytes(content)
    with pytest.raises(errors.AffidavitError) as caught:
        publish.write_pin(path, _pin("a.a", "1.0.0"))
    assert caught.value.exit_code == 2, caught.value.code
    assert path.read_bytes() == content
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind
