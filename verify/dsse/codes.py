"""Codes of the DSSE room: envelopes, their signatures and the in-toto Statements they carry.

Raised through :class:`affidavit.verify.errors.EnvelopeError`; the exit code is the code's (2 the
input is not what it claims to be, 1 it was read and does not verify).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

# DSSE envelope.md / protocol.md: the envelope and its signatures.
ENVELOPE: Final[tuple[Code, ...]] = (
    Code("dsse.too_large", INPUT, "The envelope is larger than the DSSE envelope size cap."),
    Code(
        "dsse.malformed",
        INPUT,
        "The envelope is not a JSON object with string payload and payloadType and an array of"
        " signatures, each an object with a string sig (and, if set, a string keyid).",
    ),
    Code(
        "dsse.bad_base64",
        INPUT,
        "payload or a sig is not base64 (standard or URL-safe, padded or not, canonical, no"
        " whitespace).",
    ),
    Code("dsse.no_signatures", INPUT, "The envelope carries no signature."),
    Code("dsse.too_many_signatures", INPUT, "The envelope carries more signatures than the cap."),
    Code(
        "dsse.signature_unverified",
        FAILED,
        "No signature of the envelope verifies under a trusted key over PAE(payloadType, payload).",
    ),
    Code(
        "dsse.threshold_not_met",
        FAILED,
        "Fewer distinct trusted keys than the threshold verify a signature of the envelope.",
    ),
    Code(
        "dsse.payload_type_unsupported",
        FAILED,
        "The payloadType is not application/vnd.in-toto+json: the payload is not read as a"
        " Statement (fail closed).",
    ),
)

# in-toto attestation spec v1: the Statement and its subjects (the shape, any predicate type).
STATEMENT: Final[tuple[Code, ...]] = (
    Code("statement.not_json", FAILED, "The signed payload is not one strict JSON document."),
    Code(
        "statement.malformed",
        FAILED,
        "The Statement is not a JSON object with the fields of in-toto Statement v1 and their"
        " types.",
    ),
    Code(
        "statement.version_unsupported",
        FAILED,
        "The Statement's _type is another in-toto Statement version (e.g. v0.1): only"
        " https://in-toto.io/Statement/v1 is read.",
    ),
    Code("statement.wrong_type", FAILED, "The payload's _type is not an in-toto Statement."),
    Code(
        "statement.subject_invalid",
        FAILED,
        "subject is not a non-empty array of ResourceDescriptors, each with a digest.",
    ),
    Code(
        "statement.digest_invalid",
        FAILED,
        "A subject digest is empty, or a value is not a string, or a sha256/sha384/sha512 value"
        " is not lowercase hex of the algorithm's length.",
    ),
    Code(
        "statement.predicate_type_invalid",
        FAILED,
        "predicateType is not a non-empty URI string.",
    ),
    Code("statement.predicate_invalid", FAILED, "predicate is present and not a JSON object."),
    Code(
        "statement.subject_mismatch",
        FAILED,
        "The Statement's subject is not the one its source (the bundle) gives: name or sha256"
        " digest differs.",
    ),
    Code(
        "statement.predicate_mismatch",
        FAILED,
        "The Statement's predicate is not the one rebuilt from its source (the bundle).",
    ),
)

# Affidavit's predicate types (specs/predicates/) and SLSA's VSA v1: building them from a bundle,
# manifest entry or fact audit, and cross-checking a Statement against its source.
PREDICATE: Final[tuple[Code, ...]] = (
    Code(
        "predicate.decision_missing",
        INPUT,
        "The bundle records no policy decision (no event whose payload has decision and"
        " policy_snapshot): there is no decision to attest.",
    ),
    Code(
        "predicate.audit_invalid",
        INPUT,
        "Not a facts audit report (the JSON of a facts audit): ok, facts, findings, info and"
        " signatures of the right types are required.",
    ),
    Code(
        "predicate.kind_unknown",
        INPUT,
        "export intoto: the source is none of a stamped bundle, a signed manifest entry or a"
        " facts audit report.",
    ),
    Code(
        "predicate.kind_ambiguous",
        INPUT,
        "export intoto: the source has the shape of more than one kind; the caller must name one.",
    ),
)

__all__ = ["ENVELOPE", "FAILED", "INPUT", "PREDICATE", "STATEMENT"]
