"""verify.pins: pin files, lifecycle (seed 003 table), plan_pin and the pin check."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.contracts.lifecycle import (
    active_head,
    exact_match,
    lifecycle_state,
    parse_adapter_ref,
)
from affidavit.verify.contracts.manifest import entry_hash, verify_manifest
from affidavit.verify.contracts.pin_file import parse_pin_file
from affidavit.verify.contracts.pins import Declaration, check_pins, plan_pin
from affidavit.verify.results import Problem

from tests.attest.publishing.test_publish_support import demo_key, make_contract, make_manifest
from tests.conftest import raises_code

HASH = make_contract()["contract_hash"]


def _manifest(**lifecycle: str) -> dict[str, Any]:
    document = make_manifest(demo_key(), [make_contract()])
    entry = document["contracts"][0]
    if lifecycle:  # re-sign after a lifecycle change, as a publisher would
        from affidavit.attest.publishing.publish import build_manifest

        entry = {k: v for k, v in entry.items() if k not in ("entry_hash", "entry_signature")}
        entry.update(lifecycle)
        document = build_manifest(
            [entry],
            demo_key(),
            publisher_id=document["publisher_id"],
            publisher_key_id=document["publisher_key_id"],
            generated_at=document["generated_at"],
        )
    return document


def _plan(document: dict[str, Any], *, key: bool = True, allow: bool = False) -> Any:
    report = verify_manifest(document, public_key=demo_key().public_key if key else None)
    return plan_pin(
        "acme.eval_suite.v0",
        "0.1.0",
        HASH,
        manifest=document,
        manifest_report=report,
        allow_revoked_for_legacy_inspection=allow,
    )


def test_lifecycle_states_follow_the_seed_table() -> None:
    assert lifecycle_state({}) == "active"
    assert lifecycle_state({"status": "active", "replaced_by": "a.b@1.0.0"}) == "superseded"
    assert lifecycle_state({"status": "deprecated"}) == "deprecated"
    assert lifecycle_state({"status": "revoked"}) == "revoked"
    assert lifecycle_state({"status": "bogus"}) == "revoked"  # fail closed


def test_active_head_uses_semver_not_string_order() -> None:
    rows = [
        {"adapter_id": "a.b", "adapter_version": "0.9.0"},
        {"adapter_id": "a.b", "adapter_version": "0.10.0", "status": "active"},
        {"adapter_id": "a.b", "adapter_version": "2.0.0", "status": "deprecated"},
        {"adapter_id": "a.b", "adapter_version": "1.0", "status": "active"},
        {"adapter_id": "a.c", "adapter_version": "9.0.0"},
    ]
    head = active_head(rows, "a.b")
    assert head is not None
    assert head["adapter_version"] == "0.10.0"
    assert active_head(rows, "a.z") is None
    assert exact_match(rows, "a.b", "2.0.0") is rows[2]
    assert exact_match(rows, "a.b", "3.0.0") is None


@pytest.mark.parametrize("ref", ["a.b@1.0", "a.b", "A.b@1.0.0", "a.b@1.0.0@x"])
def test_bad_adapter_refs(ref: str) -> None:
    with raises_code("entry.lifecycle_invalid"):
        parse_adapter_ref(ref)


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"pinned_adapters": {}},
        {"pinned_adapters": [1]},
        {"pinned_adapters": [{"adapter_id": "a.b", "adapter_version": "1.0.0"}]},
        {"pinned_adapters": [{"adapter_id": "a.b", "adapter_version": "1", "contract_hash": HASH}]},
        {
            "pinned_adapters": [
                {"adapter_id": "a.b", "adapter_version": "1.0.0", "contract_hash": "AB"}
            ]
        },
        {
            "pinned_adapters": [
                {"adapter_id": "a.b", "adapter_version": "1.0.0", "contract_hash": HASH}
            ]
            * 2
        },
        {
            "pinned_adapters": [
                {
                    "adapter_id": "a.b",
                    "adapter_version": "1.0.0",
                    "contract_hash": HASH,
                    "status": 3,
                }
            ]
        },
    ],
)
def test_malformed_pin_files(document: Any) -> None:
    with raises_code("pin.file_invalid") as info:
        parse_pin_file(document)
    assert (info.value.code, info.value.exit_code) == ("pin.file_invalid", 2)


def test_plan_without_manifest_says_so() -> None:
    plan = plan_pin("acme.eval_suite.v0", "0.1.0", HASH)
    assert plan.pin["entry_hash_status"] == "no_manifest_supplied"
    assert plan.pin["publisher_id"] is None
    assert plan.message is None


def test_plan_with_verified_manifest() -> None:
    document = _manifest()
    plan = _plan(document)
    assert plan.pin["entry_hash"] == document["contracts"][0]["entry_hash"]
    assert (plan.pin["entry_hash_status"], plan.pin["entry_signature_status"]) == ("ok", "ok")
    assert "lifecycle_advice" not in plan.pin
    unverified = _plan(document, key=False)
    assert unverified.pin["entry_signature_status"] == "no_public_key"


def test_plan_superseded_deprecated_revoked() -> None:
    superseded = _plan(_manifest(replaced_by="acme.eval_suite.v0@0.2.0"))
    assert superseded.message is not None
    assert superseded.message.startswith("NOTICE:")
    assert "acme.eval_suite.v0@0.2.0" in superseded.message
    deprecated = _plan(_manifest(status="deprecated"))
    assert deprecated.message is not None
    assert deprecated.message.startswith("WARNING:")
    assert "DEPRECATED" in deprecated.pin["lifecycle_advice"]
    revoked = _manifest(status="revoked")
    with raises_code("pin.revoked") as info:
        _plan(revoked)
    assert info.value.exit_code == 3
    inspection = _plan(revoked, allow=True)
    assert inspection.pin["inspection_only"] is True
    assert "inspection-only" in inspection.pin["lifecycle_advice"]


def test_plan_refuses_unverified_or_different_entries() -> None:
    document = _manifest()
    with raises_code("pin.hash_mismatch"):
        plan_pin(
            "acme.eval_suite.v0",
            "0.1.0",
            "0" * 64,
            manifest=document,
            manifest_report=verify_manifest(document, public_key=None),
        )
    tampered = copy.deepcopy(document)
    tampered["contracts"][0]["release_notes"] = "edited"
    with raises_code("pin.entry_unverified") as info:
        _plan(tampered)
    assert "entry_hash mismatch" in info.value.message
    missing = _plan({**document, "contracts": []} | {"manifest_hash": None}, key=False)
    assert missing.pin["entry_hash_status"] == "manifest_entry_not_found"


def _pins(*pins: dict[str, Any]) -> Any:
    return parse_pin_file({"pinned_adapters": list(pins)})


PIN = {"adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0", "contract_hash": HASH}


def test_check_pins_outcomes() -> None:
    good = Declaration("c.json", make_contract())
    assert check_pins(_pins(PIN), [good]).exit_code == 0
    edited = make_contract(output_fields=["signal_a", "signal_b"])
    mismatch = check_pins(_pins(PIN), [Declaration("c.json", edited)])
    assert mismatch.exit_code == 1
    assert any("declares contract_hash" in p.message for p in mismatch.pins[0].problems)
    missing = check_pins(_pins(PIN), [])
    assert missing.exit_code == 1
    assert "declaration missing" in missing.pins[0].problems[0].message
    revoked = check_pins(_pins(PIN), [Declaration("c.json", make_contract(status="revoked"))])
    assert (revoked.exit_code, revoked.pins[0].revoked_refused) == (3, True)
    inspection = {**PIN, "status": "revoked", "lifecycle_advice": "REVOKED — inspection-only pin."}
    # Recorded inspection-only pins pass only when the caller allows them explicitly.
    assert check_pins(_pins(inspection), [good]).exit_code == 3
    assert check_pins(_pins(inspection), [good], allow_inspection_only=True).exit_code == 0
    loose = {**PIN, "status": "revoked", "lifecycle_advice": "ok, inspection-only please"}
    assert check_pins(_pins(loose), [good], allow_inspection_only=True).exit_code == 3
    both = check_pins(_pins(PIN), [Declaration("c.json", {**edited, "status": "revoked"})])
    assert both.exit_code == 1  # a tampered contract outranks the revocation


DECLARED = Declaration("contracts/c.json", make_contract())


def test_a_manifest_entry_never_stands_in_for_a_missing_declaration() -> None:
    """Issue 37: every pin finds its declaration where the gate looks; the signed entry vouches
    for a hash, not for the bytes the runtime loads."""
    document = _manifest()
    report = verify_manifest(document, public_key=demo_key().public_key)
    pins = parse_pin_file({"pinned_adapters": [PIN]})
    result = check_pins(
        pins,
        [],
        manifest=document,
        manifest_report=report,
        require_signed=True,
        pin_file_source="pinned_adapters.json",
        manifest_source="m.json",
        searched=["contracts/"],
    )
    assert result.exit_code == 1
    assert result.findings() == [
        {
            "code": "pin.contract_missing",
            "pin": "acme.eval_suite.v0@0.1.0",
            "file": "pinned_adapters.json",
            "message": "declaration missing: no contract file for this pin in contracts/ "
            "(deleted, moved or renamed?)",
        }
    ]


def test_check_pins_with_manifest() -> None:
    document = _manifest()
    report = verify_manifest(document, public_key=demo_key().public_key)
    result = check_pins(
        _pins(PIN), [DECLARED], manifest=document, manifest_report=report, require_signed=True
    )
    assert result.exit_code == 0, result.to_json()
    unsigned = verify_manifest(document, public_key=None)
    soft = check_pins(_pins(PIN), [DECLARED], manifest=document, manifest_report=unsigned)
    assert soft.exit_code == 0
    assert Problem("manifest_signature no_public_key") in soft.notes
    strict = check_pins(
        _pins(PIN), [DECLARED], manifest=document, manifest_report=unsigned, require_signed=True
    )
    assert strict.exit_code == 1
    tampered = copy.deepcopy(document)
    tampered["contracts"][0]["contract_hash"] = "1" * 64
    tampered["contracts"][0]["entry_hash"] = entry_hash(tampered["contracts"][0])
    bad = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=tampered,
        manifest_report=verify_manifest(tampered, public_key=demo_key().public_key),
    )
    assert bad.exit_code == 1
    problems = " ".join(map(str, (*bad.problems, *bad.pins[0].problems)))
    assert "manifest_hash mismatch" in problems
    assert "entry_signature bad" in problems
    assert "differs from the pin" in problems


def test_check_pins_rejects_pins_recorded_against_bad_entries() -> None:
    recorded_bad = {**PIN, "entry_hash_status": "mismatch", "entry_signature_status": "ok"}
    result = check_pins(_pins(recorded_bad), [Declaration("c.json", make_contract())])
    assert result.exit_code == 1


# -- library text names settings, never command-line flags; the CLI names its flags ------------

INSPECTION = {**PIN, "status": "revoked", "inspection_only": True}


def _flag_findings() -> list[Any]:
    """Findings about the caller's settings: require_signed without a manifest, and a recorded
    inspection-only pin without allow_inspection_only."""
    good = Declaration("c.json", make_contract(status="revoked"))
    report = check_pins(_pins(PIN, {**INSPECTION, "adapter_version": "0.2.0"}), [good],
                        require_signed=True)  # fmt: skip
    return [*report.problems, *(p for v in report.pins for p in (*v.problems, *v.notes))]


def test_library_findings_name_parameters_not_flags() -> None:
    texts = [str(problem) for problem in _flag_findings()]
    assert "require_signed needs manifest (or live_manifest) and a public key" in texts
    assert "require_signed needs a signed manifest entry (no manifest given)" in texts
    assert "recorded inspection-only: passes only with allow_inspection_only" in texts
    assert not [text for text in texts if "--" in text]
    with raises_code("pin.revoked") as info:
        _plan(_manifest(status="revoked"))
    assert "--" not in info.value.message
    assert info.value.message.endswith("(replacement: none declared)")


def test_the_cli_words_the_same_findings_with_its_flags(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from affidavit.cli.main import affidavit
    from click.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pinned_adapters.json").write_text(json.dumps({"pinned_adapters": [PIN]}))
    runner = CliRunner()
    # Issue 37 §6: --require-signed without a key (or a manifest) is bad flags: exit 2.
    checked = runner.invoke(affidavit, ["adapter", "pins", "check", "--require-signed", "--json"])
    assert checked.exit_code == 2
    assert checked.stderr.strip() == (
        "error: usage.invalid: --require-signed needs a trusted key: --publisher-doc FILE or "
        "--public-key-base64"
    )
    key = ["--public-key-base64", demo_key().public_key.b64]
    keyed = runner.invoke(affidavit, ["adapter", "pins", "check", "--require-signed", *key])
    assert keyed.exit_code == 2
    assert keyed.stderr.strip() == (
        "error: usage.invalid: --require-signed needs --manifest (or --registry)"
    )
    (tmp_path / "pinned_adapters.json").write_text(json.dumps({"pinned_adapters": [INSPECTION]}))
    (tmp_path / "c.json").write_text(json.dumps(make_contract(status="revoked")))
    worded = runner.invoke(affidavit, ["adapter", "pins", "check", "--json"])
    assert worded.exit_code == 3
    assert json.loads(worded.stdout)["pins"][0]["notes"][-1] == (
        "recorded inspection-only: passes only with --allow-inspection-only"
    )
    (tmp_path / "manifest.json").write_text(json.dumps(_manifest(status="revoked")))
    pinned = runner.invoke(affidavit, ["adapter", "pin", "--id", PIN["adapter_id"], "--version",
                                       PIN["adapter_version"], "--hash", HASH, "--manifest",
                                       "manifest.json", "--public-key-base64",
                                       demo_key().public_key.b64])  # fmt: skip
    assert pinned.exit_code == 3
    assert pinned.stderr.strip() == (
        "error: pin.revoked: acme.eval_suite.v0@0.1.0 is REVOKED: refusing to pin it for new work "
        "(replacement: none declared); for legacy or forensic review only, re-run with "
        "--allow-revoked-for-legacy-inspection"
    )
