"""plan_pin: what `affidavit adapter pin` records from a signed manifest, and what it refuses.

Each manifest here is a real signed one (the demo publisher's key), tampered in exactly one way
and re-signed where the tamper must not show elsewhere, so the refusal names only that failure
(docs/formats.md §3; seed 003 "Adoption workflow" and lifecycle table).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from affidavit.attest.publishing.publish import build_manifest, sign_entry
from affidavit.verify.contracts.contract import contract_hash, input_schema_hash
from affidavit.verify.contracts.manifest import manifest_hash, verify_manifest
from affidavit.verify.contracts.pins import plan_pin

from tests.attest.publishing.test_publish_support import (
    DEMO_KEY_ID,
    DEMO_PUBLISHER_ID,
    FIXED_TIME,
    demo_key,
    make_contract,
    make_entry,
    other_key,
)
from tests.conftest import raises_code

ID = "acme.eval_suite.v0"
LABEL = f"{ID}@0.1.0"
HASH = make_contract()["contract_hash"]
NEXT = f"{ID}@0.2.0"
DUPLICATE = "the manifest lists this (adapter_id, adapter_version) more than once"


def _entry(version: str = "0.1.0", **lifecycle: str) -> dict[str, Any]:
    entry = make_entry(None, make_contract(ID, version))["entry"]
    entry.update(lifecycle)
    return entry


def _manifest(*entries: dict[str, Any]) -> dict[str, Any]:
    return build_manifest(
        list(entries) or [_entry()],
        demo_key(),
        publisher_id=DEMO_PUBLISHER_ID,
        publisher_key_id=DEMO_KEY_ID,
        generated_at=FIXED_TIME,
    )


def _signature(key: Any, hex_digest: str) -> str:
    return base64.b64encode(key.sign(hex_digest.encode("ascii"))).decode("ascii")


def _resign(document: dict[str, Any]) -> dict[str, Any]:
    # The publisher re-hashes and re-signs the manifest over whatever its entries now say.
    document["manifest_hash"] = manifest_hash(document)
    document["manifest_signature"] = _signature(demo_key(), document["manifest_hash"])
    return document


def _plan(
    document: dict[str, Any],
    *,
    version: str = "0.1.0",
    pinned: str = HASH,
    key: bool = True,
    allow: bool = False,
) -> Any:
    report = verify_manifest(document, public_key=demo_key().public_key if key else None)
    return plan_pin(
        ID,
        version,
        pinned,
        manifest=document,
        manifest_report=report,
        allow_revoked_for_legacy_inspection=allow,
    )


def _refusal(document: dict[str, Any], **kwargs: Any) -> str:
    with raises_code("pin.entry_unverified") as info:
        _plan(document, **kwargs)
    return info.value.message


def _expected_pin(document: dict[str, Any], index: int = 0, **extra: Any) -> dict[str, Any]:
    entry = document["contracts"][index]
    return {
        "adapter_id": ID,
        "adapter_version": entry["adapter_version"],
        "contract_hash": entry["contract_hash"],
        "entry_hash": entry["entry_hash"],
        "publisher_id": DEMO_PUBLISHER_ID,
        "status": "active",
        "entry_hash_status": "ok",
        "entry_signature_status": "ok",
        **extra,
    }


# ------------------------------------------------------------------------------------------
# Verified entries are pinned with what was seen


def test_a_verified_active_entry_is_pinned_with_its_statuses() -> None:
    document = _manifest()
    plan = _plan(document)
    assert dict(plan.pin) == _expected_pin(document)
    assert plan.message is None


def test_without_the_key_the_pin_records_the_signature_unchecked() -> None:
    document = _manifest()
    plan = _plan(document, key=False)
    assert dict(plan.pin) == _expected_pin(document, entry_signature_status="no_public_key")


def test_an_unsigned_manifest_is_recorded_as_unsigned_not_trusted() -> None:
    # No entry_hash, no signatures, no manifest_hash: nothing is claimed, nothing is trusted.
    document = {"publisher_id": DEMO_PUBLISHER_ID, "contracts": [_entry()]}
    plan = _plan(document)
    assert dict(plan.pin) == {
        "adapter_id": ID,
        "adapter_version": "0.1.0",
        "contract_hash": HASH,
        "entry_hash": "",
        "publisher_id": DEMO_PUBLISHER_ID,
        "status": "active",
        "entry_hash_status": "unsigned_manifest",
        "entry_signature_status": "absent",
    }
    assert plan.message is None


def test_a_bare_entry_is_recorded_with_empty_fields_and_the_active_default() -> None:
    # An entry naming only what identifies it: no publisher, no status (seed 003: active).
    bare = {"adapter_id": ID, "adapter_version": "0.1.0", "contract_hash": HASH}
    plan = _plan({"contracts": [bare]}, key=False)
    assert dict(plan.pin) == {
        "adapter_id": ID,
        "adapter_version": "0.1.0",
        "contract_hash": HASH,
        "entry_hash": "",
        "publisher_id": "",
        "status": "active",
        "entry_hash_status": "unsigned_manifest",
        "entry_signature_status": "absent",
    }


@pytest.mark.parametrize(
    ("adapter_id", "version", "pinned"),
    [("Acme", "0.1.0", HASH), (ID, "0.1", HASH), (ID, "0.1.0", HASH.upper())],
)
def test_malformed_arguments_are_refused_before_any_manifest(
    adapter_id: str, version: str, pinned: str
) -> None:
    with raises_code("pin.invalid_argument"):
        plan_pin(adapter_id, version, pinned, manifest=_manifest())


def test_the_entry_pinned_is_the_one_with_that_version() -> None:
    # Two versions of the same id; the 0.1.0 entry carries a bad signature, 0.2.0 is sound.
    document = _manifest(_entry(), _entry("0.2.0"))
    assert [e["adapter_version"] for e in document["contracts"]] == ["0.1.0", "0.2.0"]
    first = document["contracts"][0]
    first["entry_signature"] = _signature(other_key(), first["entry_hash"])
    _resign(document)
    second = make_contract(ID, "0.2.0")["contract_hash"]
    plan = _plan(document, version="0.2.0", pinned=second)
    assert dict(plan.pin) == _expected_pin(document, 1)
    assert _refusal(document) == f"{LABEL}: not pinned: entry_signature bad"


def test_an_entry_not_in_the_manifest_is_pinned_unverified() -> None:
    plan = _plan(_manifest(_entry("0.2.0")))
    assert dict(plan.pin) == {
        "adapter_id": ID,
        "adapter_version": "0.1.0",
        "contract_hash": HASH,
        "entry_hash_status": "manifest_entry_not_found",
        "publisher_id": None,
    }
    assert plan.message == f"WARNING: {LABEL} is not in the manifest; publisher NOT verified."


def test_a_manifest_without_its_report_is_a_usage_error() -> None:
    with raises_code("usage.invalid"):
        plan_pin(ID, "0.1.0", HASH, manifest=_manifest())


# ------------------------------------------------------------------------------------------
# One tamper each: refused, naming that failure only


def test_a_bad_manifest_signature_is_refused() -> None:
    document = _manifest()
    document["manifest_signature"] = _signature(other_key(), document["manifest_hash"])
    assert _refusal(document) == f"{LABEL}: not pinned: manifest_signature bad"


def test_a_tampered_manifest_is_refused() -> None:
    document = _manifest()
    document["publisher_key_id"] = "demo-k2"  # under manifest_hash, not re-signed
    assert _refusal(document) == f"{LABEL}: not pinned: manifest_hash mismatch"


def test_a_bad_entry_signature_is_refused() -> None:
    document = _manifest()
    entry = document["contracts"][0]
    entry["entry_signature"] = _signature(other_key(), entry["entry_hash"])
    _resign(document)
    assert _refusal(document) == f"{LABEL}: not pinned: entry_signature bad"


def test_a_tampered_entry_is_refused_even_in_a_resigned_manifest() -> None:
    document = _manifest()
    document["contracts"][0]["release_notes"] = "edited after signing"
    _resign(document)
    assert _refusal(document) == f"{LABEL}: not pinned: entry_hash mismatch"


def test_a_duplicate_entry_is_refused() -> None:
    document = _manifest()
    document["contracts"].append(copy.deepcopy(document["contracts"][0]))
    _resign(document)
    report = verify_manifest(document, public_key=demo_key().public_key)
    assert (report.duplicate_keys, report.loud_collisions) == (((ID, "0.1.0"),), ())
    assert _refusal(document) == f"{LABEL}: not pinned: {DUPLICATE}"


def test_a_colliding_entry_is_refused() -> None:
    # Same (id, version), another contract: each entry is soundly signed, the pair is loud.
    other = {k: v for k, v in make_contract().items() if not k.endswith("_hash")}
    other["validator_version"] = "1.0.1"
    other["input_schema_hash"] = input_schema_hash(other)
    other["contract_hash"] = contract_hash(other)
    document = _manifest()
    document["contracts"].append(sign_entry(make_entry(None, other)["entry"], demo_key()))
    _resign(document)
    report = verify_manifest(document, public_key=demo_key().public_key)
    assert (report.loud_collisions, report.duplicate_keys) == (((ID, "0.1.0"),), ())
    assert _refusal(document) == f"{LABEL}: not pinned: {DUPLICATE}"
    assert _refusal(document, pinned=other["contract_hash"]) == f"{LABEL}: not pinned: {DUPLICATE}"


def test_a_duplicate_of_another_version_does_not_refuse_this_one() -> None:
    document = _manifest(_entry(), _entry("0.2.0"))
    document["contracts"].append(copy.deepcopy(document["contracts"][1]))
    _resign(document)
    assert dict(_plan(document).pin) == _expected_pin(document)


def test_every_failure_is_named() -> None:
    document = _manifest()
    entry = document["contracts"][0]
    entry["release_notes"] = "edited after signing"
    entry["entry_signature"] = _signature(other_key(), entry["entry_hash"])
    document["contracts"].append(copy.deepcopy(entry))
    document["manifest_signature"] = _signature(other_key(), document["manifest_hash"])
    assert _refusal(document) == f"{LABEL}: not pinned: " + "; ".join(
        [
            "manifest_hash mismatch",
            "manifest_signature bad",
            DUPLICATE,
            "entry_hash mismatch",
            "entry_signature bad",
        ]
    )


def test_another_contract_hash_is_refused() -> None:
    document = _manifest()
    with raises_code("pin.hash_mismatch") as info:
        _plan(document, pinned="0" * 64)
    assert info.value.details == {"manifest": HASH, "pinned": "0" * 64}
    assert info.value.message == (
        f"{LABEL}: the manifest entry has contract_hash {HASH}, not {'0' * 64}"
    )


# ------------------------------------------------------------------------------------------
# Lifecycle (seed 003 table): the advice recorded and the line shown


def test_a_superseded_entry_is_pinned_with_a_notice() -> None:
    document = _manifest(_entry(replaced_by=NEXT, supersedes=f"{ID}@0.0.1"))
    plan = _plan(document)
    assert plan.pin["replaced_by"] == NEXT
    assert plan.pin["supersedes"] == f"{ID}@0.0.1"
    assert plan.pin["status"] == "active"
    assert "lifecycle_advice" in plan.pin
    assert "inspection_only" not in plan.pin
    assert plan.message == f"NOTICE: {LABEL} is superseded by {NEXT}."


@pytest.mark.parametrize(
    ("replaced_by", "shown"), [(NEXT, NEXT), ("", "(none declared)")], ids=["named", "none"]
)
def test_a_deprecated_entry_is_pinned_with_a_warning(replaced_by: str, shown: str) -> None:
    plan = _plan(_manifest(_entry(status="deprecated", replaced_by=replaced_by)))
    assert plan.pin["status"] == "deprecated"
    assert ("replaced_by" in plan.pin) is bool(replaced_by)
    assert "DEPRECATED" in plan.pin["lifecycle_advice"]
    assert "inspection_only" not in plan.pin
    assert plan.message == f"WARNING: {LABEL} is DEPRECATED. Replacement: {shown}."


@pytest.mark.parametrize(
    ("replaced_by", "shown"), [(NEXT, NEXT), ("", "none declared")], ids=["named", "none"]
)
def test_a_revoked_entry_is_refused_unless_for_inspection(replaced_by: str, shown: str) -> None:
    document = _manifest(_entry(status="revoked", replaced_by=replaced_by))
    with raises_code("pin.revoked") as info:
        _plan(document)
    assert info.value.exit_code == 3
    assert info.value.message == (
        f"{LABEL} is REVOKED: refusing to pin it for new work (replacement: {shown})"
    )
    assert info.value.details == {"replaced_by": replaced_by}
    report = verify_manifest(document, public_key=demo_key().public_key)
    with raises_code("pin.revoked"):  # refusing is the default
        plan_pin(ID, "0.1.0", HASH, manifest=document, manifest_report=report)
    plan = _plan(document, allow=True)
    assert plan.pin["status"] == "revoked"
    assert plan.pin["inspection_only"] is True
    assert "inspection-only" in plan.pin["lifecycle_advice"]
    assert plan.message == (
        f"WARNING: pinning REVOKED contract {LABEL} as inspection-only; do not adopt it for "
        "new work."
    )


def test_inspection_only_is_for_revoked_entries_alone() -> None:
    plan = _plan(_manifest(), allow=True)
    assert dict(plan.pin) == _expected_pin(_manifest())
    assert plan.message is None
