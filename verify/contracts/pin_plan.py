"""Pinning one contract (docs/formats.md §3; seed 003 "Adoption workflow", lifecycle table).

:func:`plan_pin` decides what to record, in the peer's pin shape, from the verified manifest entry;
the CLI writes it. Pure: no file, no network.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from affidavit.verify import errors
from affidavit.verify.contracts.lifecycle import Lifecycle, lifecycle_advice, lifecycle_state
from affidavit.verify.contracts.manifest import ManifestReport, contracts_of
from affidavit.verify.contracts.pin_file import validate_pin_args

__all__ = ["PinPlan", "plan_pin"]


@dataclasses.dataclass(frozen=True, slots=True)
class PinPlan:
    """The pin to record and the NOTICE/WARNING line to show on stderr (None when quiet)."""

    pin: Mapping[str, Any]
    message: str | None


def _entry_failures(manifest_report: ManifestReport, index: int) -> list[str]:
    report = manifest_report.entries[index]
    key = (report.adapter_id, report.adapter_version)
    failures = []
    if manifest_report.manifest_hash_status == "mismatch":
        failures.append("manifest_hash mismatch")
    if manifest_report.manifest_signature_status == "bad":
        failures.append("manifest_signature bad")
    if key in manifest_report.loud_collisions or key in manifest_report.duplicate_keys:
        failures.append("the manifest lists this (adapter_id, adapter_version) more than once")
    if report.entry_hash_status == "mismatch":
        failures.append("entry_hash mismatch")
    if report.entry_signature_status == "bad":
        failures.append("entry_signature bad")
    return failures


def _lifecycle_message(state: Lifecycle, label: str, entry: Mapping[str, Any]) -> str | None:
    replacement = entry.get("replaced_by") or "(none declared)"
    if state == "superseded":
        return f"NOTICE: {label} is superseded by {replacement}."
    if state == "deprecated":
        return f"WARNING: {label} is DEPRECATED. Replacement: {replacement}."
    if state == "revoked":
        return (
            f"WARNING: pinning REVOKED contract {label} as inspection-only; do not adopt it for "
            "new work."
        )
    return None


def plan_pin(
    adapter_id: str,
    adapter_version: str,
    contract_hash_hex: str,
    *,
    manifest: Mapping[str, Any] | None = None,
    manifest_report: ManifestReport | None = None,
    allow_revoked_for_legacy_inspection: bool = False,
) -> PinPlan:
    """Decide what to pin, in the peer's pin shape (docs/formats.md §3, seed 003 lifecycle table).

    Without a manifest the pin says ``entry_hash_status: no_manifest_supplied``. With one, the
    matching entry must verify (its hash, no ``bad`` signature, no tampered manifest) and carry
    the same contract_hash; its lifecycle decides the advice. Statuses are recorded as found, so
    an unverified entry is never recorded as trusted.

    Raises:
        ``pin.invalid_argument``: malformed id, version or hash.
        ``pin.entry_unverified``: the manifest entry or the manifest fails verification.
        ``pin.hash_mismatch``: the entry's contract_hash is not the one being pinned.
        ``pin.revoked``: the entry is revoked and ``allow_revoked_for_legacy_inspection`` is not set
            (``pin.revoked``, exit 3; the message names no way out, the caller adds its own).
    """
    validate_pin_args(adapter_id, adapter_version, contract_hash_hex)
    label = f"{adapter_id}@{adapter_version}"
    pin: dict[str, Any] = {
        "adapter_id": adapter_id,
        "adapter_version": adapter_version,
        "contract_hash": contract_hash_hex,
    }
    if manifest is None:
        return PinPlan(
            {**pin, "entry_hash_status": "no_manifest_supplied", "publisher_id": None}, None
        )
    if manifest_report is None:
        raise errors.UsageError("plan_pin needs the manifest's verification report")
    contracts = contracts_of(manifest)
    index = next(
        (
            i
            for i, e in enumerate(contracts)
            if (e.get("adapter_id"), e.get("adapter_version")) == (adapter_id, adapter_version)
        ),
        None,
    )
    if index is None:
        pin.update(entry_hash_status="manifest_entry_not_found", publisher_id=None)
        return PinPlan(pin, f"WARNING: {label} is not in the manifest; publisher NOT verified.")
    entry = contracts[index]
    failures = _entry_failures(manifest_report, index)
    if failures:
        raise errors.ContractError(
            "pin.entry_unverified", f"{label}: not pinned: " + "; ".join(failures)
        )
    if entry.get("contract_hash") != contract_hash_hex:
        raise errors.ContractError(
            "pin.hash_mismatch",
            f"{label}: the manifest entry has contract_hash {entry.get('contract_hash')}, "
            f"not {contract_hash_hex}",
            details={"manifest": entry.get("contract_hash"), "pinned": contract_hash_hex},
        )
    state = lifecycle_state(entry)
    if state == "revoked" and not allow_revoked_for_legacy_inspection:
        # The way out (allow_revoked_for_legacy_inspection) is the caller's to name: the CLI adds
        # its flag to this message.
        raise errors.ContractError(
            "pin.revoked",
            f"{label} is REVOKED: refusing to pin it for new work (replacement: "
            f"{entry.get('replaced_by') or 'none declared'})",
            details={"replaced_by": entry.get("replaced_by")},
        )
    pin["entry_hash"] = entry.get("entry_hash", "")
    pin["publisher_id"] = entry.get("publisher_id", "")
    pin["status"] = entry.get("status", "active")
    for key in ("replaced_by", "supersedes"):
        if entry.get(key):
            pin[key] = entry[key]
    advice = lifecycle_advice(state)
    if advice is not None:
        pin["lifecycle_advice"] = advice
    if state == "revoked":
        pin["inspection_only"] = True
    report = manifest_report.entries[index]
    pin["entry_hash_status"] = "ok" if report.entry_hash_status == "ok" else "unsigned_manifest"
    pin["entry_signature_status"] = report.entry_signature_status
    return PinPlan(pin, _lifecycle_message(state, label, entry))
