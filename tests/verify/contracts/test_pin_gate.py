"""The pin gate's report (issue 36 mutation campaign; issue 37 §5 findings): every finding with its
exact code, the pin it is about and the file to point at, for the inputs that produce it.

The gate's ``--json`` report and its findings are what a CI annotation shows (docs/formats.md §3,
docs/adr/0007-pin-gate-freshness.md), so these tests assert them whole for real manifests
(signed with the TEST-ONLY demo key), tampered copies and broken declaration files.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.contracts.manifest import (
    ManifestReport,
    entry_hash,
    manifest_hash,
    verify_manifest,
)
from affidavit.verify.contracts.pin_file import parse_pin_file
from affidavit.verify.contracts.pins import (
    BrokenDeclaration,
    Declaration,
    PinCheckReport,
    check_pins,
)
from affidavit.verify.results import Problem

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    make_manifest,
    other_key,
)
from tests.conftest import raises_code

HASH = make_contract()["contract_hash"]
ID, VERSION = "acme.eval_suite.v0", "0.1.0"
LABEL = f"{ID}@{VERSION}"
PIN: dict[str, Any] = {"adapter_id": ID, "adapter_version": VERSION, "contract_hash": HASH}
# The command line's names for the library's settings (cli/adapter/pins.py CHECK_FLAGS).
FLAGS = {
    "require_signed": "--require-signed",
    "manifest": "--manifest",
    "live_manifest": "--registry",
    "allow_inspection_only": "--allow-inspection-only",
}
SOURCES: dict[str, Any] = {
    "pin_file_source": "pinned_adapters.json",
    "manifest_source": "manifest.json",
    "live_source": "https://registry.test/manifest",
    "searched": ["contracts/", "vendor/contracts/"],
}
DECLARED = Declaration("contracts/c.json", make_contract())


def _pins(*pins: dict[str, Any]) -> Any:
    return parse_pin_file({"pinned_adapters": list(pins)})


def _report(document: dict[str, Any], *, key: bool = True) -> ManifestReport:
    return verify_manifest(document, public_key=demo_key().public_key if key else None)


def _resigned(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its manifest hash and signature made again over its entries, as a
    publisher (or an attacker holding the key) would after editing the array."""
    out = copy.deepcopy(document)
    out["manifest_hash"] = manifest_hash(out)
    out["manifest_signature"] = demo_key().sign_b64(out["manifest_hash"].encode("ascii"))
    return out


def _finding(code: str, pin: str | None, file: str | None, message: str) -> dict[str, Any]:
    return {"code": code, "pin": pin, "file": file, "message": message}


def _verdict(**changes: Any) -> dict[str, Any]:
    verdict: dict[str, Any] = {
        "adapter_id": ID,
        "adapter_version": VERSION,
        "contract_hash": HASH,
        "holds": True,
        "lifecycle": "active",
        "revoked_refused": False,
        "problems": [],
        "notes": [],
        "sources": ["contracts/c.json"],
    }
    verdict.update(changes)
    return verdict


def test_a_holding_pin_reports_every_field() -> None:
    """A pin that holds under a signed manifest file and the registry's live manifest."""
    document = make_manifest(demo_key(), [make_contract()])
    report = _report(document)
    pinned = {**PIN, "entry_hash": document["contracts"][0]["entry_hash"]}
    result = check_pins(
        _pins(pinned),
        [DECLARED],
        manifest=document,
        manifest_report=report,
        require_signed=True,
        live_manifest=document,
        live_report=report,
        **SOURCES,
    )
    assert result.to_json(FLAGS) == {
        "ok": True,
        "exit_code": 0,
        "pin_count": 1,
        "pins": [_verdict(sources=["contracts/c.json", "manifest", "registry"])],
        "problems": [],
        "notes": [],
        "findings": [],
        "manifest": report.to_json(),
    }


def test_an_empty_pin_file_holds_with_a_note() -> None:
    result = check_pins(_pins(), [DECLARED])
    assert result.to_json() == {
        "ok": True,
        "exit_code": 0,
        "pin_count": 0,
        "pins": [],
        "problems": [],
        "notes": ["the pin file has no pins"],
        "findings": [],
        "manifest": None,
    }


def test_a_tampered_declaration_is_three_findings_on_its_file() -> None:
    """A declaration that no longer lints, recomputes to another hash and declares a stale one."""
    body = make_contract()
    body["allowed_policy_fields"] = ["signal_z"]
    body["output_fields"] = ["signal_a", "signal_a"]
    body["input_schema_version"] = "x"
    recomputed = "46b12875d55b229c632613a87ec5b6114b2e4fe8da4df5fef054359e19dfd95d"
    result = check_pins(_pins(PIN), [Declaration("contracts/c.json", body)], **SOURCES)
    assert result.exit_code == 1
    assert result.findings() == [
        _finding(
            "pin.contract_invalid",
            LABEL,
            "contracts/c.json",
            "contracts/c.json does not lint clean: contract.bad_semver, "
            "contract.duplicate_field, contract.policy_fields_not_subset",
        ),
        _finding(
            "pin.contract_changed",
            LABEL,
            "contracts/c.json",
            f"contract_hash mismatch in contracts/c.json: pinned {HASH}, recomputed {recomputed}",
        ),
        _finding(
            "contract.hash_mismatch",
            LABEL,
            "contracts/c.json",
            f"contracts/c.json declares contract_hash {HASH}, recomputes {recomputed}",
        ),
    ]


def test_a_missing_declaration_names_the_folders_searched() -> None:
    searched = check_pins(_pins(PIN), [], **SOURCES)
    assert searched.findings() == [
        _finding(
            "pin.contract_missing",
            LABEL,
            "pinned_adapters.json",
            "declaration missing: no contract file for this pin in contracts/, "
            "vendor/contracts/ (deleted, moved or renamed?)",
        )
    ]
    unnamed = check_pins(_pins(PIN), [])
    assert unnamed.findings() == [
        _finding(
            "pin.contract_missing",
            LABEL,
            None,
            "declaration missing: no contract file for this pin in the folders searched "
            "(deleted, moved or renamed?)",
        )
    ]


def test_a_declaration_of_another_version_is_not_this_pins() -> None:
    """Declarations are matched by (adapter_id, adapter_version); one missing either is none."""
    other = Declaration("contracts/new.json", make_contract(adapter_version="0.2.0"))
    anonymous = {k: v for k, v in make_contract().items() if k != "adapter_version"}
    result = check_pins(_pins(PIN), [other, Declaration("contracts/x.json", anonymous)])
    assert [f["code"] for f in result.findings()] == ["pin.contract_missing"]


def test_broken_files_fail_the_pin_they_may_be_or_the_whole_gate() -> None:
    """docs/formats.md §1: a file that cannot be read strictly is never "not found"."""
    broken = [
        BrokenDeclaration("contracts/x.json", "not strict JSON", frozenset({ID})),
        BrokenDeclaration("contracts/y.json", "too large"),
        BrokenDeclaration("contracts/z.json", "unreadable", frozenset({"acme.other.v0"})),
    ]
    result = check_pins(_pins(PIN), [], broken=broken, **SOURCES)
    assert result.exit_code == 1
    assert result.findings() == [
        _finding(
            "pin.contract_unreadable",
            LABEL,
            "contracts/x.json",
            "contracts/x.json cannot be checked (not strict JSON): it may be this contract, "
            "tampered",
        ),
        _finding(
            "pin.contract_unreadable",
            None,
            "contracts/y.json",
            "contracts/y.json cannot be checked (too large)",
        ),
        _finding(
            "pin.contract_unreadable",
            None,
            "contracts/z.json",
            "contracts/z.json cannot be checked (unreadable)",
        ),
    ]


def test_a_pin_recorded_against_a_bad_entry_never_holds() -> None:
    for recorded in (
        {"entry_hash_status": "ok", "entry_signature_status": "bad"},
        {"entry_hash_status": "mismatch", "entry_signature_status": "ok"},
    ):
        result = check_pins(_pins({**PIN, **recorded}), [DECLARED], **SOURCES)
        assert result.findings() == [
            _finding(
                "pin.recorded_unverified",
                LABEL,
                "pinned_adapters.json",
                f"pinned with entry_hash_status={recorded['entry_hash_status']}, "
                f"entry_signature_status={recorded['entry_signature_status']}",
            )
        ]
    fine = {**PIN, "entry_hash_status": "ok", "entry_signature_status": "no_public_key"}
    assert check_pins(_pins(fine), [DECLARED]).exit_code == 0


def test_a_tampered_manifest_entry_is_found_on_the_manifest() -> None:
    """The pin's entry names another hash, its entry_hash does not recompute and its signature
    is not the publisher's; a pin that recorded the old entry_hash is told it moved."""
    document = make_manifest(demo_key(), [make_contract()])
    entry = document["contracts"][0]
    old_entry_hash = entry["entry_hash"]
    entry["contract_hash"] = "1" * 64  # entry_hash left as it was: a mismatch
    entry["entry_signature"] = other_key().sign_b64(old_entry_hash.encode("ascii"))
    document = _resigned(document)
    pinned = {**PIN, "entry_hash": "2" * 64}
    result = check_pins(
        _pins(pinned), [DECLARED], manifest=document, manifest_report=_report(document), **SOURCES
    )
    assert result.exit_code == 1
    assert result.findings() == [
        _finding(
            "pin.hash_mismatch",
            LABEL,
            "manifest.json",
            f"manifest entry contract_hash {'1' * 64!r} differs from the pin",
        ),
        _finding("entry.hash_mismatch", LABEL, "manifest.json", "manifest entry_hash mismatch"),
        _finding("entry.signature_invalid", LABEL, "manifest.json", "manifest entry_signature bad"),
    ]
    assert result.pins[0].to_json()["notes"] == [
        "manifest entry_hash changed since pinning (lifecycle fields may have moved)"
    ]


def test_an_unsigned_entry_is_a_note_unless_signatures_are_required() -> None:
    document = make_manifest(demo_key(), [make_contract()])
    del document["contracts"][0]["entry_signature"]
    document = _resigned(document)
    report = _report(document)
    soft = check_pins(_pins(PIN), [DECLARED], manifest=document, manifest_report=report, **SOURCES)
    assert (soft.exit_code, soft.findings()) == (0, [])
    assert soft.pins[0].to_json()["notes"] == ["manifest entry_signature absent"]
    strict = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=document,
        manifest_report=report,
        require_signed=True,
        **SOURCES,
    )
    assert strict.findings() == [
        _finding(
            "pin.signature_required", LABEL, "manifest.json", "manifest entry_signature absent"
        )
    ]
    assert strict.pins[0].to_json()["notes"] == []


def test_manifest_level_findings_name_the_manifest_file() -> None:
    """A manifest whose hash does not recompute, whose signature is not the publisher's, with a
    repeated entry and a loud collision; plus the caller's own findings about it."""
    first = make_manifest(demo_key(), [make_contract()])["contracts"][0]
    other_id = make_manifest(demo_key(), [make_contract("acme.other.v0")])["contracts"][0]
    collided = copy.deepcopy(other_id)
    collided["contract_hash"] = "3" * 64
    collided["entry_hash"] = entry_hash(collided)
    document = make_manifest(demo_key(), [make_contract()])
    document["contracts"] = [first, copy.deepcopy(first), other_id, collided]
    document["manifest_signature"] = other_key().sign_b64(document["manifest_hash"].encode())
    stale = Problem("manifest is 40 days old", code="pin.manifest_stale", file="manifest.json")
    result = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=document,
        manifest_report=_report(document),
        manifest_problems=["manifest generated_at is not a time", stale],
        **SOURCES,
    )
    failed = "manifest.verification_failed"
    assert result.exit_code == 1
    assert result.findings() == [
        _finding(failed, None, "manifest.json", "manifest generated_at is not a time"),
        _finding("pin.manifest_stale", None, "manifest.json", "manifest is 40 days old"),
        _finding(failed, None, "manifest.json", "manifest_hash mismatch"),
        _finding(failed, None, "manifest.json", "manifest_signature bad"),
        _finding(failed, None, "manifest.json", "manifest loud collision acme.other.v0@0.1.0"),
        _finding(failed, None, "manifest.json", f"manifest duplicate entry {LABEL}"),
    ]
    assert result.pins[0].holds


def test_an_unsigned_manifest_is_a_note_unless_signatures_are_required() -> None:
    document = make_manifest(demo_key(), [make_contract()])
    unsigned = _report(document, key=False)
    soft = check_pins(
        _pins(PIN), [DECLARED], manifest=document, manifest_report=unsigned, **SOURCES
    )
    assert (soft.exit_code, soft.findings()) == (0, [])
    assert soft.to_json()["notes"] == ["manifest_signature no_public_key"]
    assert soft.pins[0].to_json()["notes"] == ["manifest entry_signature no_public_key"]
    strict = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=document,
        manifest_report=unsigned,
        require_signed=True,
        **SOURCES,
    )
    assert strict.findings() == [
        _finding(
            "pin.signature_required",
            LABEL,
            "manifest.json",
            "manifest entry_signature no_public_key",
        ),
        _finding(
            "pin.signature_required", None, "manifest.json", "manifest_signature no_public_key"
        ),
    ]
    assert strict.to_json()["notes"] == []


def test_a_manifest_without_the_pin_is_a_note_unless_signatures_are_required() -> None:
    document = make_manifest(demo_key(), [make_contract(adapter_version="0.2.0")])
    report = _report(document)
    soft = check_pins(_pins(PIN), [DECLARED], manifest=document, manifest_report=report, **SOURCES)
    assert (soft.exit_code, soft.findings()) == (0, [])
    assert soft.pins[0].to_json()["notes"] == ["no manifest entry for this pin"]
    assert soft.pins[0].sources == ("contracts/c.json",)
    strict = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=document,
        manifest_report=report,
        require_signed=True,
        **SOURCES,
    )
    assert strict.findings() == [
        _finding("pin.entry_missing", LABEL, "manifest.json", "no manifest entry for this pin")
    ]


def test_the_live_manifest_must_verify_fully_and_list_the_pin() -> None:
    """docs/adr/0007: the registry's live manifest is checked as if signatures were required."""
    listed = make_manifest(demo_key(), [make_contract()])
    unsigned = _report(listed, key=False)
    result = check_pins(
        _pins(PIN), [DECLARED], live_manifest=listed, live_report=unsigned, **SOURCES
    )
    live = "https://registry.test/manifest"
    assert result.findings() == [
        _finding("pin.signature_required", LABEL, live, "live entry_signature no_public_key"),
        _finding(
            "manifest.verification_failed",
            None,
            live,
            "registry manifest: manifest_signature no_public_key",
        ),
        _finding(
            "manifest.verification_failed",
            None,
            live,
            f"registry manifest: entry[0] {LABEL} entry_signature no_public_key",
        ),
    ]
    assert result.pins[0].sources == ("contracts/c.json", "registry")
    unlisted = make_manifest(demo_key(), [make_contract(adapter_version="0.2.0")])
    missing = check_pins(
        _pins(PIN),
        [DECLARED],
        live_manifest=unlisted,
        live_report=_report(unlisted),
        require_signed=True,
        **SOURCES,
    )
    assert missing.findings() == [
        _finding(
            "pin.entry_missing",
            LABEL,
            live,
            "the registry's live manifest has no entry for this pin",
        )
    ]


def test_the_live_manifest_knows_of_a_revocation_the_file_predates() -> None:
    document = make_manifest(demo_key(), [make_contract()])
    revoked = make_manifest(demo_key(), [make_contract(status="revoked")])
    result = check_pins(
        _pins(PIN),
        [DECLARED],
        manifest=document,
        manifest_report=_report(document),
        live_manifest=revoked,
        live_report=_report(revoked),
        **SOURCES,
    )
    assert (result.exit_code, result.pins[0].lifecycle) == (3, "revoked")
    assert result.findings() == [
        _finding("pin.check_revoked", LABEL, "pinned_adapters.json", f"{LABEL} is revoked")
    ]


def _lifecycle(*, declared: dict[str, str], entry: dict[str, str]) -> PinCheckReport:
    document = make_manifest(demo_key(), [make_contract(**entry)])
    return check_pins(
        _pins(PIN),
        [Declaration("contracts/c.json", make_contract(**declared))],
        manifest=document,
        manifest_report=_report(document),
    )


SUPERSEDED = {"replaced_by": "acme.eval_suite.v0@0.2.0"}


@pytest.mark.parametrize(
    ("declared", "entry", "lifecycle", "code"),
    [
        (SUPERSEDED, {}, "superseded", 0),
        ({}, SUPERSEDED, "superseded", 0),
        (SUPERSEDED, {"status": "deprecated"}, "deprecated", 0),
        ({"status": "deprecated"}, SUPERSEDED, "deprecated", 0),
        (SUPERSEDED, {"status": "revoked"}, "revoked", 3),
        ({"status": "revoked"}, SUPERSEDED, "revoked", 3),
        ({"status": "deprecated"}, {"status": "revoked"}, "revoked", 3),
    ],
)
def test_the_most_severe_lifecycle_of_any_source_wins(
    declared: dict[str, str], entry: dict[str, str], lifecycle: str, code: int
) -> None:
    """Seed 003 lifecycle table: revoked > deprecated > superseded > active."""
    result = _lifecycle(declared=declared, entry=entry)
    assert (result.pins[0].lifecycle, result.exit_code) == (lifecycle, code)
    assert result.pins[0].to_json()["notes"] == [f"lifecycle {lifecycle}"]


def test_inspection_only_pins_are_told_what_lets_them_pass() -> None:
    inspection = {**PIN, "status": "revoked", "inspection_only": True}
    refused = check_pins(_pins(inspection), [DECLARED], **SOURCES)
    assert refused.to_json(FLAGS)["pins"] == [
        _verdict(
            holds=False,
            lifecycle="revoked",
            revoked_refused=True,
            notes=[
                "lifecycle revoked",
                "recorded inspection-only: passes only with --allow-inspection-only",
            ],
        )
    ]
    allowed = check_pins(_pins(inspection), [DECLARED], allow_inspection_only=True, **SOURCES)
    assert allowed.to_json(FLAGS)["pins"] == [
        _verdict(lifecycle="revoked", notes=["lifecycle revoked; inspection-only pin allowed"])
    ]
    plain = check_pins(_pins({**PIN, "status": "revoked"}), [DECLARED], allow_inspection_only=True)
    assert plain.to_json(FLAGS)["pins"] == [
        _verdict(
            holds=False, lifecycle="revoked", revoked_refused=True, notes=["lifecycle revoked"]
        )
    ]


def test_findings_about_settings_use_the_callers_names() -> None:
    """require_signed with nothing signed to check: worded by the command's own option names in
    every part of the JSON report."""
    result = check_pins(_pins(PIN), [DECLARED], require_signed=True, **SOURCES)
    whole = "--require-signed needs --manifest (or --registry) and a public key"
    pin = "--require-signed needs a signed manifest entry (no manifest given)"
    assert result.to_json(FLAGS) == {
        "ok": False,
        "exit_code": 1,
        "pin_count": 1,
        "pins": [_verdict(holds=False, problems=[pin])],
        "problems": [whole],
        "notes": [],
        "findings": [
            _finding("pin.signature_required", LABEL, None, pin),
            _finding("pin.signature_required", None, None, whole),
        ],
        "manifest": None,
    }
    # a live manifest alone is enough for require_signed: no finding about a missing one
    document = make_manifest(demo_key(), [make_contract()])
    live = check_pins(
        _pins(PIN),
        [DECLARED],
        require_signed=True,
        live_manifest=document,
        live_report=_report(document),
    )
    assert (live.exit_code, live.findings()) == (0, [])


def test_a_manifest_needs_its_verification_report() -> None:
    document = make_manifest(demo_key(), [make_contract()])
    with raises_code("usage.invalid") as info:
        check_pins(_pins(PIN), [DECLARED], manifest=document)
    assert info.value.message == "check_pins needs the manifest's verification report"
    with raises_code("usage.invalid") as info:
        check_pins(_pins(PIN), [DECLARED], live_manifest=document)
    assert info.value.message == "check_pins needs the live manifest's verification report"


def test_a_pin_is_told_when_the_live_entry_moved_since_pinning() -> None:
    """docs/adr/0007: the live entry is compared with the entry_hash the pin recorded."""
    document = make_manifest(demo_key(), [make_contract()])
    report = _report(document)
    recorded = {**PIN, "entry_hash": document["contracts"][0]["entry_hash"]}
    same = check_pins(_pins(recorded), [DECLARED], live_manifest=document, live_report=report)
    assert (same.exit_code, same.pins[0].to_json()["notes"]) == (0, [])
    moved = check_pins(
        _pins({**PIN, "entry_hash": "2" * 64}),
        [DECLARED],
        live_manifest=document,
        live_report=report,
    )
    assert (moved.exit_code, moved.findings()) == (0, [])
    assert moved.pins[0].to_json()["notes"] == [
        "live entry_hash changed since pinning (lifecycle fields may have moved)"
    ]
