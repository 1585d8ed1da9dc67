"""Codes of the bundles room: bundles, their events and outcome attestations.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

BUNDLE: Final = (
    Code(
        "attestation.malformed",
        INPUT,
        "Not an OutcomeAttestation {attestation, payload_hash, signature, algorithm, ...}.",
    ),
    Code(
        "attestation.payload_hash_mismatch",
        FAILED,
        "payload_hash differs from H(py-compact(attestation)).",
    ),
    Code(
        "attestation.signature_bad",
        FAILED,
        "The attestation signature does not verify under the trusted key.",
    ),
    Code(
        "attestation.unanchored",
        FAILED,
        "No trusted key was supplied; the embedded key alone proves nothing.",
    ),
    Code(
        "bundle.actor_signatures_missing",
        FAILED,
        "Actor signatures were required, but no event of the bundle is actor-signed.",
    ),
    Code(
        "bundle.actor_signatures_untrusted",
        FAILED,
        (
            "Actor signatures were required, but an event's signature verifies under no key the "
            "caller trusts for its actor at its time (only under a key the bundle carries, or "
            "under a trusted key bound to another actor or outside its validity window)."
        ),
    ),
    Code(
        "bundle.consequence_identity_mismatch",
        FAILED,
        (
            "An event's consequence_identity_hash/identity_hash matches no identity_hash of an "
            "authorized CONSEQUENCE_AUTHORIZED event of the bundle."
        ),
    ),
    Code(
        "bundle.events_after_finality",
        FAILED,
        (
            "The bundle has events after the finality event its Merkle leaf recomputes from; the "
            "signed tree head does not cover them."
        ),
    ),
    Code(
        "bundle.hash_mismatch",
        FAILED,
        "bundle_hash differs from the hash recomputed over the bundle.",
    ),
    Code(
        "bundle.inclusion_malformed",
        FAILED,
        "merkle_inclusion or signed_tree_head has a missing or malformed field.",
    ),
    Code(
        "bundle.leaf_ambiguous",
        FAILED,
        "The proven leaf recomputes from more than one event of this bundle.",
    ),
    Code(
        "bundle.leaf_unbound",
        FAILED,
        "The proven leaf recomputes from no finality event of this bundle.",
    ),
    Code(
        "bundle.malformed",
        INPUT,
        "Not a ProofPack bundle: a required top-level field is absent or of the wrong type.",
    ),
    Code(
        "bundle.proof_unbound",
        FAILED,
        "An event's payload.proof_hashes do not list exactly the bundle's proofs.",
    ),
    Code(
        "bundle.reconciliation_vocabulary_unknown",
        FAILED,
        (
            "An OUTCOME_RECONCILED event has a reconciliation_status, readback_source_type or "
            "evidence_redaction_status outside its controlled vocabulary (or lacks one)."
        ),
    ),
    Code(
        "bundle.root_not_signed",
        FAILED,
        "merkle_inclusion (root, size or log) differs from what the signed tree head covers.",
    ),
    Code(
        "bundle.sidecar_hash_mismatch",
        FAILED,
        "sidecar_hash differs from the hash recomputed over the sidecar.",
    ),
    Code(
        "bundle.sidecar_malformed",
        FAILED,
        "The actor-signature sidecar or key directory is malformed or unsupported.",
    ),
    Code(
        "bundle.sidecar_unknown_event",
        FAILED,
        "The sidecar signs an event hash that is not in the event chain.",
    ),
    Code(
        "bundle.swarm_coverage_incomplete",
        FAILED,
        (
            "Profile swarm-strict: a designated event type is absent, or one of its events lacks "
            "a valid, temporally valid actor signature by an enrolled key."
        ),
    ),
    Code(
        "bundle.swarm_decision_invalid",
        FAILED,
        (
            "Profile swarm-strict: a CONSEQUENCE_AUTHORIZED event's swarm_decision context is "
            "malformed, contradictory, or does not match its digest or designation."
        ),
    ),
    Code(
        "bundle.swarm_designation_invalid",
        FAILED,
        (
            "Profile swarm-strict: the latest swarm_policy event is not validly actor-signed, has"
            " an unsupported policy_version, or lacks required_signed_event_types."
        ),
    ),
    Code(
        "bundle.swarm_designation_missing",
        FAILED,
        "Profile swarm-strict: no event of the bundle carries payload.swarm_policy.",
    ),
    Code(
        "bundle.swarm_snapshot_mismatch",
        FAILED,
        (
            "Profile swarm-strict: swarm_enforcement.snapshot_hash does not recompute, or the "
            "snapshot's designation differs from the signed one."
        ),
    ),
    Code(
        "bundle.tlog_proof_mismatch",
        FAILED,
        "The bundle's tlog_proof is for another leaf index than its merkle_inclusion.",
    ),
    Code(
        "bundle.tlog_proof_missing",
        FAILED,
        "A tlog-policy was given, and the bundle carries no tlog_proof.",
    ),
    Code(
        "bundle.unanchored",
        FAILED,
        "No tree head signed by a trusted key anchors the bundle (supply a trusted key).",
    ),
    Code(
        "bundle.unsupported_version",
        INPUT,
        "spec_version is not 1.0.0, 2.0.0 or 3.0.0 (or absent for a legacy bundle).",
    ),
    Code(
        "event.actor_mismatch",
        FAILED,
        "The key directory binds the signing key to another actor than the event's.",
    ),
    Code(
        "event.chain_broken",
        FAILED,
        "An event's prev_hash is not the previous event's hash (or not empty for the first).",
    ),
    Code("event.deal_mismatch", FAILED, "An event's deal_id differs from the bundle's deal_id."),
    Code("event.duplicate_id", FAILED, "Two events of the bundle share one event_id."),
    Code(
        "event.hash_mismatch",
        FAILED,
        "An event's hash differs from the hash recomputed over its fields.",
    ),
    Code(
        "event.key_inactive",
        FAILED,
        "A key directory entry used for a signature has a status other than active.",
    ),
    Code(
        "event.key_lifecycle_malformed",
        FAILED,
        "A key directory entry has a status other than active and no revoked_at.",
    ),
    Code(
        "event.key_mismatch",
        FAILED,
        "A sidecar entry's public key differs from the key directory's for that key_id.",
    ),
    Code(
        "event.key_not_valid",
        FAILED,
        "An actor key was not valid at the event time (issued_at <= t < revoked_at).",
    ),
    Code(
        "event.key_unknown",
        FAILED,
        "An actor signature names a key_id the bundle's key directory does not hold.",
    ),
    Code("event.malformed", FAILED, "An event lacks a field or has one of the wrong type."),
    Code(
        "event.signature_bad",
        FAILED,
        "An actor signature does not verify under the key its directory entry gives.",
    ),
)
