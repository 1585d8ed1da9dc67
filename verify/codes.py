"""Every error code of :mod:`affidavit.verify`, in one table: its stable name, the exit code it
maps to, and what it means (issue 32: one error table per package).

The family classes that raise them are in :mod:`affidavit.verify.errors`; a family accepts the
codes of the groups it names. The exit code is the code's, not the class's: 2 unreadable input or
usage, 1 read and does not verify, 3 refused by policy (docs/architecture.md, "Exit codes").
``specs/error-codes.json`` is generated from the families (``python tools/gen_error_codes.py``).
Codes are public: never rename one. The storage and registry layers keep their own tables
(:mod:`affidavit.attest.errors`, :mod:`affidavit.registry.errors`), built from :class:`Code`.
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


# The json room (verify/json/): files (``io.*``), strict parsing (``json.*``) and the canonical
# forms (``canonical.*``). Raised through ParseError and CanonicalError.
PARSE: Final = (
    Code(
        "io.exists",
        INPUT,
        "Refused to overwrite an existing file the caller did not allow replacing.",
    ),
    Code("io.unreadable", INPUT, "A file could not be read."),
    Code(
        "io.worker_failed",
        INPUT,
        "A worker process of a bulk run ended unexpectedly (killed, out of memory); the inputs"
        " it held got no result (docs/adr/0023).",
    ),
    Code("json.bom", INPUT, "The document starts with a byte-order mark."),
    Code(
        "json.duplicate_key",
        INPUT,
        "An object has the same key twice; the document could be read two ways.",
    ),
    Code("json.invalid_utf8", INPUT, "The bytes are not valid UTF-8."),
    Code(
        "json.lone_surrogate",
        INPUT,
        "A string holds an unpaired UTF-16 surrogate (raw or escaped).",
    ),
    Code(
        "json.non_finite",
        INPUT,
        "NaN, Infinity or -Infinity literal, or a number too large for a double.",
    ),
    Code("json.number_too_large", INPUT, "An integer literal has more than 4,300 digits."),
    Code("json.syntax", INPUT, "Not well-formed JSON (RFC 8259)."),
    Code("json.too_deep", INPUT, "Arrays and objects nest deeper than the limit (default 128)."),
    Code(
        "json.too_many_items",
        INPUT,
        "More objects and arrays than the limit (default 1,000,000) in one document.",
    ),
    Code("json.too_large", INPUT, "The document is larger than the size limit (default 64 MiB)."),
    Code("json.trailing_data", INPUT, "Data follows the JSON value."),
    Code("json.wrong_type", INPUT, "The JSON value is not of the expected type (e.g. an object)."),
)

CANONICAL: Final = (
    Code(
        "canonical.lone_surrogate",
        INPUT,
        "A string holds an unpaired surrogate, which has no UTF-8 form.",
    ),
    Code("canonical.non_finite", INPUT, "NaN and infinities have no JSON form."),
    Code("canonical.non_string_key", INPUT, "An object key is not a string."),
    Code(
        "canonical.unsafe_integer",
        INPUT,
        "An integer outside +-(2^53-1) cannot be encoded by RFC 8785 (I-JSON).",
    ),
    Code(
        "canonical.unsupported_type",
        INPUT,
        "A value is not a JSON type (dict, list, str, int, float, bool, None).",
    ),
)

# Usage (``usage.*``), raised through UsageError: the command line's parser reports what it catches
# more precisely (``cli/_group.py``).
USAGE: Final = (
    Code("usage.invalid", INPUT, "Invalid usage or arguments."),
    Code("usage.missing_argument", INPUT, "A required argument or option is missing."),
    Code("usage.no_such_command", INPUT, "The command line names no such command."),
    Code("usage.no_such_option", INPUT, "The command takes no such option."),
)


# The crypto room (verify/crypto/): keys (``key.*``), signatures, tree heads and checkpoints
# (``signature.*``, ``treehead.*``, ``checkpoint.*``), Merkle proofs (``merkle.*``). Raised through
# KeyMaterialError, SignatureError and ProofError.
KEY: Final = (
    Code(
        "key.bad_base64",
        INPUT,
        "Key material is not strict base64 (or hex where hex is expected).",
    ),
    Code(
        "key.insecure_permissions",
        INPUT,
        "A private key file is readable by group or others; refused on request.",
    ),
    Code(
        "key.non_canonical",
        INPUT,
        "The Ed25519 public key is a non-canonical point encoding (RFC 8032 §5.1.3).",
    ),
    Code("key.not_on_curve", INPUT, "The 32 bytes do not decode to a point of edwards25519."),
    Code(
        "key.unrecognized",
        INPUT,
        "A key file is in none of the accepted forms (base64, publisher JSON, PEM).",
    ),
    Code(
        "key.vkey_malformed",
        INPUT,
        "A C2SP verifier key string is not name+hexkeyid+base64(0x01||key).",
    ),
    Code(
        "key.weak",
        INPUT,
        "The Ed25519 public key is a small-order point (accepts forged signatures).",
    ),
    Code(
        "key.window_invalid",
        INPUT,
        "A key document's valid_from/valid_until is not an RFC 3339 date-time with an offset,"
        " or the window is empty.",
    ),
    Code(
        "key.window_unsupported",
        INPUT,
        "A key with a validity window was given to a command that cannot honour it (fail closed).",
    ),
    Code("key.wrong_length", INPUT, "An Ed25519 key must be exactly 32 bytes."),
)

SIGNATURE: Final = (
    Code(
        "checkpoint.malformed",
        INPUT,
        "Not a C2SP signed note / tlog-checkpoint (text, blank line, signature lines).",
    ),
    Code(
        "checkpoint.no_trusted_signature",
        FAILED,
        "No signature line of the note is from a trusted verifier key.",
    ),
    Code(
        "checkpoint.origin_mismatch",
        FAILED,
        "The checkpoint's origin line is not the expected origin.",
    ),
    Code(
        "checkpoint.signature_bad",
        FAILED,
        "A signature line from a trusted key does not verify.",
    ),
    Code(
        "signature.bad",
        FAILED,
        "The Ed25519 signature does not verify under the given key (strict rules).",
    ),
    Code("signature.malformed", INPUT, "A signature is not strict base64 of exactly 64 bytes."),
    Code(
        "treehead.key_outside_window",
        FAILED,
        "The tree head is dated outside the validity window of the trusted key that signed it.",
    ),
    Code(
        "treehead.malformed",
        INPUT,
        "A signed tree head lacks a field or has one of the wrong type or form.",
    ),
    Code(
        "treehead.signature_bad",
        FAILED,
        "The signed tree head's signature does not verify under the given key.",
    ),
)

MERKLE: Final = (
    Code(
        "merkle.bad_hash_length",
        INPUT,
        "A leaf hash, root or proof hash is not exactly 32 bytes.",
    ),
    Code(
        "merkle.bad_proof_length",
        FAILED,
        "The proof has the wrong number of hashes for this index and tree size.",
    ),
    Code(
        "merkle.consistency_from_zero",
        FAILED,
        "A consistency proof from an empty tree proves nothing; refused.",
    ),
    Code("merkle.index_out_of_range", FAILED, "The leaf index is not below the tree size."),
    Code(
        "merkle.root_mismatch",
        FAILED,
        "The root recomputed from the proof differs from the expected root.",
    ),
    Code(
        "merkle.size_order",
        FAILED,
        "A consistency proof needs the first size to be at most the second.",
    ),
)


# The anchor room (verify/anchor/): anchor receipts and their RFC 3161 time-stamp tokens
# (``anchor.*``). Raised through ProofError.
ANCHOR: Final = (
    Code(
        "anchor.algorithm_unsupported",
        FAILED,
        (
            "The token's signer digest/signature algorithm is not SHA-256/384/512 with RSA PKCS#1"
            " v1.5 or ECDSA."
        ),
    ),
    Code("anchor.digest_algorithm_unsupported", FAILED, 'sth_digest_algorithm is not "SHA-256".'),
    Code(
        "anchor.digest_mismatch",
        FAILED,
        "sth_digest differs from H(py-compact(sth)) recomputed over the receipt's sth.",
    ),
    Code(
        "anchor.imprint_algorithm_unsupported",
        FAILED,
        "The token's messageImprint hash is not SHA-256/384/512 (SHA-1 is refused).",
    ),
    Code(
        "anchor.imprint_mismatch",
        FAILED,
        (
            "messageImprint.hashedMessage differs from the hash, under the token's algorithm, of "
            "py-compact(sth)."
        ),
    ),
    Code(
        "anchor.malformed",
        INPUT,
        "Not an anchor receipt: a required field (receipt or sth) is absent or mistyped.",
    ),
    Code(
        "anchor.message_digest_mismatch",
        FAILED,
        "The messageDigest signed attribute differs from the hash of the TSTInfo.",
    ),
    Code(
        "anchor.sth_mismatch",
        FAILED,
        "The receipt's sth differs from the signed tree head it should anchor.",
    ),
    Code(
        "anchor.token_absent",
        FAILED,
        "The receipt has no tsr_base64 time-stamp token to verify.",
    ),
    Code(
        "anchor.token_malformed",
        FAILED,
        "tsr_base64 is not a DER TimeStampResp/TimeStampToken (RFC 3161 §2.4.2, RFC 5652 §5).",
    ),
    Code(
        "anchor.token_unchecked",
        FAILED,
        "The RFC 3161 token was not verified (no trusted TSA certificate given): not verified.",
    ),
    Code(
        "anchor.tsa_cert_eku_invalid",
        FAILED,
        (
            "The TSA certificate lacks a critical extendedKeyUsage of only id-kp-timeStamping "
            "(RFC 3161 §2.3), or its keyUsage allows more than digitalSignature/nonRepudiation."
        ),
    ),
    Code(
        "anchor.tsa_cert_mismatch",
        FAILED,
        (
            "The token's SignerInfo sid or signing-certificate attribute does not name the given "
            "TSA certificate (RFC 5035, RFC 5816)."
        ),
    ),
    Code(
        "anchor.tsa_cert_not_valid",
        FAILED,
        "The token's genTime is outside the TSA certificate's notBefore..notAfter.",
    ),
    Code(
        "anchor.tsa_cert_unreadable",
        INPUT,
        "A TSA or CA certificate given is not a PEM or DER X.509 certificate.",
    ),
    Code(
        "anchor.tsa_chain_invalid",
        FAILED,
        "The TSA certificate does not chain to a trust anchor the caller gave (RFC 5280 §6).",
    ),
    Code(
        "anchor.tsa_not_granted",
        FAILED,
        (
            'tsa_status is not "granted", or the TimeStampResp status is not granted (0) or '
            "grantedWithMods (1) (RFC 3161 §2.4.2)."
        ),
    ),
    Code(
        "anchor.tsa_signature_invalid",
        FAILED,
        (
            "The token's signature over its signed attributes does not verify under the TSA "
            "certificate's key (RFC 5652 §5.4)."
        ),
    ),
)


# The tlog room (verify/tlog/): C2SP tiles, cosignatures, tlog-proofs, tlog-policies, the monitor
# and the witness's answers (``tlog.*``). Raised through ProofError.

# C2SP tlog-tiles: tile paths, tile and entry-bundle contents.
TILES: Final = (
    Code(
        "tlog.tile_path_invalid",
        INPUT,
        "Not a canonical tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>].",
    ),
    Code(
        "tlog.tile_missing",
        INPUT,
        "A tile or entry bundle the checkpoint's tree size needs is not available.",
    ),
    Code(
        "tlog.tile_malformed",
        INPUT,
        "A tile is not exactly 32 bytes per hash of the width its path names.",
    ),
    Code(
        "tlog.bundle_malformed",
        INPUT,
        "An entry bundle is not exactly W uint16-length-prefixed entries (truncated, trailing).",
    ),
    Code(
        "tlog.entry_too_large",
        INPUT,
        "An entry longer than 65,535 bytes does not fit an entry bundle (uint16 length).",
    ),
    Code(
        "tlog.beyond_tree",
        INPUT,
        "A leaf, tile, subtree or size asked of a tiled tree is beyond its checkpoint's size.",
    ),
    Code(
        "tlog.tile_mismatch",
        FAILED,
        "The tiles' root is not the checkpoint's root, or an entry does not hash to its tile.",
    ),
)

# C2SP tlog-cosignature: cosigner keys and cosignature lines.
COSIGNATURE: Final = (
    Code(
        "tlog.cosigner_key_malformed",
        INPUT,
        "A cosigner verifier key is not name+hexkeyid+base64(0x04||Ed25519 or 0x06||ML-DSA-44).",
    ),
    Code(
        "tlog.cosignature_malformed",
        INPUT,
        "A cosignature is not a u64 timestamp and a signature of the algorithm's length.",
    ),
    Code(
        "tlog.cosignature_bad",
        FAILED,
        "A cosignature from a trusted cosigner does not verify over the checkpoint.",
    ),
    Code(
        "tlog.cosigner_unsupported",
        INPUT,
        "The cosignature algorithm (ML-DSA-44) is not available in this cryptography build.",
    ),
)

# C2SP tlog-proof and tlog-policy.
PROOF: Final = (
    Code(
        "tlog.proof_malformed",
        INPUT,
        "Not a c2sp.org/tlog-proof@v1: header, optional extra, index, proof hashes, empty line,"
        " checkpoint.",
    ),
    Code(
        "tlog.policy_malformed",
        INPUT,
        "Not a valid tlog-policy file (a line, key, name, group or the quorum line is wrong).",
    ),
    Code(
        "tlog.log_untrusted",
        FAILED,
        "No log of the tlog-policy is named by the checkpoint's origin.",
    ),
    Code(
        "tlog.quorum_not_met",
        FAILED,
        "The witnesses whose cosignatures verified do not satisfy the policy's quorum.",
    ),
    Code(
        "tlog.entry_mismatch",
        FAILED,
        "The inclusion proof does not bind the entry (leaf hash) to the checkpoint's root.",
    ),
)

# A monitor of a tiled log: what it remembers, and what it alerts on.
MONITOR: Final = (
    Code(
        "tlog.monitor_state_invalid",
        INPUT,
        "The monitor's state file is malformed, or belongs to another log or key.",
    ),
    Code(
        "tlog.rollback",
        FAILED,
        "The log's checkpoint is smaller than the one the monitor already trusted (a rollback).",
    ),
    Code(
        "tlog.fork",
        FAILED,
        "The log's tree does not extend the tree the monitor trusted (a fork or split view).",
    ),
    Code(
        "tlog.rotation_unproven",
        FAILED,
        "The checkpoint is not signed by the trusted log key, and no rotation that key signed"
        " (and the new key countersigned) hands the log over to a key that signed it.",
    ),
)

# C2SP tlog-witness, the log's side: what a witness answered to add-checkpoint.
WITNESS: Final = (
    Code(
        "tlog.witness_refused",
        FAILED,
        "A witness refused the checkpoint (an HTTP status other than 200 and 409); details carry"
        " the witness URL and the status.",
    ),
    Code(
        "tlog.witness_bad_response",
        INPUT,
        "A witness answered add-checkpoint with something tlog-witness does not define (not"
        " signature lines, or a 409 body that is not a size).",
    ),
)

TLOG: Final = (*TILES, *COSIGNATURE, *PROOF, *MONITOR, *WITNESS)


# The contracts room (verify/contracts/): contracts, manifest entries, manifests, pins, validators
# and adapter replay (``contract.*``, ``entry.*``, ``manifest.*``, ``pin.*``, ``validator.*``,
# ``adapter.*``), raised through ContractError; acceptance policies (``policy.*``), PolicyError.
CONTRACT: Final = (
    Code(
        "adapter.contract_hash_mismatch",
        FAILED,
        "contract_hash_mismatch: contract_hash differs from the one recomputed.",
    ),
    Code(
        "adapter.input_schema_hash_mismatch",
        FAILED,
        "input_schema_hash_mismatch: input_schema_hash differs from the one recomputed.",
    ),
    Code(
        "adapter.matched_rule_does_not_fire",
        FAILED,
        (
            "matched_rule_does_not_fire_against_evaluated_inputs: a decision's matched rule does "
            "not fire against its evaluated inputs."
        ),
    ),
    Code(
        "adapter.normalized_inputs_not_allowed",
        FAILED,
        "normalized_inputs_not_in_allowed_policy_fields: an input is not an allowed field.",
    ),
    Code(
        "adapter.schema_fail",
        FAILED,
        "schema_fail: the embedded adapter_contract does not pass the AdapterContract schema.",
    ),
    Code(
        "adapter.shape_invalid",
        FAILED,
        "adapter_evaluation_shape_invalid: an adapter_evaluation is not the expected shape.",
    ),
    Code(
        "adapter.validator_declaration_missing",
        FAILED,
        "validator_declaration_missing: no validator name and version are declared.",
    ),
    Code(
        "adapter.validator_result_inconsistent",
        FAILED,
        (
            "validator_result_inconsistent: the recorded result disagrees with itself or with a "
            "re-run of the validator on the raw output."
        ),
    ),
    Code(
        "contract.bad_adapter_id",
        FAILED,
        "adapter_id is not a reverse-DNS string (e.g. acme.eval_suite.v0).",
    ),
    Code("contract.bad_field_name", FAILED, "A field name is not a snake_case string."),
    Code(
        "contract.bad_hash_format",
        FAILED,
        "contract_hash or input_schema_hash is not 64 lowercase hex characters.",
    ),
    Code("contract.bad_semver", FAILED, "A version field is not a MAJOR.MINOR.PATCH string."),
    Code("contract.bad_validator_name", FAILED, "validator_name is not a snake_case string."),
    Code(
        "contract.duplicate_field",
        FAILED,
        "output_fields or allowed_policy_fields lists the same entry twice.",
    ),
    Code(
        "contract.fields_not_array",
        FAILED,
        "output_fields or allowed_policy_fields is not an array.",
    ),
    Code(
        "contract.hash_mismatch",
        FAILED,
        "The declared contract_hash differs from the recomputed one.",
    ),
    Code(
        "contract.input_schema_hash_mismatch",
        FAILED,
        "The declared input_schema_hash differs from the recomputed one.",
    ),
    Code(
        "contract.lifecycle_invalid",
        FAILED,
        (
            "A lifecycle field is malformed (status, distribution_channel, adapter_id@semver "
            "pointer, min_verifier_version, published_at); lint only, never part of replay."
        ),
    ),
    Code(
        "contract.lifecycle_self_reference",
        FAILED,
        "supersedes or replaced_by names the contract itself (adapter_id@version).",
    ),
    Code("contract.missing_field", FAILED, "A required AdapterContract field is absent."),
    Code("contract.not_object", FAILED, "The declaration is not a JSON object."),
    Code("contract.output_fields_empty", FAILED, "output_fields has no entry."),
    Code(
        "contract.policy_fields_not_subset",
        FAILED,
        "allowed_policy_fields names a field that is not in output_fields.",
    ),
    Code("contract.schema_invalid", FAILED, "The AdapterContract does not conform to its schema."),
    Code(
        "contract.version_not_increasing",
        INPUT,
        "bump refuses a version lower than or equal to the current one.",
    ),
    Code(
        "entry.control_character",
        INPUT,
        "A value to be signed into a manifest entry holds a control character (e.g. NUL).",
    ),
    Code(
        "entry.hash_mismatch",
        FAILED,
        "An entry's entry_hash differs from the hash recomputed over its 15 fields.",
    ),
    Code(
        "entry.invalid",
        INPUT,
        "A manifest entry or attest document is malformed (missing or non-string field).",
    ),
    Code(
        "entry.lifecycle_invalid",
        INPUT,
        "A lifecycle edit is invalid (unknown status, bad adapter_id@semver pointer).",
    ),
    Code(
        "entry.lint_failed",
        FAILED,
        "The contract does not lint clean, so no entry is attested for it.",
    ),
    Code(
        "entry.publisher_mismatch",
        INPUT,
        "An entry names another publisher or key id than the manifest being built.",
    ),
    Code(
        "entry.signature_invalid",
        FAILED,
        "An entry_signature does not verify under the publisher key.",
    ),
    Code(
        "manifest.duplicate_entry",
        INPUT,
        "Two entries given to manifest build share (adapter_id, adapter_version).",
    ),
    Code(
        "manifest.fetch_failed",
        INPUT,
        "A manifest or publisher document URL could not be fetched (https only, capped).",
    ),
    Code(
        "manifest.invalid",
        INPUT,
        "The manifest is malformed (not an object, contracts not an array of objects).",
    ),
    Code(
        "manifest.publisher_document_invalid",
        INPUT,
        "The publisher document is malformed (fields missing, key not 32 bytes).",
    ),
    Code(
        "manifest.publisher_mismatch",
        FAILED,
        "The publisher document names another publisher or key id than the manifest.",
    ),
    Code(
        "manifest.verification_failed",
        FAILED,
        "The manifest does not verify (hash, signature, collision or entry failure).",
    ),
    Code(
        "pin.check_failed",
        FAILED,
        "At least one pin does not hold (hash mismatch, missing declaration, bad entry).",
    ),
    Code(
        "pin.check_revoked",
        REFUSED,
        "A pinned contract is revoked and the pin is not marked inspection-only.",
    ),
    # The gate's findings (`pins check --json` "findings", issue 37 §5): each fails the gate
    # (exit 1, reported under pin.check_failed).
    Code(
        "pin.contract_changed",
        FAILED,
        "A pinned contract's declaration recomputes to another contract_hash than the pin's.",
    ),
    Code(
        "pin.contract_invalid",
        FAILED,
        "A pinned contract's declaration does not lint clean.",
    ),
    Code(
        "pin.contract_missing",
        FAILED,
        (
            "No declaration for a pin where the gate looks (the contract was deleted, moved or "
            "renamed); a manifest entry never stands in for it."
        ),
    ),
    Code(
        "pin.contract_unreadable",
        FAILED,
        "A file that may be a pinned contract cannot be read strictly (unreadable, too large).",
    ),
    Code(
        "pin.entry_missing",
        FAILED,
        "The manifest (or the registry's live manifest) has no entry for a pin.",
    ),
    Code(
        "pin.manifest_stale",
        FAILED,
        "The manifest's proven signed time is older than the maximum age, ahead, or absent.",
    ),
    Code(
        "pin.recorded_unverified",
        FAILED,
        "The pin was recorded against a manifest entry that failed verification.",
    ),
    Code(
        "pin.signature_required",
        FAILED,
        "Signed entries are required, and a manifest or entry signature is not ok (e.g. unsigned).",
    ),
    Code(
        "pin.entry_unverified",
        FAILED,
        "The manifest entry failed verification, so it is not pinned.",
    ),
    Code("pin.file_invalid", INPUT, "The pin file is malformed; nothing was written."),
    Code(
        "pin.hash_mismatch",
        FAILED,
        "The manifest entry's contract_hash differs from the hash being pinned.",
    ),
    Code(
        "pin.invalid_argument",
        INPUT,
        "A pin argument is malformed (id not reverse-DNS, version not semver, hash not hex).",
    ),
    Code(
        "pin.revoked",
        REFUSED,
        "Pinning a revoked contract is refused, unless the caller allows it for legacy inspection.",
    ),
    Code(
        "validator.load_failed",
        INPUT,
        "An affidavit.validators entry point failed to load or is not a validator family.",
    ),
    Code(
        "validator.unknown",
        FAILED,
        "No deterministic validator with this (name, version) is installed.",
    ),
)

POLICY: Final = (
    Code(
        "policy.malformed",
        INPUT,
        (
            "An AcceptancePolicy is not {rules: [{conditions: [{field, op, value}], action}], "
            "default}."
        ),
    ),
    Code(
        "policy.replay_mismatch",
        FAILED,
        "Replaying the policy snapshot does not give the recorded decision.",
    ),
    Code(
        "policy.snapshot_malformed",
        FAILED,
        ("A decision event's policy_snapshot is not {matched_rule, evaluated_inputs, rule_index}."),
    ),
    Code(
        "policy.unknown_action",
        INPUT,
        "A policy action is not auto_accept, require_review or auto_reject.",
    ),
    Code(
        "policy.unknown_operator",
        INPUT,
        "A policy condition uses an operator other than >= <= > < == != in.",
    ),
)


# The bundles room (verify/bundles/): bundles, their events and outcome attestations
# (``bundle.*``, ``event.*``, ``attestation.*``). Raised through BundleError.
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


# The lineage room (verify/lineage/): facts, derivation links, walks, audits and Stigmem records
# (``lineage.*``, ``fact.*``, ``stigmem.*``). Raised through LineageError. Seed 002 §20.6 names
# four codes without a dotted family; they are kept as the seed spells them.
LINEAGE: Final = (
    Code(
        "derived_from_immutable",
        INPUT,
        "A stored fact's derived_from cannot be changed (seed 002 §20.6.1 rule 4; HTTP 422).",
    ),
    Code(
        "fact.batch_invalid",
        INPUT,
        "Several facts of the input are bad; every one is listed, not only the first.",
    ),
    Code(
        "fact.derived_from_malformed",
        INPUT,
        (
            "A derived_from entry is not a 64-character lowercase hex FactHash (or a {hash, "
            "fact_id} object holding one), or the same hash is listed twice."
        ),
    ),
    Code("fact.input_empty", INPUT, "The input holds no facts (nothing was read)."),
    Code("fact.invalid", INPUT, "The fact does not match the fact schema."),
    Code(
        "fact_not_found",
        INPUT,
        "The provenance walk's root fact is not in the store (seed 002 §20.8; HTTP 404).",
    ),
    Code(
        "graph_depth_exceeded",
        INPUT,
        "Provenance walk depth outside 0..5 (seed 002 §20.6.2; HTTP 400).",
    ),
    Code("lineage.cycle_found", FAILED, "An audit found a cycle in the stored derived_from graph."),
    Code(
        "lineage.derived_from_changed",
        FAILED,
        "An audit found one FactHash stored twice with different derived_from.",
    ),
    Code(
        "lineage.edge_index_mismatch",
        FAILED,
        "A store's derivation edge index disagrees with the derived_from of the stored facts.",
    ),
    Code(
        "lineage.fact_hash_mismatch",
        FAILED,
        "A stored fact's content does not hash to the FactHash it is stored under.",
    ),
    Code(
        "lineage.fact_malformed",
        FAILED,
        "A stored fact cannot be read as a fact (bad JSON or schema) during an audit.",
    ),
    Code(
        "lineage.reference_malformed",
        FAILED,
        "An audit found a stored fact whose derived_from entries are malformed.",
    ),
    Code(
        "lineage.root_forbidden",
        REFUSED,
        (
            "The walk's root fact is in a scope the caller may not read; no data is returned "
            "(seed 002 §20.6.2; HTTP 403)."
        ),
    ),
    Code(
        "lineage.signature_bad",
        FAILED,
        (
            "A fact signature is malformed, made by a key outside the trusted set, or does not "
            "verify over the FactHash."
        ),
    ),
    Code("lineage.store_empty", INPUT, "The fact store holds no facts: there is nothing to audit."),
    Code(
        "lineage.store_invalid",
        INPUT,
        "The fact store cannot be opened or is not a fact store (JSON Lines or SQLite).",
    ),
    Code(
        "provenance_cycle_detected",
        INPUT,
        "The derived_from graph would contain a cycle (seed 002 §20.6.1 rule 2; HTTP 400).",
    ),
    Code("stigmem.cid_mismatch", FAILED, "A node record's cid is not the CID v2 of its content."),
    Code(
        "stigmem.paging_unreliable",
        FAILED,
        "The node's cursor paging may have skipped facts (more than one page was read).",
    ),
    Code(
        "stigmem.record_refused",
        FAILED,
        "A node record cannot be written as a fact (e.g. a number that cannot round-trip)",
    ),
)


# The dsse room (verify/dsse/): DSSE envelopes, their signatures and the in-toto Statements they
# carry (``dsse.*``, ``statement.*``, ``predicate.*``). Raised through EnvelopeError.

# DSSE envelope.md / protocol.md: the envelope and its signatures.
ENVELOPE: Final = (
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
STATEMENT: Final = (
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
PREDICATE: Final = (
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


# The receipts room (verify/receipts/): transformation receipts (``receipt.*``), raised through
# ReceiptError. 2 a receipt or a bulk layout that cannot be read as one; 1 a receipt that was read
# and does not verify (or one ``receipt make`` refuses to sign). Each tamper case has its own code
# (docs/formats.md "Transformation receipts").
RECEIPT: Final = (
    Code(
        "receipt.capability_inconsistent",
        INPUT,
        "capability is byte_preserving with transformations declared, or declared_lossy with "
        "none (RFC 002 §1.4: byte_preserving iff the declared set is empty).",
    ),
    Code(
        "receipt.chunk_mismatch",
        FAILED,
        "The chunks are not the receipt's: a chunk's hash or size differs, their number or order "
        "differs, or they do not concatenate to the content (RFC 002 §7.2/§7.3).",
    ),
    Code(
        "receipt.content_mismatch",
        FAILED,
        "The content bytes do not hash to the receipt's content.sha256 and size.",
    ),
    Code(
        "receipt.fact_mismatch",
        FAILED,
        "A receipt fact disagrees with its receipt (content hash, adapter or transformations).",
    ),
    Code(
        "receipt.hash_mismatch",
        FAILED,
        "The receipt file named after a receipt_hash hashes to another receipt_hash: altered.",
    ),
    Code(
        "receipt.key_untrusted",
        FAILED,
        "The signature verifies under none of the trusted keys, and its key_id names none of "
        "them: signed by a key the caller does not trust.",
    ),
    Code(
        "receipt.layout_invalid",
        INPUT,
        "Bulk verification cannot locate a receipt's files: source.uri is absent, not a "
        "relative path, or leaves the source root.",
    ),
    Code("receipt.malformed", INPUT, "Not a transformation receipt of the documented shape."),
    Code(
        "receipt.not_found",
        FAILED,
        "No receipt file in the receipts folder hashes to the receipt_hash a fact names.",
    ),
    Code(
        "receipt.replay_mismatch",
        FAILED,
        "Replaying the declared transformations, in order, on the source does not give the "
        "receipt's content: a transformation was applied that was not declared (RFC 002 §7.3).",
    ),
    Code(
        "receipt.signature_bad",
        FAILED,
        "The signature does not verify under the trusted key its key_id names: the receipt was "
        "edited after signing, or the signature is forged.",
    ),
    Code(
        "receipt.source_mismatch",
        FAILED,
        "The source bytes do not hash to the receipt's source.sha256 and size.",
    ),
    Code(
        "receipt.unanchored",
        FAILED,
        "No trusted key was given: the signature was not checked, so the receipt is not verified.",
    ),
    Code(
        "receipt.version_unsupported",
        INPUT,
        "The receipt_version is not one this verifier reads.",
    ),
)


# The transforms room (verify/transforms/): declared transformations (``transform.*``), raised
# through ReceiptError. All exit 2: a name that is not a transformation name, a name with no
# implementation here, input the chain cannot read, or a plugin that cannot be loaded; the
# receipts room turns a mismatch into its own ``receipt.*`` code.
TRANSFORM: Final = (
    Code(
        "transform.name_invalid",
        INPUT,
        "Not a transformation name: neither a reserved name of RFC 002 §1.4 nor "
        "'<adapter>.<name>' (lowercase identifiers).",
    ),
    Code(
        "transform.not_utf8",
        INPUT,
        "The chain does not start with utf8_replace_invalid and the source bytes are not valid "
        "UTF-8 (strict decoding).",
    ),
    Code(
        "transform.plugin_conflict",
        INPUT,
        "An entry point of group 'affidavit.transforms' tries to replace one of the reference "
        "transformations; refused.",
    ),
    Code(
        "transform.plugin_invalid",
        INPUT,
        "An entry point of group 'affidavit.transforms' cannot be loaded, is not callable, or its "
        "name is not a transformation name.",
    ),
    Code(
        "transform.unimplemented",
        INPUT,
        "A declared transformation has no implementation here (an adapter-specific reserved name, "
        "or a plugin that is not installed); never replayed as the identity.",
    ),
)


# The scitt room (verify/scitt/): strict CBOR (``cbor.*``) and SCITT (``scitt.*``), raised through
# ScittError. 2 bytes that are not strict CBOR, not a COSE_Sign1 of the shape RFC 9052 and RFC 9943
# give, or something this verifier refuses to read (an algorithm, a critical header, a verifiable
# data structure); 1 a statement or receipt that was read and does not verify; 3 a Signed
# Statement the registration policy does not accept.

# RFC 8949: the strict decoder (verify/scitt/cbor.py).
CBOR: Final = (
    Code("cbor.too_large", INPUT, "The CBOR input is larger than the size cap."),
    Code(
        "cbor.malformed",
        INPUT,
        "Not well-formed CBOR (RFC 8949 §3, Appendix F): truncated, a reserved or invalid"
        " additional-information value, invalid UTF-8 text, or a value type COSE does not use.",
    ),
    Code("cbor.trailing_bytes", INPUT, "Bytes follow the one CBOR data item."),
    Code(
        "cbor.indefinite_length",
        INPUT,
        "An indefinite-length string, array or map: refused (RFC 8949 §4.2.1, definite lengths).",
    ),
    Code(
        "cbor.non_shortest",
        INPUT,
        "An integer, length or tag argument not in its shortest form (RFC 8949 §4.2.1"
        " preferred serialization): the same value would have two encodings.",
    ),
    Code("cbor.duplicate_key", INPUT, "A map holds the same key twice (RFC 8949 §5.6)."),
    Code("cbor.too_deep", INPUT, "Arrays, maps and tags are nested deeper than the cap."),
)

# RFC 9052 (COSE_Sign1), RFC 9943 (Signed and Transparent Statements), RFC 9942 (Receipts).
SCITT: Final = (
    Code(
        "scitt.cose_malformed",
        INPUT,
        "Not a tagged COSE_Sign1 (RFC 9052 §4.2): tag 18 over [protected bstr, unprotected map,"
        " payload bstr or nil, signature bstr], with int or text header labels, none in both"
        " buckets.",
    ),
    Code(
        "scitt.alg_unsupported",
        INPUT,
        "The protected alg is missing or not EdDSA (-8) or ES256 (-7): refused, never accepted"
        " unchecked.",
    ),
    Code(
        "scitt.crit_unsupported",
        INPUT,
        "The protected crit header (RFC 9052 §3.1) is malformed or lists a header this verifier"
        " does not understand.",
    ),
    Code(
        "scitt.claims_missing",
        INPUT,
        "The protected CWT claims (header 15, RFC 9597) are missing or lack a text iss (1) and"
        " sub (2) (RFC 9943 §6).",
    ),
    Code(
        "scitt.header_invalid",
        INPUT,
        "A header the statement or receipt uses has the wrong type (content type, kid, CWT"
        " claims, vds, vdp, receipts).",
    ),
    Code(
        "scitt.payload_missing",
        INPUT,
        "The Signed Statement's payload is detached: its signature cannot be checked here.",
    ),
    Code(
        "scitt.receipts_missing",
        INPUT,
        "The Transparent Statement carries no receipt at unprotected header 394.",
    ),
    Code(
        "scitt.receipt_malformed",
        INPUT,
        "A receipt is not an RFC 9942 receipt of inclusion: no vdp (396) with inclusion proofs"
        " (-1) as bstr .cbor [tree_size, leaf_index, [+ 32-byte hash]], or a proof that does not"
        " fit its tree.",
    ),
    Code(
        "scitt.receipt_vds_unsupported",
        INPUT,
        "The receipt's protected vds (395) is not RFC9162_SHA256 (1).",
    ),
    Code(
        "scitt.receipt_payload_attached",
        FAILED,
        "The receipt carries an attached payload: a receipt's payload (the root) is detached"
        " (RFC 9942 §4.4), so nothing would bind the signature to the leaf.",
    ),
    Code(
        "scitt.receipt_key_untrusted",
        FAILED,
        "The receipt's kid names none of the trusted log keys, and no trusted key verifies it.",
    ),
    Code(
        "scitt.receipt_signature_invalid",
        FAILED,
        "No inclusion proof of the receipt rebuilds a root whose signature verifies under a"
        " trusted log key: the receipt, its proof, its root or the statement was altered.",
    ),
    Code(
        "scitt.key_mismatch",
        FAILED,
        "The signature's algorithm does not fit the key's type (EdDSA needs Ed25519, ES256 a"
        " P-256 key).",
    ),
    Code(
        "scitt.signature_invalid",
        FAILED,
        "The Signed Statement's signature does not verify under the issuer key given.",
    ),
    Code(
        "scitt.issuer_untrusted",
        REFUSED,
        "The registration policy does not accept the Signed Statement: its signature verifies"
        " under none of the issuer keys the service trusts.",
    ),
    Code(
        "scitt.issuer_mismatch",
        FAILED,
        "The Signed Statement's signature verifies only under issuer keys bound to other"
        " issuers than the iss it names (RFC 9943 §5.1.1.1: the key of the issuer it names;"
        " docs/transparency.md, issuer keys and the issuers they sign for).",
    ),
    Code(
        "scitt.key_unrecognized",
        INPUT,
        "Not a key a SCITT signature is checked with: an Ed25519 key in any trusted-key form, or"
        " a P-256 public key in PEM (SubjectPublicKeyInfo).",
    ),
    Code(
        "scitt.media_type_unsupported",
        INPUT,
        "A registration is not sent as application/cose (HTTP 415).",
    ),
    Code(
        "scitt.rate_limited",
        INPUT,
        "Too many requests from this client; retry after the time the service names (HTTP 429).",
    ),
    Code(
        "scitt.entry_not_found",
        INPUT,
        "No registration with this entry ID, running or done (HTTP 404).",
    ),
    Code(
        "scitt.entry_id_invalid",
        INPUT,
        "An entry ID is not 64 lowercase hex digits (the SHA-256 leaf entry) (HTTP 400).",
    ),
    Code(
        "scitt.registration_failed",
        INPUT,
        "The service answered a registration with something other than a receipt, a 303 or"
        " 302 locator, or concise problem details.",
    ),
)
