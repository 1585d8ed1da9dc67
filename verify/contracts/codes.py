"""Codes of the contracts room: contracts, entries, manifests, pins, validators, adapter replay and
policy.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, REFUSED, Code

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
