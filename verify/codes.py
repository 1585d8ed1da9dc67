"""Every error code of :mod:`affidavit.verify`, in one table: its stable name, the exit code it
maps to, and what it means (issue 32: one error table per package).

The families of :mod:`affidavit.verify.errors` accept the codes of the groups they name;
``specs/error-codes.json`` is generated from them (``tools/gen_error_codes.py``). Codes are public:
never rename one. The storage and registry layers make their own tables with :func:`table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

__all__ = [
    "ANCHOR",
    "BUNDLE",
    "CANONICAL",
    "CBOR",
    "CONTRACT",
    "ENVELOPE",
    "FAILED",
    "INPUT",
    "KEY",
    "LINEAGE",
    "MERKLE",
    "PARSE",
    "POLICY",
    "PREDICATE",
    "RECEIPT",
    "REFUSED",
    "SCITT",
    "SIGNATURE",
    "STATEMENT",
    "TLOG",
    "TRANSFORM",
    "USAGE",
    "Code",
    "catalogue",
    "table",
]

# Exit codes (docs/architecture.md, "Exit codes"): every command maps a code to one of these.
FAILED: Final = 1  # the input was read, and it does not verify
INPUT: Final = 2  # the input could not be read as what it claims to be, or bad usage
REFUSED: Final = 3  # refused by policy (e.g. pinning a revoked contract)


class Code(NamedTuple):
    """One stable error code. ``code`` is what users, scripts and vectors see; never rename it."""

    code: str
    exit_code: int
    description: str


def table(exit_code: int, meanings: Mapping[str, str]) -> tuple[Code, ...]:
    """The codes of one exit code, from ``{code: what it means}``, in the order given.

    >>> table(FAILED, {"a.b": "x"})
    (Code(code='a.b', exit_code=1, description='x'),)
    """
    return tuple(Code(code, exit_code, meaning) for code, meaning in meanings.items())


def catalogue(*tables: Iterable[Code]) -> Mapping[str, Code]:
    """Merge code tables into one mapping by code, refusing a code declared twice.

    >>> sorted(catalogue([Code("a.b", INPUT, "x")], [Code("a.c", FAILED, "y")]))
    ['a.b', 'a.c']
    """
    merged: dict[str, Code] = {}
    for table in tables:
        for entry in table:
            if entry.code in merged:
                raise ValueError(f"error code {entry.code!r} is declared twice")
            merged[entry.code] = entry
    return merged


# verify/json/: files and strict parsing (ParseError), the canonical forms (CanonicalError).
_PARSE_INPUT: Final = {
    "io.exists": "Refused to overwrite an existing file the caller did not allow replacing.",
    "io.unreadable": "A file could not be read.",
    "io.worker_failed": (
        "A worker process of a bulk run ended unexpectedly (killed, out of memory); the inputs it "
        "held got no result (docs/adr/0023)."
    ),
    "json.bom": "The document starts with a byte-order mark.",
    "json.duplicate_key": "An object has the same key twice; the document could be read two ways.",
    "json.invalid_utf8": "The bytes are not valid UTF-8.",
    "json.lone_surrogate": "A string holds an unpaired UTF-16 surrogate (raw or escaped).",
    "json.non_finite": "NaN, Infinity or -Infinity literal, or a number too large for a double.",
    "json.number_too_large": "An integer literal has more than 4,300 digits.",
    "json.syntax": "Not well-formed JSON (RFC 8259).",
    "json.too_deep": "Arrays and objects nest deeper than the limit (default 128).",
    "json.too_many_items": (
        "More objects and arrays than the limit (default 1,000,000) in one document."
    ),
    "json.too_large": "The document is larger than the size limit (default 64 MiB).",
    "json.trailing_data": "Data follows the JSON value.",
    "json.wrong_type": "The JSON value is not of the expected type (e.g. an object).",
}
PARSE: Final = table(INPUT, _PARSE_INPUT)

_CANONICAL_INPUT: Final = {
    "canonical.lone_surrogate": "A string holds an unpaired surrogate, which has no UTF-8 form.",
    "canonical.non_finite": "NaN and infinities have no JSON form.",
    "canonical.non_string_key": "An object key is not a string.",
    "canonical.unsafe_integer": (
        "An integer outside +-(2^53-1) cannot be encoded by RFC 8785 (I-JSON)."
    ),
    "canonical.unsupported_type": (
        "A value is not a JSON type (dict, list, str, int, float, bool, None)."
    ),
}
CANONICAL: Final = table(INPUT, _CANONICAL_INPUT)

# UsageError; the command line's parser reports what it catches more precisely (cli/_group.py).
_USAGE_INPUT: Final = {
    "usage.invalid": "Invalid usage or arguments.",
    "usage.missing_argument": "A required argument or option is missing.",
    "usage.no_such_command": "The command line names no such command.",
    "usage.no_such_option": "The command takes no such option.",
}
USAGE: Final = table(INPUT, _USAGE_INPUT)


# verify/crypto/: keys (KeyMaterialError), signatures, tree heads and checkpoints (SignatureError),
# Merkle proofs (ProofError).
_KEY_INPUT: Final = {
    "key.bad_base64": "Key material is not strict base64 (or hex where hex is expected).",
    "key.insecure_permissions": (
        "A private key file is readable by group or others; refused on request."
    ),
    "key.non_canonical": (
        "The Ed25519 public key is a non-canonical point encoding (RFC 8032 §5.1.3)."
    ),
    "key.not_on_curve": "The 32 bytes do not decode to a point of edwards25519.",
    "key.unrecognized": (
        "A key file is in none of the accepted forms (base64, publisher JSON, PEM)."
    ),
    "key.vkey_malformed": "A C2SP verifier key string is not name+hexkeyid+base64(0x01||key).",
    "key.weak": "The Ed25519 public key is a small-order point (accepts forged signatures).",
    "key.window_invalid": (
        "A key document's valid_from/valid_until is not an RFC 3339 date-time with an offset, or "
        "the window is empty."
    ),
    "key.window_unsupported": (
        "A key with a validity window was given to a command that cannot honour it (fail closed)."
    ),
    "key.wrong_length": "An Ed25519 key must be exactly 32 bytes.",
}
KEY: Final = table(INPUT, _KEY_INPUT)

_SIGNATURE_INPUT: Final = {
    "checkpoint.malformed": (
        "Not a C2SP signed note / tlog-checkpoint (text, blank line, signature lines)."
    ),
    "signature.malformed": "A signature is not strict base64 of exactly 64 bytes.",
    "treehead.malformed": "A signed tree head lacks a field or has one of the wrong type or form.",
}
_SIGNATURE_FAILED: Final = {
    "checkpoint.no_trusted_signature": (
        "No signature line of the note is from a trusted verifier key."
    ),
    "checkpoint.origin_mismatch": "The checkpoint's origin line is not the expected origin.",
    "checkpoint.signature_bad": "A signature line from a trusted key does not verify.",
    "signature.bad": "The Ed25519 signature does not verify under the given key (strict rules).",
    "treehead.key_outside_window": (
        "The tree head is dated outside the validity window of the trusted key that signed it."
    ),
    "treehead.signature_bad": (
        "The signed tree head's signature does not verify under the given key."
    ),
}
SIGNATURE: Final = (*table(INPUT, _SIGNATURE_INPUT), *table(FAILED, _SIGNATURE_FAILED))

_MERKLE_INPUT: Final = {
    "merkle.bad_hash_length": "A leaf hash, root or proof hash is not exactly 32 bytes.",
}
_MERKLE_FAILED: Final = {
    "merkle.bad_proof_length": (
        "The proof has the wrong number of hashes for this index and tree size."
    ),
    "merkle.consistency_from_zero": (
        "A consistency proof from an empty tree proves nothing; refused."
    ),
    "merkle.index_out_of_range": "The leaf index is not below the tree size.",
    "merkle.root_mismatch": "The root recomputed from the proof differs from the expected root.",
    "merkle.size_order": "A consistency proof needs the first size to be at most the second.",
}
MERKLE: Final = (*table(INPUT, _MERKLE_INPUT), *table(FAILED, _MERKLE_FAILED))


# verify/anchor/: anchor receipts and their RFC 3161 time-stamp tokens (ProofError).
_ANCHOR_FAILED: Final = {
    "anchor.algorithm_unsupported": (
        "The token's signer digest/signature algorithm is not SHA-256/384/512 with RSA PKCS#1 v1.5 "
        "or ECDSA."
    ),
    "anchor.digest_algorithm_unsupported": 'sth_digest_algorithm is not "SHA-256".',
    "anchor.digest_mismatch": (
        "sth_digest differs from H(py-compact(sth)) recomputed over the receipt's sth."
    ),
    "anchor.imprint_algorithm_unsupported": (
        "The token's messageImprint hash is not SHA-256/384/512 (SHA-1 is refused)."
    ),
    "anchor.imprint_mismatch": (
        "messageImprint.hashedMessage differs from the hash, under the token's algorithm, of "
        "py-compact(sth)."
    ),
    "anchor.message_digest_mismatch": (
        "The messageDigest signed attribute differs from the hash of the TSTInfo."
    ),
    "anchor.sth_mismatch": "The receipt's sth differs from the signed tree head it should anchor.",
    "anchor.token_absent": "The receipt has no tsr_base64 time-stamp token to verify.",
    "anchor.token_malformed": (
        "tsr_base64 is not a DER TimeStampResp/TimeStampToken (RFC 3161 §2.4.2, RFC 5652 §5)."
    ),
    "anchor.token_unchecked": (
        "The RFC 3161 token was not verified (no trusted TSA certificate given): not verified."
    ),
    "anchor.tsa_cert_eku_invalid": (
        "The TSA certificate lacks a critical extendedKeyUsage of only id-kp-timeStamping (RFC "
        "3161 §2.3), or its keyUsage allows more than digitalSignature/nonRepudiation."
    ),
    "anchor.tsa_cert_mismatch": (
        "The token's SignerInfo sid or signing-certificate attribute does not name the given TSA "
        "certificate (RFC 5035, RFC 5816)."
    ),
    "anchor.tsa_cert_not_valid": (
        "The token's genTime is outside the TSA certificate's notBefore..notAfter."
    ),
    "anchor.tsa_chain_invalid": (
        "The TSA certificate does not chain to a trust anchor the caller gave (RFC 5280 §6)."
    ),
    "anchor.tsa_not_granted": (
        'tsa_status is not "granted", or the TimeStampResp status is not granted (0) or '
        "grantedWithMods (1) (RFC 3161 §2.4.2)."
    ),
    "anchor.tsa_signature_invalid": (
        "The token's signature over its signed attributes does not verify under the TSA "
        "certificate's key (RFC 5652 §5.4)."
    ),
}
_ANCHOR_INPUT: Final = {
    "anchor.malformed": (
        "Not an anchor receipt: a required field (receipt or sth) is absent or mistyped."
    ),
    "anchor.tsa_cert_unreadable": (
        "A TSA or CA certificate given is not a PEM or DER X.509 certificate."
    ),
}
ANCHOR: Final = (*table(FAILED, _ANCHOR_FAILED), *table(INPUT, _ANCHOR_INPUT))


# verify/tlog/ (ProofError). C2SP tlog-tiles: tile paths, tile and entry-bundle contents.
_TILES_INPUT: Final = {
    "tlog.tile_path_invalid": (
        "Not a canonical tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]."
    ),
    "tlog.tile_missing": (
        "A tile or entry bundle the checkpoint's tree size needs is not available."
    ),
    "tlog.tile_malformed": "A tile is not exactly 32 bytes per hash of the width its path names.",
    "tlog.bundle_malformed": (
        "An entry bundle is not exactly W uint16-length-prefixed entries (truncated, trailing)."
    ),
    "tlog.entry_too_large": (
        "An entry longer than 65,535 bytes does not fit an entry bundle (uint16 length)."
    ),
    "tlog.beyond_tree": (
        "A leaf, tile, subtree or size asked of a tiled tree is beyond its checkpoint's size."
    ),
}
_TILES_FAILED: Final = {
    "tlog.tile_mismatch": (
        "The tiles' root is not the checkpoint's root, or an entry does not hash to its tile."
    ),
}
TILES: Final = (*table(INPUT, _TILES_INPUT), *table(FAILED, _TILES_FAILED))

# C2SP tlog-cosignature: cosigner keys and cosignature lines.
_COSIGNATURE_INPUT: Final = {
    "tlog.cosigner_key_malformed": (
        "A cosigner verifier key is not name+hexkeyid+base64(0x04||Ed25519 or 0x06||ML-DSA-44)."
    ),
    "tlog.cosignature_malformed": (
        "A cosignature is not a u64 timestamp and a signature of the algorithm's length."
    ),
    "tlog.cosigner_unsupported": (
        "The cosignature algorithm (ML-DSA-44) is not available in this cryptography build."
    ),
}
_COSIGNATURE_FAILED: Final = {
    "tlog.cosignature_bad": (
        "A cosignature from a trusted cosigner does not verify over the checkpoint."
    ),
}
COSIGNATURE: Final = (*table(INPUT, _COSIGNATURE_INPUT), *table(FAILED, _COSIGNATURE_FAILED))

# C2SP tlog-proof and tlog-policy.
_PROOF_INPUT: Final = {
    "tlog.proof_malformed": (
        "Not a c2sp.org/tlog-proof@v1: header, optional extra, index, proof hashes, empty line, "
        "checkpoint."
    ),
    "tlog.policy_malformed": (
        "Not a valid tlog-policy file (a line, key, name, group or the quorum line is wrong)."
    ),
}
_PROOF_FAILED: Final = {
    "tlog.log_untrusted": "No log of the tlog-policy is named by the checkpoint's origin.",
    "tlog.quorum_not_met": (
        "The witnesses whose cosignatures verified do not satisfy the policy's quorum."
    ),
    "tlog.entry_mismatch": (
        "The inclusion proof does not bind the entry (leaf hash) to the checkpoint's root."
    ),
}
PROOF: Final = (*table(INPUT, _PROOF_INPUT), *table(FAILED, _PROOF_FAILED))

# A monitor of a tiled log: what it remembers, and what it alerts on.
_MONITOR_INPUT: Final = {
    "tlog.monitor_state_invalid": (
        "The monitor's state file is malformed, or belongs to another log or key."
    ),
}
_MONITOR_FAILED: Final = {
    "tlog.rollback": (
        "The log's checkpoint is smaller than the one the monitor already trusted (a rollback)."
    ),
    "tlog.fork": (
        "The log's tree does not extend the tree the monitor trusted (a fork or split view)."
    ),
    "tlog.rotation_unproven": (
        "The checkpoint is not signed by the trusted log key, and no rotation that key signed (and "
        "the new key countersigned) hands the log over to a key that signed it."
    ),
}
MONITOR: Final = (*table(INPUT, _MONITOR_INPUT), *table(FAILED, _MONITOR_FAILED))

# C2SP tlog-witness, the log's side: what a witness answered to add-checkpoint.
_WITNESS_FAILED: Final = {
    "tlog.witness_refused": (
        "A witness refused the checkpoint (an HTTP status other than 200 and 409); details carry "
        "the witness URL and the status."
    ),
}
_WITNESS_INPUT: Final = {
    "tlog.witness_bad_response": (
        "A witness answered add-checkpoint with something tlog-witness does not define (not "
        "signature lines, or a 409 body that is not a size)."
    ),
}
WITNESS: Final = (*table(FAILED, _WITNESS_FAILED), *table(INPUT, _WITNESS_INPUT))

TLOG: Final = (*TILES, *COSIGNATURE, *PROOF, *MONITOR, *WITNESS)


# verify/contracts/: contracts, manifests, pins, validators, adapter replay (ContractError).
_CONTRACT_FAILED: Final = {
    "adapter.contract_hash_mismatch": (
        "contract_hash_mismatch: contract_hash differs from the one recomputed."
    ),
    "adapter.input_schema_hash_mismatch": (
        "input_schema_hash_mismatch: input_schema_hash differs from the one recomputed."
    ),
    "adapter.matched_rule_does_not_fire": (
        "matched_rule_does_not_fire_against_evaluated_inputs: a decision's matched rule does not "
        "fire against its evaluated inputs."
    ),
    "adapter.normalized_inputs_not_allowed": (
        "normalized_inputs_not_in_allowed_policy_fields: an input is not an allowed field."
    ),
    "adapter.schema_fail": (
        "schema_fail: the embedded adapter_contract does not pass the AdapterContract schema."
    ),
    "adapter.shape_invalid": (
        "adapter_evaluation_shape_invalid: an adapter_evaluation is not the expected shape."
    ),
    "adapter.validator_declaration_missing": (
        "validator_declaration_missing: no validator name and version are declared."
    ),
    "adapter.validator_result_inconsistent": (
        "validator_result_inconsistent: the recorded result disagrees with itself or with a re-run "
        "of the validator on the raw output."
    ),
    "contract.bad_adapter_id": "adapter_id is not a reverse-DNS string (e.g. acme.eval_suite.v0).",
    "contract.bad_field_name": "A field name is not a snake_case string.",
    "contract.bad_hash_format": (
        "contract_hash or input_schema_hash is not 64 lowercase hex characters."
    ),
    "contract.bad_semver": "A version field is not a MAJOR.MINOR.PATCH string.",
    "contract.bad_validator_name": "validator_name is not a snake_case string.",
    "contract.duplicate_field": (
        "output_fields or allowed_policy_fields lists the same entry twice."
    ),
    "contract.fields_not_array": "output_fields or allowed_policy_fields is not an array.",
    "contract.hash_mismatch": "The declared contract_hash differs from the recomputed one.",
    "contract.input_schema_hash_mismatch": (
        "The declared input_schema_hash differs from the recomputed one."
    ),
    "contract.lifecycle_invalid": (
        "A lifecycle field is malformed (status, distribution_channel, adapter_id@semver pointer, "
        "min_verifier_version, published_at); lint only, never part of replay."
    ),
    "contract.lifecycle_self_reference": (
        "supersedes or replaced_by names the contract itself (adapter_id@version)."
    ),
    "contract.missing_field": "A required AdapterContract field is absent.",
    "contract.not_object": "The declaration is not a JSON object.",
    "contract.output_fields_empty": "output_fields has no entry.",
    "contract.policy_fields_not_subset": (
        "allowed_policy_fields names a field that is not in output_fields."
    ),
    "contract.schema_invalid": "The AdapterContract does not conform to its schema.",
    "entry.hash_mismatch": (
        "An entry's entry_hash differs from the hash recomputed over its 15 fields."
    ),
    "entry.lint_failed": "The contract does not lint clean, so no entry is attested for it.",
    "entry.signature_invalid": "An entry_signature does not verify under the publisher key.",
    "manifest.publisher_mismatch": (
        "The publisher document names another publisher or key id than the manifest."
    ),
    "manifest.verification_failed": (
        "The manifest does not verify (hash, signature, collision or entry failure)."
    ),
    "pin.check_failed": (
        "At least one pin does not hold (hash mismatch, missing declaration, bad entry)."
    ),
    # The gate's findings (`pins check --json` "findings", issue 37 §5): each fails the gate
    # (exit 1, reported under pin.check_failed).
    "pin.contract_changed": (
        "A pinned contract's declaration recomputes to another contract_hash than the pin's."
    ),
    "pin.contract_invalid": "A pinned contract's declaration does not lint clean.",
    "pin.contract_missing": (
        "No declaration for a pin where the gate looks (the contract was deleted, moved or "
        "renamed); a manifest entry never stands in for it."
    ),
    "pin.contract_unreadable": (
        "A file that may be a pinned contract cannot be read strictly (unreadable, too large)."
    ),
    "pin.entry_missing": "The manifest (or the registry's live manifest) has no entry for a pin.",
    "pin.manifest_stale": (
        "The manifest's proven signed time is older than the maximum age, ahead, or absent."
    ),
    "pin.recorded_unverified": (
        "The pin was recorded against a manifest entry that failed verification."
    ),
    "pin.signature_required": (
        "Signed entries are required, and a manifest or entry signature is not ok (e.g. unsigned)."
    ),
    "pin.entry_unverified": "The manifest entry failed verification, so it is not pinned.",
    "pin.hash_mismatch": "The manifest entry's contract_hash differs from the hash being pinned.",
    "validator.unknown": "No deterministic validator with this (name, version) is installed.",
}
_CONTRACT_INPUT: Final = {
    "contract.version_not_increasing": (
        "bump refuses a version lower than or equal to the current one."
    ),
    "entry.control_character": (
        "A value to be signed into a manifest entry holds a control character (e.g. NUL)."
    ),
    "entry.invalid": (
        "A manifest entry or attest document is malformed (missing or non-string field)."
    ),
    "entry.lifecycle_invalid": (
        "A lifecycle edit is invalid (unknown status, bad adapter_id@semver pointer)."
    ),
    "entry.publisher_mismatch": (
        "An entry names another publisher or key id than the manifest being built."
    ),
    "manifest.duplicate_entry": (
        "Two entries given to manifest build share (adapter_id, adapter_version)."
    ),
    "manifest.fetch_failed": (
        "A manifest or publisher document URL could not be fetched (https only, capped)."
    ),
    "manifest.invalid": (
        "The manifest is malformed (not an object, contracts not an array of objects)."
    ),
    "manifest.publisher_document_invalid": (
        "The publisher document is malformed (fields missing, key not 32 bytes)."
    ),
    "pin.file_invalid": "The pin file is malformed; nothing was written.",
    "pin.invalid_argument": (
        "A pin argument is malformed (id not reverse-DNS, version not semver, hash not hex)."
    ),
    "validator.load_failed": (
        "An affidavit.validators entry point failed to load or is not a validator family."
    ),
}
_CONTRACT_REFUSED: Final = {
    "pin.check_revoked": "A pinned contract is revoked and the pin is not marked inspection-only.",
    "pin.revoked": (
        "Pinning a revoked contract is refused, unless the caller allows it for legacy inspection."
    ),
}
CONTRACT: Final = (
    *table(FAILED, _CONTRACT_FAILED),
    *table(INPUT, _CONTRACT_INPUT),
    *table(REFUSED, _CONTRACT_REFUSED),
)

# Acceptance policies (PolicyError).
_POLICY_INPUT: Final = {
    "policy.malformed": (
        "An AcceptancePolicy is not {rules: [{conditions: [{field, op, value}], action}], default}."
    ),
    "policy.unknown_action": "A policy action is not auto_accept, require_review or auto_reject.",
    "policy.unknown_operator": "A policy condition uses an operator other than >= <= > < == != in.",
}
_POLICY_FAILED: Final = {
    "policy.replay_mismatch": "Replaying the policy snapshot does not give the recorded decision.",
    "policy.snapshot_malformed": (
        "A decision event's policy_snapshot is not {matched_rule, evaluated_inputs, rule_index}."
    ),
}
POLICY: Final = (*table(INPUT, _POLICY_INPUT), *table(FAILED, _POLICY_FAILED))


# verify/bundles/: bundles, their events and outcome attestations (BundleError).
_BUNDLE_INPUT: Final = {
    "attestation.malformed": (
        "Not an OutcomeAttestation {attestation, payload_hash, signature, algorithm, ...}."
    ),
    "bundle.malformed": (
        "Not a ProofPack bundle: a required top-level field is absent or of the wrong type."
    ),
    "bundle.unsupported_version": (
        "spec_version is not 1.0.0, 2.0.0 or 3.0.0 (or absent for a legacy bundle)."
    ),
}
_BUNDLE_FAILED: Final = {
    "attestation.payload_hash_mismatch": "payload_hash differs from H(py-compact(attestation)).",
    "attestation.signature_bad": "The attestation signature does not verify under the trusted key.",
    "attestation.unanchored": "No trusted key was supplied; the embedded key alone proves nothing.",
    "bundle.actor_signatures_missing": (
        "Actor signatures were required, but no event of the bundle is actor-signed."
    ),
    "bundle.actor_signatures_untrusted": (
        "Actor signatures were required, but an event's signature verifies under no key the caller "
        "trusts for its actor at its time (only under a key the bundle carries, or under a trusted "
        "key bound to another actor or outside its validity window)."
    ),
    "bundle.consequence_identity_mismatch": (
        "An event's consequence_identity_hash/identity_hash matches no identity_hash of an "
        "authorized CONSEQUENCE_AUTHORIZED event of the bundle."
    ),
    "bundle.events_after_finality": (
        "The bundle has events after the finality event its Merkle leaf recomputes from; the "
        "signed tree head does not cover them."
    ),
    "bundle.hash_mismatch": "bundle_hash differs from the hash recomputed over the bundle.",
    "bundle.inclusion_malformed": (
        "merkle_inclusion or signed_tree_head has a missing or malformed field."
    ),
    "bundle.leaf_ambiguous": "The proven leaf recomputes from more than one event of this bundle.",
    "bundle.leaf_unbound": "The proven leaf recomputes from no finality event of this bundle.",
    "bundle.proof_unbound": (
        "An event's payload.proof_hashes do not list exactly the bundle's proofs."
    ),
    "bundle.reconciliation_vocabulary_unknown": (
        "An OUTCOME_RECONCILED event has a reconciliation_status, readback_source_type or "
        "evidence_redaction_status outside its controlled vocabulary (or lacks one)."
    ),
    "bundle.root_not_signed": (
        "merkle_inclusion (root, size or log) differs from what the signed tree head covers."
    ),
    "bundle.sidecar_hash_mismatch": (
        "sidecar_hash differs from the hash recomputed over the sidecar."
    ),
    "bundle.sidecar_malformed": (
        "The actor-signature sidecar or key directory is malformed or unsupported."
    ),
    "bundle.sidecar_unknown_event": (
        "The sidecar signs an event hash that is not in the event chain."
    ),
    "bundle.swarm_coverage_incomplete": (
        "Profile swarm-strict: a designated event type is absent, or one of its events lacks a "
        "valid, temporally valid actor signature by an enrolled key."
    ),
    "bundle.swarm_decision_invalid": (
        "Profile swarm-strict: a CONSEQUENCE_AUTHORIZED event's swarm_decision context is "
        "malformed, contradictory, or does not match its digest or designation."
    ),
    "bundle.swarm_designation_invalid": (
        "Profile swarm-strict: the latest swarm_policy event is not validly actor-signed, has an "
        "unsupported policy_version, or lacks required_signed_event_types."
    ),
    "bundle.swarm_designation_missing": (
        "Profile swarm-strict: no event of the bundle carries payload.swarm_policy."
    ),
    "bundle.swarm_snapshot_mismatch": (
        "Profile swarm-strict: swarm_enforcement.snapshot_hash does not recompute, or the "
        "snapshot's designation differs from the signed one."
    ),
    "bundle.tlog_proof_mismatch": (
        "The bundle's tlog_proof is for another leaf index than its merkle_inclusion."
    ),
    "bundle.tlog_proof_missing": "A tlog-policy was given, and the bundle carries no tlog_proof.",
    "bundle.unanchored": (
        "No tree head signed by a trusted key anchors the bundle (supply a trusted key)."
    ),
    "event.actor_mismatch": (
        "The key directory binds the signing key to another actor than the event's."
    ),
    "event.chain_broken": (
        "An event's prev_hash is not the previous event's hash (or not empty for the first)."
    ),
    "event.deal_mismatch": "An event's deal_id differs from the bundle's deal_id.",
    "event.duplicate_id": "Two events of the bundle share one event_id.",
    "event.hash_mismatch": "An event's hash differs from the hash recomputed over its fields.",
    "event.key_inactive": (
        "A key directory entry used for a signature has a status other than active."
    ),
    "event.key_lifecycle_malformed": (
        "A key directory entry has a status other than active and no revoked_at."
    ),
    "event.key_mismatch": (
        "A sidecar entry's public key differs from the key directory's for that key_id."
    ),
    "event.key_not_valid": (
        "An actor key was not valid at the event time (issued_at <= t < revoked_at)."
    ),
    "event.key_unknown": (
        "An actor signature names a key_id the bundle's key directory does not hold."
    ),
    "event.malformed": "An event lacks a field or has one of the wrong type.",
    "event.signature_bad": (
        "An actor signature does not verify under the key its directory entry gives."
    ),
}
BUNDLE: Final = (*table(INPUT, _BUNDLE_INPUT), *table(FAILED, _BUNDLE_FAILED))


# verify/lineage/ (LineageError); the four codes seed 002 §20.6 names without a family are kept.
_LINEAGE_INPUT: Final = {
    "derived_from_immutable": (
        "A stored fact's derived_from cannot be changed (seed 002 §20.6.1 rule 4; HTTP 422)."
    ),
    "fact.batch_invalid": (
        "Several facts of the input are bad; every one is listed, not only the first."
    ),
    "fact.derived_from_malformed": (
        "A derived_from entry is not a 64-character lowercase hex FactHash (or a {hash, fact_id} "
        "object holding one), or the same hash is listed twice."
    ),
    "fact.input_empty": "The input holds no facts (nothing was read).",
    "fact.invalid": "The fact does not match the fact schema.",
    "fact_not_found": (
        "The provenance walk's root fact is not in the store (seed 002 §20.8; HTTP 404)."
    ),
    "graph_depth_exceeded": "Provenance walk depth outside 0..5 (seed 002 §20.6.2; HTTP 400).",
    "lineage.store_empty": "The fact store holds no facts: there is nothing to audit.",
    "lineage.store_invalid": (
        "The fact store cannot be opened or is not a fact store (JSON Lines or SQLite)."
    ),
    "provenance_cycle_detected": (
        "The derived_from graph would contain a cycle (seed 002 §20.6.1 rule 2; HTTP 400)."
    ),
}
_LINEAGE_FAILED: Final = {
    "lineage.cycle_found": "An audit found a cycle in the stored derived_from graph.",
    "lineage.derived_from_changed": (
        "An audit found one FactHash stored twice with different derived_from."
    ),
    "lineage.edge_index_mismatch": (
        "A store's derivation edge index disagrees with the derived_from of the stored facts."
    ),
    "lineage.fact_hash_mismatch": (
        "A stored fact's content does not hash to the FactHash it is stored under."
    ),
    "lineage.fact_malformed": (
        "A stored fact cannot be read as a fact (bad JSON or schema) during an audit."
    ),
    "lineage.reference_malformed": (
        "An audit found a stored fact whose derived_from entries are malformed."
    ),
    "lineage.signature_bad": (
        "A fact signature is malformed, made by a key outside the trusted set, or does not verify "
        "over the FactHash."
    ),
    "stigmem.cid_mismatch": "A node record's cid is not the CID v2 of its content.",
    "stigmem.paging_unreliable": (
        "The node's cursor paging may have skipped facts (more than one page was read)."
    ),
    "stigmem.record_refused": (
        "A node record cannot be written as a fact (e.g. a number that cannot round-trip)"
    ),
}
_LINEAGE_REFUSED: Final = {
    "lineage.root_forbidden": (
        "The walk's root fact is in a scope the caller may not read; no data is returned (seed 002 "
        "§20.6.2; HTTP 403)."
    ),
}
LINEAGE: Final = (
    *table(INPUT, _LINEAGE_INPUT),
    *table(FAILED, _LINEAGE_FAILED),
    *table(REFUSED, _LINEAGE_REFUSED),
)


# verify/dsse/ (EnvelopeError). DSSE envelope.md / protocol.md: the envelope and its signatures.
_ENVELOPE_INPUT: Final = {
    "dsse.too_large": "The envelope is larger than the DSSE envelope size cap.",
    "dsse.malformed": (
        "The envelope is not a JSON object with string payload and payloadType and an array of "
        "signatures, each an object with a string sig (and, if set, a string keyid)."
    ),
    "dsse.bad_base64": (
        "payload or a sig is not base64 (standard or URL-safe, padded or not, canonical, no "
        "whitespace)."
    ),
    "dsse.no_signatures": "The envelope carries no signature.",
    "dsse.too_many_signatures": "The envelope carries more signatures than the cap.",
}
_ENVELOPE_FAILED: Final = {
    "dsse.signature_unverified": (
        "No signature of the envelope verifies under a trusted key over PAE(payloadType, payload)."
    ),
    "dsse.threshold_not_met": (
        "Fewer distinct trusted keys than the threshold verify a signature of the envelope."
    ),
    "dsse.payload_type_unsupported": (
        "The payloadType is not application/vnd.in-toto+json: the payload is not read as a "
        "Statement (fail closed)."
    ),
}
ENVELOPE: Final = (*table(INPUT, _ENVELOPE_INPUT), *table(FAILED, _ENVELOPE_FAILED))

# in-toto attestation spec v1: the Statement and its subjects (the shape, any predicate type).
_STATEMENT_FAILED: Final = {
    "statement.not_json": "The signed payload is not one strict JSON document.",
    "statement.malformed": (
        "The Statement is not a JSON object with the fields of in-toto Statement v1 and their "
        "types."
    ),
    "statement.version_unsupported": (
        "The Statement's _type is another in-toto Statement version (e.g. v0.1): only "
        "https://in-toto.io/Statement/v1 is read."
    ),
    "statement.wrong_type": "The payload's _type is not an in-toto Statement.",
    "statement.subject_invalid": (
        "subject is not a non-empty array of ResourceDescriptors, each with a digest."
    ),
    "statement.digest_invalid": (
        "A subject digest is empty, or a value is not a string, or a sha256/sha384/sha512 value is "
        "not lowercase hex of the algorithm's length."
    ),
    "statement.predicate_type_invalid": "predicateType is not a non-empty URI string.",
    "statement.predicate_invalid": "predicate is present and not a JSON object.",
    "statement.subject_mismatch": (
        "The Statement's subject is not the one its source (the bundle) gives: name or sha256 "
        "digest differs."
    ),
    "statement.predicate_mismatch": (
        "The Statement's predicate is not the one rebuilt from its source (the bundle)."
    ),
}
STATEMENT: Final = table(FAILED, _STATEMENT_FAILED)

# Affidavit's predicate types (specs/predicates/) and SLSA's VSA v1: building them from a bundle,
# manifest entry or fact audit, and cross-checking a Statement against its source.
_PREDICATE_INPUT: Final = {
    "predicate.decision_missing": (
        "The bundle records no policy decision (no event whose payload has decision and "
        "policy_snapshot): there is no decision to attest."
    ),
    "predicate.audit_invalid": (
        "Not a facts audit report (the JSON of a facts audit): ok, facts, findings, info and "
        "signatures of the right types are required."
    ),
    "predicate.kind_unknown": (
        "export intoto: the source is none of a stamped bundle, a signed manifest entry or a facts "
        "audit report."
    ),
    "predicate.kind_ambiguous": (
        "export intoto: the source has the shape of more than one kind; the caller must name one."
    ),
}
PREDICATE: Final = table(INPUT, _PREDICATE_INPUT)


# verify/receipts/ (ReceiptError): each tamper case has its own code (docs/formats.md).
_RECEIPT_INPUT: Final = {
    "receipt.capability_inconsistent": (
        "capability is byte_preserving with transformations declared, or declared_lossy with none "
        "(RFC 002 §1.4: byte_preserving iff the declared set is empty)."
    ),
    "receipt.layout_invalid": (
        "Bulk verification cannot locate a receipt's files: source.uri is absent, not a relative "
        "path, or leaves the source root."
    ),
    "receipt.malformed": "Not a transformation receipt of the documented shape.",
    "receipt.version_unsupported": "The receipt_version is not one this verifier reads.",
}
_RECEIPT_FAILED: Final = {
    "receipt.chunk_mismatch": (
        "The chunks are not the receipt's: a chunk's hash or size differs, their number or order "
        "differs, or they do not concatenate to the content (RFC 002 §7.2/§7.3)."
    ),
    "receipt.content_mismatch": (
        "The content bytes do not hash to the receipt's content.sha256 and size."
    ),
    "receipt.fact_mismatch": (
        "A receipt fact disagrees with its receipt (content hash, adapter or transformations)."
    ),
    "receipt.hash_mismatch": (
        "The receipt file named after a receipt_hash hashes to another receipt_hash: altered."
    ),
    "receipt.key_untrusted": (
        "The signature verifies under none of the trusted keys, and its key_id names none of them: "
        "signed by a key the caller does not trust."
    ),
    "receipt.not_found": (
        "No receipt file in the receipts folder hashes to the receipt_hash a fact names."
    ),
    "receipt.replay_mismatch": (
        "Replaying the declared transformations, in order, on the source does not give the "
        "receipt's content: a transformation was applied that was not declared (RFC 002 §7.3)."
    ),
    "receipt.signature_bad": (
        "The signature does not verify under the trusted key its key_id names: the receipt was "
        "edited after signing, or the signature is forged."
    ),
    "receipt.source_mismatch": (
        "The source bytes do not hash to the receipt's source.sha256 and size."
    ),
    "receipt.unanchored": (
        "No trusted key was given: the signature was not checked, so the receipt is not verified."
    ),
}
RECEIPT: Final = (*table(INPUT, _RECEIPT_INPUT), *table(FAILED, _RECEIPT_FAILED))


# verify/transforms/ (ReceiptError); the receipts room turns a mismatch into a ``receipt.*`` code.
_TRANSFORM_INPUT: Final = {
    "transform.name_invalid": (
        "Not a transformation name: neither a reserved name of RFC 002 §1.4 nor '<adapter>.<name>' "
        "(lowercase identifiers)."
    ),
    "transform.not_utf8": (
        "The chain does not start with utf8_replace_invalid and the source bytes are not valid "
        "UTF-8 (strict decoding)."
    ),
    "transform.plugin_conflict": (
        "An entry point of group 'affidavit.transforms' tries to replace one of the reference "
        "transformations; refused."
    ),
    "transform.plugin_invalid": (
        "An entry point of group 'affidavit.transforms' cannot be loaded, is not callable, or its "
        "name is not a transformation name."
    ),
    "transform.unimplemented": (
        "A declared transformation has no implementation here (an adapter-specific reserved name, "
        "or a plugin that is not installed); never replayed as the identity."
    ),
}
TRANSFORM: Final = table(INPUT, _TRANSFORM_INPUT)


# verify/scitt/ (ScittError). RFC 8949: the strict decoder (verify/scitt/cbor.py).
_CBOR_INPUT: Final = {
    "cbor.too_large": "The CBOR input is larger than the size cap.",
    "cbor.malformed": (
        "Not well-formed CBOR (RFC 8949 §3, Appendix F): truncated, a reserved or invalid "
        "additional-information value, invalid UTF-8 text, or a value type COSE does not use."
    ),
    "cbor.trailing_bytes": "Bytes follow the one CBOR data item.",
    "cbor.indefinite_length": (
        "An indefinite-length string, array or map: refused (RFC 8949 §4.2.1, definite lengths)."
    ),
    "cbor.non_shortest": (
        "An integer, length or tag argument not in its shortest form (RFC 8949 §4.2.1 preferred "
        "serialization): the same value would have two encodings."
    ),
    "cbor.duplicate_key": "A map holds the same key twice (RFC 8949 §5.6).",
    "cbor.too_deep": "Arrays, maps and tags are nested deeper than the cap.",
}
CBOR: Final = table(INPUT, _CBOR_INPUT)

# RFC 9052 (COSE_Sign1), RFC 9943 (Signed and Transparent Statements), RFC 9942 (Receipts).
_SCITT_INPUT: Final = {
    "scitt.cose_malformed": (
        "Not a tagged COSE_Sign1 (RFC 9052 §4.2): tag 18 over [protected bstr, unprotected map, "
        "payload bstr or nil, signature bstr], with int or text header labels, none in both "
        "buckets."
    ),
    "scitt.alg_unsupported": (
        "The protected alg is missing or not EdDSA (-8) or ES256 (-7): refused, never accepted "
        "unchecked."
    ),
    "scitt.crit_unsupported": (
        "The protected crit header (RFC 9052 §3.1) is malformed or lists a header this verifier "
        "does not understand."
    ),
    "scitt.claims_missing": (
        "The protected CWT claims (header 15, RFC 9597) are missing or lack a text iss (1) and sub "
        "(2) (RFC 9943 §6)."
    ),
    "scitt.header_invalid": (
        "A header the statement or receipt uses has the wrong type (content type, kid, CWT claims, "
        "vds, vdp, receipts)."
    ),
    "scitt.payload_missing": (
        "The Signed Statement's payload is detached: its signature cannot be checked here."
    ),
    "scitt.receipts_missing": (
        "The Transparent Statement carries no receipt at unprotected header 394."
    ),
    "scitt.receipt_malformed": (
        "A receipt is not an RFC 9942 receipt of inclusion: no vdp (396) with inclusion proofs "
        "(-1) as bstr .cbor [tree_size, leaf_index, [+ 32-byte hash]], or a proof that does not "
        "fit its tree."
    ),
    "scitt.receipt_vds_unsupported": "The receipt's protected vds (395) is not RFC9162_SHA256 (1).",
    "scitt.key_unrecognized": (
        "Not a key a SCITT signature is checked with: an Ed25519 key in any trusted-key form, or a "
        "P-256 public key in PEM (SubjectPublicKeyInfo)."
    ),
    "scitt.media_type_unsupported": "A registration is not sent as application/cose (HTTP 415).",
    "scitt.rate_limited": (
        "Too many requests from this client; retry after the time the service names (HTTP 429)."
    ),
    "scitt.entry_not_found": "No registration with this entry ID, running or done (HTTP 404).",
    "scitt.entry_id_invalid": (
        "An entry ID is not 64 lowercase hex digits (the SHA-256 leaf entry) (HTTP 400)."
    ),
    "scitt.registration_failed": (
        "The service answered a registration with something other than a receipt, a 303 or 302 "
        "locator, or concise problem details."
    ),
}
_SCITT_FAILED: Final = {
    "scitt.receipt_payload_attached": (
        "The receipt carries an attached payload: a receipt's payload (the root) is detached (RFC "
        "9942 §4.4), so nothing would bind the signature to the leaf."
    ),
    "scitt.receipt_key_untrusted": (
        "The receipt's kid names none of the trusted log keys, and no trusted key verifies it."
    ),
    "scitt.receipt_signature_invalid": (
        "No inclusion proof of the receipt rebuilds a root whose signature verifies under a "
        "trusted log key: the receipt, its proof, its root or the statement was altered."
    ),
    "scitt.key_mismatch": (
        "The signature's algorithm does not fit the key's type (EdDSA needs Ed25519, ES256 a P-256 "
        "key)."
    ),
    "scitt.signature_invalid": (
        "The Signed Statement's signature does not verify under the issuer key given."
    ),
    "scitt.issuer_mismatch": (
        "The Signed Statement's signature verifies only under issuer keys bound to other issuers "
        "than the iss it names (RFC 9943 §5.1.1.1: the key of the issuer it names; "
        "docs/transparency.md, issuer keys and the issuers they sign for)."
    ),
}
_SCITT_REFUSED: Final = {
    "scitt.issuer_untrusted": (
        "The registration policy does not accept the Signed Statement: its signature verifies "
        "under none of the issuer keys the service trusts."
    ),
}
SCITT: Final = (
    *table(INPUT, _SCITT_INPUT),
    *table(FAILED, _SCITT_FAILED),
    *table(REFUSED, _SCITT_REFUSED),
)
