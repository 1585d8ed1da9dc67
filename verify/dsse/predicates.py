"""Affidavit's in-toto predicate types (docs/adr/0014-dsse-in-toto.md, ``specs/predicates/``), and
the pure builders of their subjects and predicates, from a stamped bundle (:data:`DECISION_V1`,
docs/formats.md §4), a signed manifest entry (:data:`MANIFEST_ENTRY_V1`, §3) and the ``facts
audit --json`` report (:data:`FACT_AUDIT_V1`, §5). A source whose stated hash is not the
recomputed one is refused.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.contracts.manifest import entry_hash, entry_hash_body
from affidavit.verify.json.canonical import jcs, sha256_hex
from affidavit.verify.json.forms import is_hex64

__all__ = [
    "AUDIT_REPORT_NAME",
    "DECISION_V1",
    "FACT_AUDIT_V1",
    "MANIFEST_ENTRY_V1",
    "SLSA_VSA_V1",
    "audit_predicate",
    "bundle_subject",
    "decision_predicate",
    "entry_predicate",
    "flat_entry",
    "subject_for_audit",
    "subject_for_bundle",
    "subject_for_entry",
]

# Ours (docs/adr/0014-dsse-in-toto.md). Versioned in the path; a breaking change is a new URI.
DECISION_V1: Final = "https://affidavit.dev/attestation/decision/v1"
MANIFEST_ENTRY_V1: Final = "https://affidavit.dev/attestation/manifest-entry/v1"
FACT_AUDIT_V1: Final = "https://affidavit.dev/attestation/fact-audit/v1"

# SLSA Verification Summary Attestation v1 (slsa.dev/spec/v1.0/verification_summary).
SLSA_VSA_V1: Final = "https://slsa.dev/verification_summary/v1"

# The subject name of an audit report that names no fact (a clean audit): the report itself.
AUDIT_REPORT_NAME: Final = "affidavit-facts-audit-report"


# -- decision/v1: a stamped bundle (docs/formats.md §4) -------------------------------------------


def bundle_subject(bundle: Any) -> dict[str, Any]:
    """``{"name": deal_id, "digest": {"sha256": bundle_hash}}`` with ``bundle_hash`` recomputed
    (docs/formats.md §4), whatever hash the bundle states (a FAILED summary still names it).

    Raises:
        ``bundle.malformed``: not an object with a string ``deal_id``.
        ``canonical.*``: the bundle has no canonical form (it cannot be hashed).
    """
    if not isinstance(bundle, Mapping) or not isinstance(bundle.get("deal_id"), str):
        raise errors.BundleError(
            "bundle.malformed", "the bundle is not a JSON object with a string deal_id"
        )
    return {"name": bundle["deal_id"], "digest": {"sha256": bundle_hash(bundle)}}


def subject_for_bundle(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """The subject of a decision Statement: :func:`bundle_subject`, refused when the bundle's
    stated ``bundle_hash`` is not the recomputed one.

    Raises:
        ``bundle.malformed``: not an object with a string ``deal_id`` and ``bundle_hash``.
        ``bundle.hash_mismatch``: the stated ``bundle_hash`` differs (exit 1).
        ``canonical.*``: the bundle cannot be hashed.
    """
    subject = bundle_subject(bundle)
    stated = bundle.get("bundle_hash")
    if not isinstance(stated, str):
        raise errors.BundleError("bundle.malformed", "the bundle has no string bundle_hash")
    recomputed = subject["digest"]["sha256"]
    if not hmac.compare_digest(stated.encode(), recomputed.encode()):
        raise errors.BundleError(
            "bundle.hash_mismatch",
            "bundle_hash does not match the bundle: nothing is attested about it",
            details={"expected": recomputed, "actual": stated},
        )
    return subject


def decision_predicate(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`DECISION_V1` predicate of a stamped bundle (docs/formats.md §4), from its last
    decision event; a field the bundle lacks, or holds with another JSON type, is ``null``.

    Raises:
        ``bundle.malformed``: not an object with a string ``deal_id``.
        ``predicate.decision_missing``: no event carries a decision (nothing to attest).
        ``canonical.*``: the bundle cannot be hashed.
    """
    subject = bundle_subject(bundle)
    event = _decision_event(bundle.get("events"))
    payload = event["payload"]
    snapshot = payload["policy_snapshot"]
    contract_hash = _str(payload.get("contract_hash"))
    evaluation = _evaluation(bundle.get("proofs"), contract_hash)
    inclusion = _mapping(bundle.get("merkle_inclusion"))
    head = bundle.get("signed_tree_head")
    checkpoint = None
    if isinstance(head, Mapping):
        checkpoint = {
            "treeSize": _int(head.get("tree_size")),
            "rootHash": _str(head.get("root_hash")),
            "timestamp": _str(head.get("timestamp")),
            "keyId": _str(head.get("key_id")),
        }
    inputs = evaluation.get("normalized_policy_inputs")
    return {
        "bundleSpecVersion": _str(bundle.get("spec_version")),
        "bundleHash": subject["digest"]["sha256"],
        "dealId": bundle["deal_id"],
        "contract": {
            "adapterId": _str(payload.get("adapter_id")),
            "adapterVersion": _str(evaluation.get("adapter_version")),
            "contractHash": contract_hash,
        },
        "policyHash": _str(payload.get("policy_hash")),
        "inputs": dict(inputs) if isinstance(inputs, Mapping) else None,
        "decision": {
            "action": payload["decision"],
            "eventType": _str(event.get("event_type")),
            "eventId": _str(event.get("event_id")),
            "ruleIndex": _int(snapshot.get("rule_index")),
        },
        "log": {
            "logId": _str(inclusion.get("log_id")),
            "leafIndex": _int(inclusion.get("leaf_index")),
            "checkpoint": checkpoint,
        },
    }


def _decision_event(events: Any) -> Mapping[str, Any]:
    found: Mapping[str, Any] | None = None
    for event in events if isinstance(events, list) else ():
        payload = event.get("payload") if isinstance(event, Mapping) else None
        if (
            isinstance(payload, Mapping)
            and isinstance(payload.get("decision"), str)
            and isinstance(payload.get("policy_snapshot"), Mapping)
        ):
            found = event
    if found is None:
        raise errors.EnvelopeError(
            "predicate.decision_missing",
            "no event of the bundle carries a decision (payload.decision and "
            "payload.policy_snapshot): there is no decision to attest",
        )
    return found


def _evaluation(proofs: Any, contract_hash: str | None) -> Mapping[str, Any]:
    """The first ``evidence.adapter_evaluation`` whose contract hash is the decision's."""
    for proof in proofs if isinstance(proofs, list) else ():
        evidence = _mapping(proof.get("evidence") if isinstance(proof, Mapping) else None)
        evaluation = _mapping(evidence.get("adapter_evaluation"))
        if evaluation and evaluation.get("contract_hash") == contract_hash:
            return evaluation
    return {}


# -- manifest-entry/v1: a signed manifest entry (docs/formats.md §3) -----------------------------


def flat_entry(document: Any) -> Mapping[str, Any]:
    """A manifest entry as one object: a manifest's ``contracts`` item as is, or the ``adapter
    attest`` document ``{entry: {...}, entry_hash, entry_signature, ...}`` unwrapped.

    Raises:
        ``entry.invalid``: neither shape.
    """
    if not isinstance(document, Mapping):
        raise errors.ContractError("entry.invalid", "a manifest entry must be a JSON object")
    inner = document.get("entry")
    if "adapter_id" not in document and isinstance(inner, Mapping):
        flat = dict(inner)
        for key in ("entry_hash", "entry_signature"):
            if key in document:
                flat[key] = document[key]
        return flat
    return document


def subject_for_entry(entry: Any) -> dict[str, Any]:
    """``{"name": "<adapter_id>@<adapter_version>", "digest": {"sha256": entry_hash}}`` of a
    signed manifest entry (:func:`flat_entry` shapes), ``entry_hash`` recomputed (docs/formats.md
    §3). The ``entry_signature`` must be present; it is not verified here (no key is given).

    Raises:
        ``entry.invalid``: not an entry, no string adapter_id / adapter_version, no
            ``entry_hash`` or no ``entry_signature`` (an unsigned entry).
        ``entry.hash_mismatch``: the stated ``entry_hash`` differs (exit 1).
    """
    flat = flat_entry(entry)
    for key in ("adapter_id", "adapter_version", "entry_hash", "entry_signature"):
        value = flat.get(key)
        if not isinstance(value, str) or not value:
            raise errors.ContractError(
                "entry.invalid", f"a signed manifest entry needs a non-empty string {key}"
            )
    recomputed = entry_hash(flat)
    if not hmac.compare_digest(flat["entry_hash"].encode(), recomputed.encode()):
        raise errors.ContractError(
            "entry.hash_mismatch",
            "entry_hash does not match the entry's 15 hashed fields: nothing is attested",
            details={"expected": recomputed, "actual": flat["entry_hash"]},
        )
    return {
        "name": f"{flat['adapter_id']}@{flat['adapter_version']}",
        "digest": {"sha256": recomputed},
    }


def entry_predicate(entry: Any) -> dict[str, Any]:
    """The :data:`MANIFEST_ENTRY_V1` predicate: ``{entry, entryHash, entrySignature}``, ``entry``
    exactly the object ``entry_hash`` covers (docs/formats.md §3).

    Raises:
        as :func:`subject_for_entry`.
    """
    subject = subject_for_entry(entry)
    flat = flat_entry(entry)
    return {
        "entry": entry_hash_body(flat),
        "entryHash": subject["digest"]["sha256"],
        "entrySignature": flat["entry_signature"],
    }


# -- fact-audit/v1: the facts audit report (docs/formats.md §5) ----------------------------------

_REPORT_KEYS: Final = ("ok", "facts", "findings", "info", "signatures")


def subject_for_audit(report: Any) -> list[dict[str, Any]]:
    """The subjects of a fact-audit Statement (docs/formats.md §5): every fact the report names,
    sorted; for a clean audit, the report itself (:data:`AUDIT_REPORT_NAME`, ``H(jcs(report))``).

    Raises:
        ``predicate.audit_invalid``: not a ``facts audit --json`` report.
        ``canonical.*``: the report has no JCS form.
    """
    _check_report(report)
    named: set[str] = set()
    for key in ("findings", "info"):
        named.update(item["fact"] for item in report[key] if item.get("fact") is not None)
    receipts = report.get("receipts")
    if isinstance(receipts, Mapping):
        named.update(item["fact"] for item in receipts["results"])
    if not named:
        return [{"name": AUDIT_REPORT_NAME, "digest": {"sha256": sha256_hex(jcs(report))}}]
    return [{"name": f"fact:{fact}", "digest": {"sha256": fact}} for fact in sorted(named)]


def audit_predicate(report: Any) -> dict[str, Any]:
    """The :data:`FACT_AUDIT_V1` predicate: the report's verdict and findings as it gave them,
    ``receipts`` cut to ``{checked, failed}`` (its results are subjects), plus ``reportDigest``.

    Raises:
        as :func:`subject_for_audit`.
    """
    _check_report(report)
    receipts = report.get("receipts")
    return {
        "ok": report["ok"],
        "facts": report["facts"],
        "findings": [dict(item) for item in report["findings"]],
        "info": [dict(item) for item in report["info"]],
        "signatures": None if report["signatures"] is None else dict(report["signatures"]),
        "receipts": (
            None
            if receipts is None
            else {"checked": receipts["checked"], "failed": receipts["failed"]}
        ),
        "reportDigest": {"sha256": sha256_hex(jcs(report))},
    }


def _check_report(report: Any) -> None:
    # specs/output/facts-audit.schema.json, as far as the predicate reads it.
    if not isinstance(report, Mapping) or any(key not in report for key in _REPORT_KEYS):
        raise _audit_invalid(f"not a facts audit report: it needs {', '.join(_REPORT_KEYS)}")
    if not isinstance(report["ok"], bool):
        raise _audit_invalid("ok must be a boolean")
    facts = report["facts"]
    if isinstance(facts, bool) or not isinstance(facts, int) or facts < 0:
        raise _audit_invalid("facts must be a count")
    for key in ("findings", "info"):
        items = report[key]
        if not isinstance(items, list) or not all(_finding_ok(item) for item in items):
            raise _audit_invalid(f"{key} must be an array of findings with a FactHash or null fact")
    signatures = report["signatures"]
    if signatures is not None and not isinstance(signatures, Mapping):
        raise _audit_invalid("signatures must be an object or null")
    receipts = report.get("receipts")
    if receipts is not None and not (
        isinstance(receipts, Mapping)
        and isinstance(receipts.get("results"), list)
        and "checked" in receipts
        and "failed" in receipts
        and all(isinstance(r, Mapping) and is_hex64(r.get("fact")) for r in receipts["results"])
    ):
        raise _audit_invalid("receipts must be {checked, failed, results} naming FactHashes")


def _finding_ok(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    fact = item.get("fact")
    return all(isinstance(item.get(k), str) for k in ("code", "severity", "where")) and (
        fact is None or is_hex64(fact)
    )


def _audit_invalid(message: str) -> errors.EnvelopeError:
    return errors.EnvelopeError("predicate.audit_invalid", message)


# -- helpers ------------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
