"""The one error tree of Affidavit. Every leaf has a stable ``code``.

::

    AffidavitError                     base; never raised itself
    ├── InputError                     exit 2: the input could not be read as what it claims to be
    │   ├── JsonError                  strict JSON parsing (json.*), carries line and column
    │   ├── CanonicalError             a value has no canonical form (canonical.*)
    │   ├── KeyFormatError             malformed key material (key.*)
    │   └── UsageError                 a command was called wrongly (usage.*)
    ├── VerificationError              exit 1: the input was read, and it does not verify
    └── PolicyRefusal                  exit 3: refused by policy (e.g. pinning a revoked contract)

The codes are listed in ``specs/error-codes.json`` (regenerate with
``python tools/gen_error_codes.py``); a test checks that the classes here and that list agree.
Codes are part of the public interface: the CLI prints ``error: <code>: <message>``, the registry
returns ``{code, message, details}``, and the golden vectors name the code they expect.

Each area adds its leaves in its own section below; keep one class per code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

__all__ = [
    "AffidavitError",
    "CanonicalError",
    "InputError",
    "JsonError",
    "KeyFormatError",
    "PolicyRefusal",
    "UsageError",
    "VerificationError",
    "all_error_classes",
]


class AffidavitError(Exception):
    """Base of every error Affidavit raises on purpose.

    ``code`` is stable and machine-readable; ``message`` is for people; ``details`` is a small
    JSON-able mapping (never secrets).
    """

    code: ClassVar[str] = "affidavit.error"
    exit_code: ClassVar[int] = 2
    description: ClassVar[str] = "Base class; never raised itself."

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details) if details else {}

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        """The wire form ``{code, message, details}`` used by the CLI's --json and the registry."""
        return {"code": self.code, "message": self.message, "details": self.details}


class InputError(AffidavitError):
    """The input could not be read as what it claims to be (exit code 2)."""

    code = "input.invalid"
    exit_code = 2
    description = "The input could not be read."


class VerificationError(AffidavitError):
    """The input was read and does not verify (exit code 1)."""

    code = "verify.failed"
    exit_code = 1
    description = "Verification failed."


class PolicyRefusal(AffidavitError):
    """The operation is refused by policy (exit code 3)."""

    code = "policy.refused"
    exit_code = 3
    description = "Refused by policy."


class UsageError(InputError):
    """A command or function was called with arguments it cannot accept."""

    code = "usage.invalid"
    description = "Invalid usage or arguments."


class KeyFormatError(InputError):
    """Key material that is malformed: wrong length, bad base64, weak key."""

    code = "key.invalid"
    description = "Malformed key material."


# ---------------------------------------------------------------------------------------------
# I/O


class FileReadError(InputError):
    """A file could not be opened or read."""

    code = "io.unreadable"
    description = "A file could not be read."


class FileExistsRefusal(InputError):
    """Refused to overwrite an existing file."""

    code = "io.exists"
    description = "Refused to overwrite an existing file (use --force where offered)."


# ---------------------------------------------------------------------------------------------
# Strict JSON (formats.md §1 "Strict input")


class JsonError(InputError):
    """Strict JSON parsing failed. ``line`` and ``column`` are 1-based (0 when unknown)."""

    code = "json.invalid"
    description = "The document is not strict JSON."

    def __init__(
        self,
        message: str,
        *,
        line: int = 0,
        column: int = 0,
        details: dict[str, Any] | None = None,
    ) -> None:
        merged = {"line": line, "column": column, **(details or {})}
        where = f" (line {line}, column {column})" if line else ""
        super().__init__(message + where, details=merged)
        self.line = line
        self.column = column


class JsonSyntaxError(JsonError):
    code = "json.syntax"
    description = "Not well-formed JSON (RFC 8259)."


class JsonDuplicateKey(JsonError):
    code = "json.duplicate_key"
    description = "An object has the same key twice; the document could be read two ways."


class JsonNonFinite(JsonError):
    code = "json.non_finite"
    description = "NaN, Infinity or -Infinity literal, or a number too large for a double."


class JsonLoneSurrogate(JsonError):
    code = "json.lone_surrogate"
    description = "A string holds an unpaired UTF-16 surrogate (raw or escaped)."


class JsonInvalidUtf8(JsonError):
    code = "json.invalid_utf8"
    description = "The bytes are not valid UTF-8."


class JsonByteOrderMark(JsonError):
    code = "json.bom"
    description = "The document starts with a byte-order mark."


class JsonTooDeep(JsonError):
    code = "json.too_deep"
    description = "Arrays and objects nest deeper than the limit (default 128)."


class JsonTooLarge(JsonError):
    code = "json.too_large"
    description = "The document is larger than the size limit (default 64 MiB)."


class JsonTrailingData(JsonError):
    code = "json.trailing_data"
    description = "Data follows the JSON value."


class JsonWrongType(JsonError):
    code = "json.wrong_type"
    description = "The JSON value is not of the expected type (e.g. an object)."


# ---------------------------------------------------------------------------------------------
# Canonical encodings (formats.md §1)


class CanonicalError(InputError):
    """A value has no canonical encoding under the requested form."""

    code = "canonical.invalid"
    description = "The value cannot be canonically encoded."


class CanonicalUnsafeInteger(CanonicalError):
    code = "canonical.unsafe_integer"
    description = "An integer outside +-(2^53-1) cannot be encoded by RFC 8785 (I-JSON)."


class CanonicalNonStringKey(CanonicalError):
    code = "canonical.non_string_key"
    description = "An object key is not a string."


class CanonicalNonFinite(CanonicalError):
    code = "canonical.non_finite"
    description = "NaN and infinities have no JSON form."


class CanonicalLoneSurrogate(CanonicalError):
    code = "canonical.lone_surrogate"
    description = "A string holds an unpaired surrogate, which has no UTF-8 form."


class CanonicalUnsupportedType(CanonicalError):
    code = "canonical.unsupported_type"
    description = "A value is not a JSON type (dict, list, str, int, float, bool, None)."


# ---------------------------------------------------------------------------------------------
# AdapterContract (formats.md §2, seed 003)


class ContractError(InputError):
    """An AdapterContract could not be read or is structurally unusable."""

    code = "contract.invalid"
    description = "The AdapterContract is invalid."


class ContractSchemaError(VerificationError):
    code = "contract.schema_invalid"
    description = "The AdapterContract does not conform to its schema."


class ContractHashMismatch(VerificationError):
    code = "contract.hash_mismatch"
    description = "The declared contract_hash differs from the recomputed one."


class ContractInputSchemaHashMismatch(VerificationError):
    code = "contract.input_schema_hash_mismatch"
    description = "The declared input_schema_hash differs from the recomputed one."


class ContractVersionNotIncreasing(UsageError):
    code = "contract.version_not_increasing"
    description = "bump refuses a version lower than or equal to the current one."


# ---------------------------------------------------------------------------------------------
# Registry service: HTTP boundary, API keys, publication and discovery (issue 6)


class HttpBodyTooLarge(InputError):
    code = "http.body_too_large"
    description = "The request body is larger than the registry's limit (HTTP 413)."


class HttpNotFound(InputError):
    code = "http.not_found"
    description = "No such route (HTTP 404)."


class HttpMethodNotAllowed(InputError):
    code = "http.method_not_allowed"
    description = "The route does not accept this HTTP method (HTTP 405)."


class HttpBadParameter(UsageError):
    code = "http.bad_parameter"
    description = "A path or query parameter is missing or malformed (HTTP 400)."


class HttpInternalError(InputError):
    code = "http.internal"
    description = "The registry failed unexpectedly; nothing was written (HTTP 500)."


class AuthMissing(PolicyRefusal):
    code = "auth.missing"
    description = "The route needs an API key and none was sent (HTTP 401)."


class AuthInvalid(PolicyRefusal):
    code = "auth.invalid"
    description = "The API key is unknown or malformed (HTTP 401)."


class AuthForbidden(PolicyRefusal):
    code = "auth.forbidden"
    description = "The API key lacks the scope this route needs (HTTP 403)."


class AuthBadScope(UsageError):
    code = "auth.bad_scope"
    description = "Not a valid API-key scope (publish, facts:write, facts:read:<scope>)."


class RegistryNotFound(InputError):
    code = "registry.not_found"
    description = "The registry holds no such record, tree head or leaf (HTTP 404)."


class RegistryContractNotFound(RegistryNotFound):
    code = "registry.contract_not_found"
    description = "No contract with this adapter_id (and version) (HTTP 404)."


class RegistryVersionConflict(PolicyRefusal):
    code = "registry.version_conflict"
    description = "Another contract holds this (adapter_id, adapter_version) (HTTP 409)."


class RegistryContractRejected(VerificationError):
    code = "registry.contract_rejected"
    description = "The contract does not lint clean; details carry the lint report (HTTP 422)."


class RegistryFieldNotPatchable(InputError):
    code = "registry.field_not_patchable"
    description = "PATCH changes lifecycle fields only; hashed ones need a new version (HTTP 422)."


class RegistryUrlMissing(UsageError):
    code = "registry.url_missing"
    description = "No registry URL: pass --registry or set AFFIDAVIT_REGISTRY_URL."


class RegistryUnavailable(InputError):
    code = "registry.unavailable"
    description = "The registry could not be reached or its node probe failed."


class RegistryBadResponse(InputError):
    code = "registry.bad_response"
    description = "The registry answered with something other than the documented shape."


class RegistryRemoteError(InputError):
    code = "registry.remote_error"
    description = "The registry refused the request; details carry its {code, message, details}."


# ---------------------------------------------------------------------------------------------
# Facts and lineage (formats.md §5, seed 002 §20.6). The four codes the seed names are kept
# exactly, unprefixed, because the registry returns them on the wire (seed 002 §20.8).


class FactInvalid(InputError):
    """A fact does not match specs/fact.schema.json (formats.md §5)."""

    code = "fact.invalid"
    description = "The fact does not match the fact schema."


class FactDerivedFromMalformed(FactInvalid):
    code = "fact.derived_from_malformed"
    description = (
        "A derived_from entry is not a 64-character lowercase hex FactHash (or a {hash, fact_id} "
        "object holding one), or the same hash is listed twice."
    )


class ProvenanceCycleDetected(InputError):
    code = "provenance_cycle_detected"
    description = (
        "The derived_from graph would contain a cycle (seed 002 §20.6.1 rule 2; HTTP 400)."
    )


class DerivedFromImmutable(InputError):
    code = "derived_from_immutable"
    description = (
        "A stored fact's derived_from cannot be changed (seed 002 §20.6.1 rule 4; HTTP 422)."
    )


class GraphDepthExceeded(UsageError):
    code = "graph_depth_exceeded"
    description = "Provenance walk depth outside 0..5 (seed 002 §20.6.2; HTTP 400)."


class FactNotFound(InputError):
    code = "fact_not_found"
    description = "The provenance walk's root fact is not in the store (seed 002 §20.8; HTTP 404)."


class LineageStoreInvalid(InputError):
    code = "lineage.store_invalid"
    description = "The fact store cannot be opened or is not a fact store (JSON Lines or SQLite)."


class LineageRootForbidden(PolicyRefusal):
    code = "lineage.root_forbidden"
    description = (
        "The walk's root fact is in a scope the caller may not read; no data is returned "
        "(seed 002 §20.6.2; HTTP 403)."
    )


class LineageFactHashMismatch(VerificationError):
    code = "lineage.fact_hash_mismatch"
    description = "A stored fact's content does not hash to the FactHash it is stored under."


class LineageFactMalformed(VerificationError):
    code = "lineage.fact_malformed"
    description = "A stored fact cannot be read as a fact (bad JSON or schema) during an audit."


class LineageReferenceMalformed(VerificationError):
    code = "lineage.reference_malformed"
    description = "An audit found a stored fact whose derived_from entries are malformed."


class LineageCycleFound(VerificationError):
    code = "lineage.cycle_found"
    description = "An audit found a cycle in the stored derived_from graph."


class LineageDerivedFromChanged(VerificationError):
    code = "lineage.derived_from_changed"
    description = "An audit found one FactHash stored twice with different derived_from."


class LineageSignatureBad(VerificationError):
    code = "lineage.signature_bad"
    description = (
        "A fact signature is malformed, made by a key outside the trusted set, or does not "
        "verify over the FactHash."
    )


# ---------------------------------------------------------------------------------------------
# Publication and pinning: entries, manifests, publisher documents, pin files (formats.md §3)


class EntryFormatError(InputError):
    code = "entry.invalid"
    description = "A manifest entry or attest document is malformed (missing or non-string field)."


class EntryHashMismatch(VerificationError):
    code = "entry.hash_mismatch"
    description = "An entry's entry_hash differs from the hash recomputed over its 15 fields."


class EntrySignatureInvalid(VerificationError):
    code = "entry.signature_invalid"
    description = "An entry_signature does not verify under the publisher key."


class EntryPublisherMismatch(UsageError):
    code = "entry.publisher_mismatch"
    description = "An entry names another publisher or key id than the manifest being built."


class EntryLintFailed(VerificationError):
    code = "entry.lint_failed"
    description = "The contract does not lint clean, so no entry is attested for it."


class EntryLifecycleInvalid(UsageError):
    code = "entry.lifecycle_invalid"
    description = "A lifecycle edit is invalid (unknown status, bad adapter_id@semver pointer)."


class ManifestFormatError(InputError):
    code = "manifest.invalid"
    description = "The manifest is malformed (not an object, contracts not an array of objects)."


class ManifestDuplicateEntry(InputError):
    code = "manifest.duplicate_entry"
    description = "Two entries given to manifest build share (adapter_id, adapter_version)."


class ManifestFetchError(InputError):
    code = "manifest.fetch_failed"
    description = "A manifest or publisher document URL could not be fetched (https only, capped)."


class PublisherDocumentError(InputError):
    code = "manifest.publisher_document_invalid"
    description = "The publisher document is malformed (fields missing, key not 32 bytes)."


class ManifestPublisherMismatch(VerificationError):
    code = "manifest.publisher_mismatch"
    description = "The publisher document names another publisher or key id than the manifest."


class ManifestVerificationFailed(VerificationError):
    code = "manifest.verification_failed"
    description = "The manifest does not verify (hash, signature, collision or entry failure)."


class PinFileError(InputError):
    code = "pin.file_invalid"
    description = "The pin file is malformed; nothing was written."


class PinArgumentError(UsageError):
    code = "pin.invalid_argument"
    description = (
        "A pin argument is malformed (id not reverse-DNS, version not semver, hash not hex)."
    )


class PinHashMismatch(VerificationError):
    code = "pin.hash_mismatch"
    description = "The manifest entry's contract_hash differs from the hash being pinned."


class PinEntryUnverified(VerificationError):
    code = "pin.entry_unverified"
    description = "The manifest entry failed verification, so it is not pinned."


class PinRevoked(PolicyRefusal):
    code = "pin.revoked"
    description = "Pinning a revoked contract is refused (--allow-revoked-for-legacy-inspection)."


class PinCheckFailed(VerificationError):
    code = "pin.check_failed"
    description = "At least one pin does not hold (hash mismatch, missing declaration, bad entry)."


class PinCheckRevoked(PolicyRefusal):
    code = "pin.check_revoked"
    description = "A pinned contract is revoked and the pin is not marked inspection-only."


# ---------------------------------------------------------------------------------------------
# Crypto: keys, signatures, Merkle proofs, tree heads, C2SP checkpoints (issue 4 items 1-2)


class KeyBadBase64(KeyFormatError):
    code = "key.bad_base64"
    description = "Key material is not strict base64 (or hex where hex is expected)."


class KeyWrongLength(KeyFormatError):
    code = "key.wrong_length"
    description = "An Ed25519 key must be exactly 32 bytes."


class KeyWeak(KeyFormatError):
    code = "key.weak"
    description = "The Ed25519 public key is a small-order point (accepts forged signatures)."


class KeyNonCanonical(KeyFormatError):
    code = "key.non_canonical"
    description = "The Ed25519 public key is a non-canonical point encoding (RFC 8032 §5.1.3)."


class KeyNotOnCurve(KeyFormatError):
    code = "key.not_on_curve"
    description = "The 32 bytes do not decode to a point of edwards25519."


class KeyUnrecognized(KeyFormatError):
    code = "key.unrecognized"
    description = "A key file is in none of the accepted forms (base64, publisher JSON, PEM)."


class KeyInsecurePermissions(InputError):
    code = "key.insecure_permissions"
    description = "A private key file is readable by group or others; refused on request."


class VerifierKeyMalformed(KeyFormatError):
    code = "key.vkey_malformed"
    description = "A C2SP verifier key string is not name+hexkeyid+base64(0x01||key)."


class SignatureMalformed(InputError):
    code = "signature.malformed"
    description = "A signature is not strict base64 of exactly 64 bytes."


class SignatureInvalid(VerificationError):
    code = "signature.bad"
    description = "The Ed25519 signature does not verify under the given key (strict rules)."


class MerkleError(VerificationError):
    """A Merkle inclusion or consistency proof does not verify (RFC 9162 §2.1.3, §2.1.4)."""

    code = "merkle.invalid"
    description = "A Merkle proof does not verify."


class MerkleRootMismatch(MerkleError):
    code = "merkle.root_mismatch"
    description = "The root recomputed from the proof differs from the expected root."


class MerkleBadProofLength(MerkleError):
    code = "merkle.bad_proof_length"
    description = "The proof has the wrong number of hashes for this index and tree size."


class MerkleIndexOutOfRange(MerkleError):
    code = "merkle.index_out_of_range"
    description = "The leaf index is not below the tree size."


class MerkleSizeOrder(MerkleError):
    code = "merkle.size_order"
    description = "A consistency proof needs the first size to be at most the second."


class MerkleConsistencyFromZero(MerkleError):
    code = "merkle.consistency_from_zero"
    description = "A consistency proof from an empty tree proves nothing; refused."


class MerkleBadHashLength(InputError):
    code = "merkle.bad_hash_length"
    description = "A leaf hash, root or proof hash is not exactly 32 bytes."


class TreeHeadMalformed(InputError):
    code = "treehead.malformed"
    description = "A signed tree head lacks a field or has one of the wrong type or form."


class TreeHeadSignatureInvalid(VerificationError):
    code = "treehead.signature_bad"
    description = "The signed tree head's signature does not verify under the given key."


class CheckpointMalformed(InputError):
    code = "checkpoint.malformed"
    description = "Not a C2SP signed note / tlog-checkpoint (text, blank line, signature lines)."


class CheckpointNoTrustedSignature(VerificationError):
    code = "checkpoint.no_trusted_signature"
    description = "No signature line of the note is from a trusted verifier key."


class CheckpointSignatureInvalid(VerificationError):
    code = "checkpoint.signature_bad"
    description = "A signature line from a trusted key does not verify."


class CheckpointOriginMismatch(VerificationError):
    code = "checkpoint.origin_mismatch"
    description = "The checkpoint's origin line is not the expected origin."


# ---------------------------------------------------------------------------------------------
# AdapterContract lint issues and deterministic validators (formats.md §2, seed 003).
# Each schema rule has its own code so lint reports and vectors name exactly what failed; all
# of them are ContractSchemaError (exit 1). Lint warnings (validator.unknown and the lifecycle
# advisories) are listed in affidavit.verify.contract_lint, not here: they are not errors.


class ContractNotObject(ContractSchemaError):
    code = "contract.not_object"
    description = "The declaration is not a JSON object."


class ContractMissingField(ContractSchemaError):
    code = "contract.missing_field"
    description = "A required AdapterContract field is absent."


class ContractBadSemver(ContractSchemaError):
    code = "contract.bad_semver"
    description = "A version field is not a MAJOR.MINOR.PATCH string."


class ContractBadAdapterId(ContractSchemaError):
    code = "contract.bad_adapter_id"
    description = "adapter_id is not a reverse-DNS string (e.g. acme.eval_suite.v0)."


class ContractFieldsNotArray(ContractSchemaError):
    code = "contract.fields_not_array"
    description = "output_fields or allowed_policy_fields is not an array."


class ContractOutputFieldsEmpty(ContractSchemaError):
    code = "contract.output_fields_empty"
    description = "output_fields has no entry."


class ContractDuplicateField(ContractSchemaError):
    code = "contract.duplicate_field"
    description = "output_fields or allowed_policy_fields lists the same entry twice."


class ContractBadFieldName(ContractSchemaError):
    code = "contract.bad_field_name"
    description = "A field name is not a snake_case string."


class ContractBadValidatorName(ContractSchemaError):
    code = "contract.bad_validator_name"
    description = "validator_name is not a snake_case string."


class ContractBadHashFormat(ContractSchemaError):
    code = "contract.bad_hash_format"
    description = "contract_hash or input_schema_hash is not 64 lowercase hex characters."


class ContractPolicyFieldsNotSubset(ContractSchemaError):
    code = "contract.policy_fields_not_subset"
    description = "allowed_policy_fields names a field that is not in output_fields."


class ContractLifecycleInvalid(VerificationError):
    code = "contract.lifecycle_invalid"
    description = (
        "A lifecycle field is malformed (status, distribution_channel, adapter_id@semver pointer, "
        "min_verifier_version, published_at); lint only, never part of replay."
    )


class ValidatorUnknown(VerificationError):
    code = "validator.unknown"
    description = "No deterministic validator with this (name, version) is installed."


class ValidatorLoadFailed(InputError):
    code = "validator.load_failed"
    description = "An affidavit.validators entry point failed to load or is not a validator family."


class ValidatorRejected(VerificationError):
    code = "validator.rejected"
    description = "The adapter output was rejected by the contract's validator."


# ---------------------------------------------------------------------------------------------
# SQLite stores and the transparency log (issue 4 item 3; affidavit.attest.stores.sqlite / .log)


class StoreMissing(InputError):
    code = "store.missing"
    description = "The database file does not exist (and creating it was not asked for)."


class StoreUnreadable(InputError):
    code = "store.unreadable"
    description = "The file cannot be opened as an SQLite database (not a database, or corrupt)."


class StoreSchemaTooNew(InputError):
    code = "store.schema_too_new"
    description = "The database holds a newer schema version than this Affidavit understands."


class StoreBusy(InputError):
    code = "store.busy"
    description = "Another writer held the database longer than the busy timeout; retry later."


class LogNotFound(InputError):
    code = "log.not_found"
    description = "The database holds no transparency log (run `affidavit log init` first)."


class LogExists(InputError):
    code = "log.exists"
    description = "The database already holds a transparency log; refused to create another."


class LogBadLogId(UsageError):
    code = "log.bad_log_id"
    description = "A log ID must be 1-200 printable ASCII characters without '|' or whitespace."


class LogBadLeafHash(InputError):
    code = "log.bad_leaf_hash"
    description = "A leaf hash given to the log is not exactly 32 bytes."


class LogIndexOutOfRange(UsageError):
    code = "log.index_out_of_range"
    description = "The leaf index is not below the tree size asked for."


class LogSizeOutOfRange(UsageError):
    code = "log.size_out_of_range"
    description = "A tree size is beyond the log's size, or the sizes are out of order, or zero."


class LogRangeTooLarge(UsageError):
    code = "log.range_too_large"
    description = "Too many entries asked for at once; page through them."


class LogNoEntryData(InputError):
    code = "log.no_entry_data"
    description = "The leaf was appended by its hash only; the log holds no data for it."


class LogNoSigningKey(UsageError):
    code = "log.no_signing_key"
    description = "Signing a tree head needs the log's private key (open the log with a key)."


class LogKeyMismatch(InputError):
    code = "log.key_mismatch"
    description = "The signing key given is not the key this log was created with."


class LogBadTimestamp(UsageError):
    code = "log.bad_timestamp"
    description = "A tree head timestamp must be a timezone-aware datetime (it is signed as UTC)."


class LogIntegrity(VerificationError):
    code = "log.integrity"
    description = "The stored tree is inconsistent (a node is missing or a recorded head differs)."


# ---------------------------------------------------------------------------------------------
# ProofPack bundles, AcceptancePolicy, adapter replay, OutcomeAttestations (formats.md §4,
# seed 003 "Artifact binding"; issue 4 items 4-10). Each failing verification step names one of
# these codes; the adapter.* codes match the replay statuses of formats.md §4 one to one.


class PolicyMalformed(InputError):
    code = "policy.malformed"
    description = (
        "An AcceptancePolicy is not {rules: [{conditions: [{field, op, value}], action}], default}."
    )


class PolicyUnknownOperator(PolicyMalformed):
    code = "policy.unknown_operator"
    description = "A policy condition uses an operator other than >= <= > < == != in."


class PolicyUnknownAction(PolicyMalformed):
    code = "policy.unknown_action"
    description = "A policy action is not auto_accept, require_review or auto_reject."


class PolicySnapshotMalformed(VerificationError):
    code = "policy.snapshot_malformed"
    description = (
        "A decision event's policy_snapshot is not {matched_rule, evaluated_inputs, rule_index}."
    )


class PolicyReplayMismatch(VerificationError):
    code = "policy.replay_mismatch"
    description = "Replaying the policy snapshot does not give the recorded decision."


class BundleMalformed(InputError):
    code = "bundle.malformed"
    description = (
        "Not a ProofPack bundle: a required top-level field is absent or of the wrong type."
    )


class BundleUnsupportedVersion(InputError):
    code = "bundle.unsupported_version"
    description = "spec_version is not 1.0.0, 2.0.0 or 3.0.0 (or absent for a legacy bundle)."


class BundleHashMismatch(VerificationError):
    code = "bundle.hash_mismatch"
    description = "bundle_hash differs from the hash recomputed over the bundle."


class BundleUnanchored(VerificationError):
    code = "bundle.unanchored"
    description = "No tree head signed by a trusted key anchors the bundle (supply a trusted key)."


class BundleNoInclusion(VerificationError):
    code = "bundle.no_inclusion"
    description = "The bundle carries no Merkle inclusion proof or no signed tree head."


class BundleInclusionMalformed(VerificationError):
    code = "bundle.inclusion_malformed"
    description = "merkle_inclusion or signed_tree_head has a missing or malformed field."


class BundleRootNotSigned(VerificationError):
    code = "bundle.root_not_signed"
    description = (
        "merkle_inclusion (root, size or log) differs from what the signed tree head covers."
    )


class BundleLeafUnbound(VerificationError):
    code = "bundle.leaf_unbound"
    description = "The proven leaf recomputes from no finality event of this bundle."


class BundleLeafAmbiguous(VerificationError):
    code = "bundle.leaf_ambiguous"
    description = "The proven leaf recomputes from more than one event of this bundle."


class BundleProofUnbound(VerificationError):
    code = "bundle.proof_unbound"
    description = "An event's payload.proof_hashes do not list exactly the bundle's proofs."


class BundleSidecarMalformed(VerificationError):
    code = "bundle.sidecar_malformed"
    description = "The actor-signature sidecar or key directory is malformed or unsupported."


class BundleSidecarHashMismatch(VerificationError):
    code = "bundle.sidecar_hash_mismatch"
    description = "sidecar_hash differs from the hash recomputed over the sidecar."


class BundleSidecarUnknownEvent(VerificationError):
    code = "bundle.sidecar_unknown_event"
    description = "The sidecar signs an event hash that is not in the event chain."


class EventMalformed(VerificationError):
    code = "event.malformed"
    description = "An event lacks a field or has one of the wrong type."


class EventHashMismatch(VerificationError):
    code = "event.hash_mismatch"
    description = "An event's hash differs from the hash recomputed over its fields."


class EventChainBroken(VerificationError):
    code = "event.chain_broken"
    description = (
        "An event's prev_hash is not the previous event's hash (or not empty for the first)."
    )


class EventDealMismatch(VerificationError):
    code = "event.deal_mismatch"
    description = "An event's deal_id differs from the bundle's deal_id."


class EventDuplicateId(VerificationError):
    code = "event.duplicate_id"
    description = "Two events of the bundle share one event_id."


class EventSignatureBad(VerificationError):
    code = "event.signature_bad"
    description = "An actor signature does not verify under the key its directory entry gives."


class EventKeyUnknown(VerificationError):
    code = "event.key_unknown"
    description = "An actor signature names a key_id the bundle's key directory does not hold."


class EventKeyNotValid(VerificationError):
    code = "event.key_not_valid"
    description = "An actor key was not valid at the event time (issued_at <= t < revoked_at)."


class EventActorMismatch(VerificationError):
    code = "event.actor_mismatch"
    description = "The key directory binds the signing key to another actor than the event's."


class AdapterShapeInvalid(VerificationError):
    code = "adapter.shape_invalid"
    description = (
        "adapter_evaluation_shape_invalid: an adapter_evaluation is not the expected shape."
    )


class AdapterSchemaFail(VerificationError):
    code = "adapter.schema_fail"
    description = (
        "schema_fail: the embedded adapter_contract does not pass the AdapterContract schema."
    )


class AdapterContractHashMismatch(VerificationError):
    code = "adapter.contract_hash_mismatch"
    description = "contract_hash_mismatch: contract_hash differs from the one recomputed."


class AdapterInputSchemaHashMismatch(VerificationError):
    code = "adapter.input_schema_hash_mismatch"
    description = "input_schema_hash_mismatch: input_schema_hash differs from the one recomputed."


class AdapterInputsNotAllowed(VerificationError):
    code = "adapter.normalized_inputs_not_allowed"
    description = (
        "normalized_inputs_not_in_allowed_policy_fields: an input is not an allowed field."
    )


class AdapterValidatorMissing(VerificationError):
    code = "adapter.validator_declaration_missing"
    description = "validator_declaration_missing: no validator name and version are declared."


class AdapterValidatorInconsistent(VerificationError):
    code = "adapter.validator_result_inconsistent"
    description = (
        "validator_result_inconsistent: the recorded result disagrees with itself or with a re-run "
        "of the validator on the raw output."
    )


class AdapterRuleDoesNotFire(VerificationError):
    code = "adapter.matched_rule_does_not_fire"
    description = (
        "matched_rule_does_not_fire_against_evaluated_inputs: a decision's matched rule does not "
        "fire against its evaluated inputs."
    )


class AttestationMalformed(InputError):
    code = "attestation.malformed"
    description = (
        "Not an OutcomeAttestation {attestation, payload_hash, signature, algorithm, ...}."
    )


class AttestationHashMismatch(VerificationError):
    code = "attestation.payload_hash_mismatch"
    description = "payload_hash differs from H(py-compact(attestation))."


class AttestationSignatureBad(VerificationError):
    code = "attestation.signature_bad"
    description = "The attestation signature does not verify under the trusted key."


class AttestationUnanchored(VerificationError):
    code = "attestation.unanchored"
    description = "No trusted key was supplied; the embedded key alone proves nothing."


class LineageEdgeIndexMismatch(VerificationError):
    code = "lineage.edge_index_mismatch"
    description = (
        "A store's derivation edge index disagrees with the derived_from of the stored facts."
    )


# ---------------------------------------------------------------------------------------------
# Strict JSON numbers (formats.md §1 "Strict input"): integers too long to convert


class JsonNumberTooLarge(JsonError):
    """An integer literal has more digits than the parser converts (4,300, CPython's default
    ``int_max_str_digits``); refused the same way whatever the interpreter's own limit is."""

    code = "json.number_too_large"
    description = "An integer literal has more than 4,300 digits."


# ---------------------------------------------------------------------------------------------
# Bundles (formats.md §4): consequence identity, events after the logged finality event, actor
# key trust and lifecycle, OUTCOME_RECONCILED vocabularies, the swarm-strict profile


class BundleConsequenceIdentityMismatch(VerificationError):
    """A dispatched or reconciled consequence identity is not one the bundle authorized."""

    code = "bundle.consequence_identity_mismatch"
    description = (
        "An event's consequence_identity_hash/identity_hash matches no identity_hash of an "
        "authorized CONSEQUENCE_AUTHORIZED event of the bundle."
    )


class BundleEventsAfterFinality(VerificationError):
    """Events follow the finality event the logged leaf covers; nothing signed covers them."""

    code = "bundle.events_after_finality"
    description = (
        "The bundle has events after the finality event its Merkle leaf recomputes from; the "
        "signed tree head does not cover them."
    )


class BundleActorSignaturesUntrusted(VerificationError):
    """Actor signatures verify only under keys the bundle carries (required: caller-trusted)."""

    code = "bundle.actor_signatures_untrusted"
    description = (
        "Actor signatures were required, but they verify only under keys the bundle itself "
        "carries, not under keys the caller trusts (--trusted-actor-keys)."
    )


class BundleActorSignaturesMissing(VerificationError):
    """Actor signatures were required and the bundle carries none."""

    code = "bundle.actor_signatures_missing"
    description = "Actor signatures were required, but no event of the bundle is actor-signed."


class EventKeyMismatch(VerificationError):
    """A sidecar entry's public key differs from the key directory's key for its key_id."""

    code = "event.key_mismatch"
    description = "A sidecar entry's public key differs from the key directory's for that key_id."


class EventKeyInactive(VerificationError):
    """The key directory marks a signing key with a status other than active."""

    code = "event.key_inactive"
    description = "A key directory entry used for a signature has a status other than active."


class EventKeyLifecycleMalformed(VerificationError):
    """A key's status says it is unusable but it carries no revoked_at to bound its validity."""

    code = "event.key_lifecycle_malformed"
    description = "A key directory entry has a status other than active and no revoked_at."


class BundleReconciliationVocabularyUnknown(VerificationError):
    """An OUTCOME_RECONCILED event uses a value outside the SDK's controlled vocabularies."""

    code = "bundle.reconciliation_vocabulary_unknown"
    description = (
        "An OUTCOME_RECONCILED event has a reconciliation_status, readback_source_type or "
        "evidence_redaction_status outside its controlled vocabulary (or lacks one)."
    )


class BundleSwarmDesignationMissing(VerificationError):
    """swarm-strict: no event carries a swarm_policy designation."""

    code = "bundle.swarm_designation_missing"
    description = "Profile swarm-strict: no event of the bundle carries payload.swarm_policy."


class BundleSwarmDesignationInvalid(VerificationError):
    """swarm-strict: the latest designation is unsigned, of an unknown version or malformed."""

    code = "bundle.swarm_designation_invalid"
    description = (
        "Profile swarm-strict: the latest swarm_policy event is not validly actor-signed, has an "
        "unsupported policy_version, or lacks required_signed_event_types."
    )


class BundleSwarmCoverageIncomplete(VerificationError):
    """swarm-strict: a designated event type is absent or an instance is not validly signed."""

    code = "bundle.swarm_coverage_incomplete"
    description = (
        "Profile swarm-strict: a designated event type is absent, or one of its events lacks a "
        "valid, temporally valid actor signature by an enrolled key."
    )


class BundleSwarmSnapshotMismatch(VerificationError):
    """swarm-strict: the swarm_enforcement snapshot hash or designation does not check."""

    code = "bundle.swarm_snapshot_mismatch"
    description = (
        "Profile swarm-strict: swarm_enforcement.snapshot_hash does not recompute, or the "
        "snapshot's designation differs from the signed one."
    )


class BundleSwarmDecisionInvalid(VerificationError):
    """swarm-strict: a recorded swarm_decision context is malformed or contradicts itself."""

    code = "bundle.swarm_decision_invalid"
    description = (
        "Profile swarm-strict: a CONSEQUENCE_AUTHORIZED event's swarm_decision context is "
        "malformed, contradictory, or does not match its digest or designation."
    )


# ---------------------------------------------------------------------------------------------
# Anchor receipts and RFC 3161 time-stamp tokens (affidavit.verify.anchor.receipt / .rfc3161;
# RFC 3161 §2.4.2, RFC 5652 §5, RFC 5816, docs/adr/0010-rfc3161-tokens.md)


class AnchorReceiptMalformed(InputError):
    """An anchor receipt is not an object with the required fields of the required types."""

    code = "anchor.malformed"
    description = "Not an anchor receipt: a required field (receipt or sth) is absent or mistyped."


class AnchorTsaCertUnreadable(InputError):
    """A TSA or CA certificate given by the caller is not a PEM or DER X.509 certificate."""

    code = "anchor.tsa_cert_unreadable"
    description = "A --tsa-cert or --ca-cert file is not a PEM or DER X.509 certificate."


class AnchorError(VerificationError):
    """An anchor receipt or its time-stamp token does not verify."""

    code = "anchor.invalid"
    description = "An anchor receipt does not verify."


class AnchorSthMismatch(AnchorError):
    """The receipt anchors a tree head other than the one expected (e.g. the bundle's)."""

    code = "anchor.sth_mismatch"
    description = "The receipt's sth differs from the signed tree head it should anchor."


class AnchorDigestAlgorithmUnsupported(AnchorError):
    """sth_digest_algorithm is not SHA-256."""

    code = "anchor.digest_algorithm_unsupported"
    description = 'sth_digest_algorithm is not "SHA-256".'


class AnchorDigestMismatch(AnchorError):
    """sth_digest differs from SHA-256 of the py-compact STH (formats.md §1)."""

    code = "anchor.digest_mismatch"
    description = "sth_digest differs from H(py-compact(sth)) recomputed over the receipt's sth."


class AnchorTsaNotGranted(AnchorError):
    """The receipt's tsa_status, or the token's PKIStatus, is not granted."""

    code = "anchor.tsa_not_granted"
    description = (
        'tsa_status is not "granted", or the TimeStampResp status is not granted (0) or '
        "grantedWithMods (1) (RFC 3161 §2.4.2)."
    )


class AnchorTokenUnchecked(AnchorError):
    """No trusted TSA certificate was given, so the time-stamp token is not proven."""

    code = "anchor.token_unchecked"
    description = (
        "The RFC 3161 token was not verified (no trusted TSA certificate given): not verified."
    )


class AnchorTokenAbsent(AnchorError):
    """The receipt carries no time-stamp token (tsr_base64 absent or empty)."""

    code = "anchor.token_absent"
    description = "The receipt has no tsr_base64 time-stamp token to verify."


class AnchorTokenMalformed(AnchorError):
    """The token is not strict base64 of a DER TimeStampResp or TimeStampToken."""

    code = "anchor.token_malformed"
    description = (
        "tsr_base64 is not a DER TimeStampResp/TimeStampToken (RFC 3161 §2.4.2, RFC 5652 §5)."
    )


class AnchorImprintAlgorithmUnsupported(AnchorError):
    """The token's messageImprint names a hash other than SHA-256, SHA-384 or SHA-512."""

    code = "anchor.imprint_algorithm_unsupported"
    description = "The token's messageImprint hash is not SHA-256/384/512 (SHA-1 is refused)."


class AnchorImprintMismatch(AnchorError):
    """The token's hashedMessage is not the hash of the receipt's canonical STH."""

    code = "anchor.imprint_mismatch"
    description = (
        "messageImprint.hashedMessage differs from the hash, under the token's algorithm, of "
        "py-compact(sth)."
    )


class AnchorAlgorithmUnsupported(AnchorError):
    """The token's SignerInfo digest or signature algorithm is not supported."""

    code = "anchor.algorithm_unsupported"
    description = (
        "The token's signer digest/signature algorithm is not SHA-256/384/512 with RSA "
        "PKCS#1 v1.5 or ECDSA."
    )


class AnchorTsaCertMismatch(AnchorError):
    """The token's signer (sid, ESSCertID/ESSCertIDv2) is not the given TSA certificate."""

    code = "anchor.tsa_cert_mismatch"
    description = (
        "The token's SignerInfo sid or signing-certificate attribute does not name the given "
        "TSA certificate (RFC 5035, RFC 5816)."
    )


class AnchorTsaCertEkuInvalid(AnchorError):
    """The TSA certificate may not time-stamp (extendedKeyUsage / keyUsage, RFC 3161 §2.3)."""

    code = "anchor.tsa_cert_eku_invalid"
    description = (
        "The TSA certificate lacks a critical extendedKeyUsage of only id-kp-timeStamping "
        "(RFC 3161 §2.3), or its keyUsage allows more than digitalSignature/nonRepudiation."
    )


class AnchorMessageDigestMismatch(AnchorError):
    """The signed messageDigest attribute is not the hash of the TSTInfo eContent."""

    code = "anchor.message_digest_mismatch"
    description = "The messageDigest signed attribute differs from the hash of the TSTInfo."


class AnchorTsaSignatureInvalid(AnchorError):
    """The TSA's CMS signature over the signed attributes does not verify."""

    code = "anchor.tsa_signature_invalid"
    description = (
        "The token's signature over its signed attributes does not verify under the TSA "
        "certificate's key (RFC 5652 §5.4)."
    )


class AnchorTsaCertNotValid(AnchorError):
    """genTime lies outside the TSA certificate's validity period."""

    code = "anchor.tsa_cert_not_valid"
    description = "The token's genTime is outside the TSA certificate's notBefore..notAfter."


class AnchorTsaChainInvalid(AnchorError):
    """The TSA certificate does not chain to a given CA certificate."""

    code = "anchor.tsa_chain_invalid"
    description = "The TSA certificate does not chain to a --ca-cert trust anchor (RFC 5280 §6)."


# ---------------------------------------------------------------------------------------------
# Contract lifecycle pointers and signed entry text (seed 003 lifecycle fields; formats.md §3)


class ContractLifecycleSelfReference(ContractLifecycleInvalid):
    """``supersedes`` or ``replaced_by`` names the contract's own ``adapter_id@adapter_version``:
    a release cannot replace, or be replaced by, itself."""

    code = "contract.lifecycle_self_reference"
    description = "supersedes or replaced_by names the contract itself (adapter_id@version)."


class EntryControlCharacter(EntryFormatError):
    """A text value that would be hashed and signed into a manifest entry (or a lifecycle field
    of a declaration) holds a control character (U+0000-U+001F, U+007F-U+009F): a signature
    must never cover text that displays differently from what it says."""

    code = "entry.control_character"
    description = "A value to be signed into a manifest entry holds a control character (e.g. NUL)."


# ---------------------------------------------------------------------------------------------
# Log state binding, store damage and registry hardening (docs/adr/0005, docs/adr/0006)


class StoreCorrupt(InputError):
    """SQLite reports the database file damaged ("database disk image is malformed", a failed
    ``PRAGMA quick_check``): the registry refuses to start or answers 503 instead of 500."""

    code = "store.corrupt"
    description = "The database file is damaged (SQLite integrity check failed); HTTP 503."


class LogStateMismatch(InputError):
    """The log key has signed heads of this log (its signed state file says so) and the store
    does not extend the latest of them: missing, emptied, shorter, or another root at that size.
    Using it would fork the log, so it is refused and never re-initialised."""

    code = "log.state_mismatch"
    description = "The store does not extend the head the log key signed last (a fork); refused."


class LogStateInvalid(InputError):
    """The signed log state file beside the log key cannot be read, is malformed, names another
    log, or is not signed by the log key."""

    code = "log.state_invalid"
    description = "The log state file beside the key is malformed or not signed by the log key."


class LogUnhealthy(InputError):
    """The stored tree contradicts a head this log already signed (a damaged or edited node):
    no new head is signed until an operator repairs the store (HTTP 503)."""

    code = "log.unhealthy"
    description = "The stored tree contradicts a signed head; the log refuses to sign (HTTP 503)."


class HttpBodyTimeout(InputError):
    """The client did not send the request body it announced within the body-read timeout."""

    code = "http.body_timeout"
    description = "The request body did not arrive within the body-read timeout (HTTP 408)."


class AuthKeyUnbound(PolicyRefusal):
    """A ``publish`` key created before publisher bindings existed: it may not write until it is
    bound (``affidavit registry keys bind KEY_ID --publisher PREFIX``)."""

    code = "auth.key_unbound"
    description = "The publish key is bound to no publisher namespace; bind it first (HTTP 403)."


class AuthPublisherForbidden(PolicyRefusal):
    """The ``publish`` key is bound to publisher namespaces that do not cover this adapter_id."""

    code = "auth.publisher_forbidden"
    description = "The API key may not write contracts under this adapter_id (HTTP 403)."


class AuthBadPublisher(UsageError):
    """A publisher binding is not an adapter-id prefix of dot-separated segments, or a
    ``publish`` key was asked for without one."""

    code = "auth.bad_publisher"
    description = "A publish key needs --publisher PREFIX (dot-separated adapter-id segments)."


class RegistryChannelReserved(PolicyRefusal):
    """The distribution channel is reserved for the operator (``aigentsy.builtin``,
    ``aigentsy.examples``, ``developer.local``); only an ``admin`` key may use it."""

    code = "registry.channel_reserved"
    description = "The distribution channel is reserved for the operator (admin key) (HTTP 403)."


class RegistryDataDirInvalid(InputError):
    """The registry's data folder (or its key folder or database path) cannot be created or used."""

    code = "registry.data_dir_invalid"
    description = "The registry data folder cannot be created or used; refused to start."


# ------------------------------------------------------------------------------------------------
# Facts (batches and empty inputs; pulls from a Stigmem node; docs/formats.md "Facts")


class FactBatchInvalid(InputError):
    """Several facts of one input are bad; ``details["bad"]`` lists each ``{at, code, message}``."""

    code = "fact.batch_invalid"
    description = "Several facts of the input are bad; every one is listed, not only the first."


class FactInputEmpty(InputError):
    """The input was read, and it holds no fact at all."""

    code = "fact.input_empty"
    description = "The input holds no facts (nothing was read)."


class LineageStoreEmpty(InputError):
    """An audit was asked for a store that holds no fact: nothing was checked, so nothing is ok."""

    code = "lineage.store_empty"
    description = "The fact store holds no facts: there is nothing to audit."


class StigmemNodeUnreachable(InputError):
    """The Stigmem node could not be reached (connection refused, timeout, TLS failure)."""

    code = "stigmem.node_unreachable"
    description = "The Stigmem node could not be reached."


class StigmemNodeError(InputError):
    """The node answered with an HTTP error, or with a body that is not its fact listing."""

    code = "stigmem.node_error"
    description = "The Stigmem node answered with an error or an unexpected body."


class StigmemCidMismatch(VerificationError):
    """A pulled record's own ``cid`` differs from the CID v2 computed from its content."""

    code = "stigmem.cid_mismatch"
    description = "A node record's cid is not the CID v2 of its content."


class StigmemRecordRefused(VerificationError):
    """A pulled record cannot be written as a fact (it breaks a rule of the fact format)."""

    code = "stigmem.record_refused"
    description = "A node record cannot be written as a fact (e.g. a number that cannot round-trip)"


# ------------------------------------------------------------------------------------------------
# Facts: Stigmem node listings (docs/formats.md "Facts", "Pulling from a node")


class StigmemPagingUnreliable(VerificationError):
    """The node needed more than one page, and its cursor cannot enumerate a listing completely.

    stigmem-node 0.9.0a12 sorts by ``timestamp DESC, id DESC`` but its cursor filters
    ``id > cursor``: a page boundary can skip facts or repeat them. A pull that needed a second
    page may therefore be incomplete, which is reported rather than assumed away.
    """

    code = "stigmem.paging_unreliable"
    description = "The node's cursor paging may have skipped facts (more than one page was read)."


# ---------------------------------------------------------------------------------------------
# Registry start: the listening socket (docs/adr/0005 "refused starts")


class RegistryBindFailed(InputError):
    """``registry serve`` could not listen on the host and port (in use, not permitted, bad
    address): refused before the server starts, one line, exit 2."""

    code = "registry.bind_failed"
    description = "The registry cannot listen on the configured host and port; refused to start."


def all_error_classes() -> Iterator[type[AffidavitError]]:
    """Every error class in the tree, base first, depth-first, each once."""
    seen: set[type[AffidavitError]] = set()
    stack: list[type[AffidavitError]] = [AffidavitError]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        yield cls
        stack.extend(reversed(cls.__subclasses__()))
