"""The pure predicate builders (verify/dsse/predicates.py), their schemas and their refusals."""

from __future__ import annotations

import json

import pytest
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.dsse import predicates
from affidavit.verify.json.canonical import jcs, sha256_hex

from tests.attest.intoto.helpers import (
    BUNDLES,
    assert_predicate_schema,
    bundle,
    entry_document,
    flat_entry,
    report,
)
from tests.conftest import raises_code

STAMPED = sorted(p.name for p in BUNDLES.glob("stamped-*.json"))


@pytest.mark.parametrize("name", STAMPED)
def test_decision_predicate_of_every_stamped_vector_matches_its_schema(name: str) -> None:
    source = bundle(name)
    subject = predicates.subject_for_bundle(source)
    predicate = predicates.decision_predicate(source)
    assert subject == {"name": source["deal_id"], "digest": {"sha256": source["bundle_hash"]}}
    assert predicate["bundleHash"] == source["bundle_hash"]
    assert_predicate_schema("decision-v1", predicate)


def test_decision_predicate_reads_each_field_where_the_bundle_keeps_it() -> None:
    source = bundle()
    decision_event = source["events"][2]
    evaluation = source["proofs"][0]["evidence"]["adapter_evaluation"]
    head = source["signed_tree_head"]
    assert predicates.decision_predicate(source) == {
        "bundleSpecVersion": "3.0.0",
        "bundleHash": source["bundle_hash"],
        "dealId": "accepted",
        "contract": {
            "adapterId": evaluation["adapter_id"],
            "adapterVersion": evaluation["adapter_version"],
            "contractHash": evaluation["contract_hash"],
        },
        "policyHash": decision_event["payload"]["policy_hash"],
        "inputs": {"signal_a": True, "signal_b": True},
        "decision": {
            "action": "auto_accept",
            "eventType": "AUTO_GO_APPROVED",
            "eventId": decision_event["event_id"],
            "ruleIndex": 0,
        },
        "log": {
            "logId": source["merkle_inclusion"]["log_id"],
            "leafIndex": source["merkle_inclusion"]["leaf_index"],
            "checkpoint": {
                "treeSize": head["tree_size"],
                "rootHash": head["root_hash"],
                "timestamp": head["timestamp"],
                "keyId": head["key_id"],
            },
        },
    }


def test_decision_without_tree_head_or_inclusion_has_nulls() -> None:
    source = bundle()
    del source["signed_tree_head"]
    source["merkle_inclusion"] = None
    source["bundle_hash"] = bundle_hash(source)
    predicate = predicates.decision_predicate(source)
    assert predicate["log"] == {"logId": None, "leafIndex": None, "checkpoint": None}
    assert_predicate_schema("decision-v1", predicate)


def test_rejected_and_review_decisions() -> None:
    assert predicates.decision_predicate(bundle("stamped-rejected-2.0.0.json"))["decision"][
        "action"
    ] == ("auto_reject")
    review = predicates.decision_predicate(bundle("stamped-review-2.0.0.json"))
    assert review["decision"]["action"] == "require_review"


def test_builders_are_deterministic_and_do_not_touch_the_source() -> None:
    source = bundle()
    before = json.dumps(source, sort_keys=True)
    first = jcs(predicates.decision_predicate(source))
    assert jcs(predicates.decision_predicate(bundle())) == first
    assert json.dumps(source, sort_keys=True) == before


def test_a_bundle_whose_stated_hash_differs_is_refused() -> None:
    source = bundle("tamper-payload-without-rehash.json")
    with raises_code("bundle.hash_mismatch"):
        predicates.subject_for_bundle(source)
    # the lenient subject (used by a FAILED VSA) names the content that was read
    assert predicates.bundle_subject(source)["digest"]["sha256"] == bundle_hash(source)


@pytest.mark.parametrize("source", [[], {"deal_id": 7}, {"events": []}, "x"])
def test_not_a_bundle_is_malformed(source: object) -> None:
    with raises_code("bundle.malformed"):
        predicates.subject_for_bundle(source)  # type: ignore[arg-type]


def test_a_bundle_without_stated_hash_is_malformed() -> None:
    source = bundle()
    del source["bundle_hash"]
    with raises_code("bundle.malformed"):
        predicates.subject_for_bundle(source)


def test_a_bundle_without_a_decision_is_refused() -> None:
    source = bundle()
    for event in source["events"]:
        event["payload"].pop("policy_snapshot", None)
    with raises_code("predicate.decision_missing"):
        predicates.decision_predicate(source)


# -- manifest entries -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [entry_document, flat_entry])
def test_entry_subject_and_predicate(shape: object) -> None:
    source = shape()  # type: ignore[operator]
    subject = predicates.subject_for_entry(source)
    predicate = predicates.entry_predicate(source)
    document = entry_document()
    assert subject == {
        "name": f"{document['entry']['adapter_id']}@{document['entry']['adapter_version']}",
        "digest": {"sha256": document["entry_hash"]},
    }
    assert predicate["entry"] == document["entry"]
    assert predicate["entrySignature"] == document["entry_signature"]
    # a reader recomputes the hash from the predicate alone (docs/formats.md §3)
    from affidavit.verify.contracts.manifest import entry_hash

    assert entry_hash(predicate["entry"]) == predicate["entryHash"]
    assert_predicate_schema("manifest-entry-v1", predicate)


def test_tampered_entry_is_refused() -> None:
    source = flat_entry()
    source["status"] = "revoked"
    with raises_code("entry.hash_mismatch"):
        predicates.subject_for_entry(source)


@pytest.mark.parametrize("drop", ["entry_signature", "entry_hash", "adapter_id"])
def test_unsigned_or_incomplete_entry_is_invalid(drop: str) -> None:
    source = flat_entry()
    del source[drop]
    with raises_code("entry.invalid"):
        predicates.entry_predicate(source)


# -- fact audits ----------------------------------------------------------------------------------


def test_audit_subjects_are_the_named_facts_sorted_and_distinct() -> None:
    subjects = predicates.subject_for_audit(report())
    assert subjects == [
        {"name": f"fact:{'a' * 64}", "digest": {"sha256": "a" * 64}},
        {"name": f"fact:{'b' * 64}", "digest": {"sha256": "b" * 64}},
    ]


def test_a_clean_audit_is_its_own_subject() -> None:
    clean = report("clean")
    digest = sha256_hex(jcs(clean))
    assert predicates.subject_for_audit(clean) == [
        {"name": predicates.AUDIT_REPORT_NAME, "digest": {"sha256": digest}}
    ]
    predicate = predicates.audit_predicate(clean)
    assert predicate["reportDigest"] == {"sha256": digest}
    assert predicate["receipts"] is None
    assert_predicate_schema("fact-audit-v1", predicate)


def test_audit_predicate_matches_its_schema() -> None:
    source = report()
    source["receipts"] = {
        "checked": 1,
        "failed": 0,
        "results": [{"fact": "d" * 64, "receipt_hash": "e" * 64, "file": "r.json", "ok": True}],
    }
    predicate = predicates.audit_predicate(source)
    assert predicate["receipts"] == {"checked": 1, "failed": 0}
    assert {"sha256": "d" * 64} in [s["digest"] for s in predicates.subject_for_audit(source)]
    assert_predicate_schema("fact-audit-v1", predicate)


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.pop("signatures"),
        lambda r: r.update(ok="yes"),
        lambda r: r.update(facts=-1),
        lambda r: r["findings"][0].update(fact="NOT-HEX"),
        lambda r: r.update(signatures=[1]),
        lambda r: r.update(receipts={"checked": 1}),
    ],
)
def test_not_an_audit_report_is_refused(change: object) -> None:
    source = report()
    change(source)  # type: ignore[operator]
    with raises_code("predicate.audit_invalid"):
        predicates.audit_predicate(source)
