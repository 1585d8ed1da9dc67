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
    description = "The derived_from graph would contain a cycle (seed 002 §20.6.1 rule 2; HTTP 400)."


class DerivedFromImmutable(InputError):
    code = "derived_from_immutable"
    description = "A stored fact's derived_from cannot be changed (seed 002 §20.6.1 rule 4; HTTP 422)."


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
    description = "A pin argument is malformed (id not reverse-DNS, version not semver, hash not hex)."


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
