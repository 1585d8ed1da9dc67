"""Pin files and the pin check behind the CI gate (formats.md §3, seed 003 "Manifest and pinning").

Lifecycle rules live in :mod:`affidavit.verify.contracts.lifecycle`. Everything here is pure: the
CLI reads
files, fetches nothing unless asked, and hands parsed values in. The pin check
(:func:`check_pins`) returns a frozen report whose ``exit_code`` is the gate's verdict: 0 every pin
holds, 1 a mismatch, a missing, broken or unlinted declaration, or a stale manifest, 3 a revoked pin
(1 wins when both occur: a tampered contract is the louder finding).

Lifecycle is decided from the sources that say the most (revoked > deprecated > superseded >
active): the signed manifest entries and the declarations, and the pin's own ``status``, which can
only make a verdict stricter. Editable pin text never relaxes one: a revoked pin passes only when
the caller allows inspection-only pins explicitly *and* the pin was recorded as one
(docs/adr/0007-pin-gate-freshness.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, lint_contract
from affidavit.verify.contracts.lifecycle import (
    ADAPTER_ID_RE,
    SEMVER_RE,
    Lifecycle,
    lifecycle_advice,
    lifecycle_state,
)
from affidavit.verify.contracts.manifest import EntryReport, ManifestReport, contracts_of

__all__ = [
    "SHA256_HEX_RE",
    "BrokenDeclaration",
    "Declaration",
    "Pin",
    "PinCheckReport",
    "PinFile",
    "PinPlan",
    "PinVerdict",
    "check_pins",
    "parse_pin_file",
    "plan_pin",
    "validate_pin_args",
]

# seed 003 lifecycle table: how the peer and we word a recorded inspection-only pin.
_RECORDED_INSPECTION_ADVICE: Final = (
    "REVOKED \u2014 inspection-only pin",
    "REVOKED - inspection-only pin",
)
SHA256_HEX_RE: Final = re.compile(r"\A[a-f0-9]{64}\Z")  # \Z: no trailing newline


def validate_pin_args(adapter_id: str, adapter_version: str, contract_hash_hex: str) -> None:
    """Check the three identifying pin values.

    Raises:
        PinArgumentError: id not reverse-DNS, version not semver, or hash not 64 lowercase hex.
    """
    if not ADAPTER_ID_RE.fullmatch(adapter_id):
        raise errors.ContractError(
            "pin.invalid_argument", f"adapter id must be reverse-DNS style: {adapter_id!r}"
        )
    if not SEMVER_RE.fullmatch(adapter_version):
        raise errors.ContractError(
            "pin.invalid_argument",
            f"version must be semver MAJOR.MINOR.PATCH without leading zeros: {adapter_version!r}",
        )
    if not SHA256_HEX_RE.fullmatch(contract_hash_hex):
        raise errors.ContractError(
            "pin.invalid_argument", "contract hash must be 64 lowercase hex characters"
        )


# ------------------------------------------------------------------------------------------
# Pin file model (formats.md §3 pinned_adapters.json)


@dataclasses.dataclass(frozen=True, slots=True)
class Pin:
    """One validated pin. ``raw`` is the pin object as read, kept for a byte-faithful rewrite."""

    adapter_id: str
    adapter_version: str
    contract_hash: str
    status: str | None
    entry_hash: str | None
    entry_hash_status: str | None
    entry_signature_status: str | None
    lifecycle_advice: str | None
    raw: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        """Identity: (adapter_id, adapter_version)."""
        return self.adapter_id, self.adapter_version

    @property
    def inspection_only(self) -> bool:
        """True when the pin was recorded as inspection-only: ``"inspection_only": true`` (as
        ``adapter pin --allow-revoked-for-legacy-inspection`` writes it) or advice that starts with
        the peer's (or our) recorded wording.

        This is editable text: it never decides a verdict alone. The gate honours it only under
        an explicit ``allow_inspection_only`` (``pins check --allow-inspection-only``).
        """
        if self.raw.get("inspection_only") is True:
            return True
        # The peer records it only as advice; accept its exact wording (and ours), not any text.
        return (self.lifecycle_advice or "").startswith(_RECORDED_INSPECTION_ADVICE)


@dataclasses.dataclass(frozen=True, slots=True)
class PinFile:
    """A parsed ``pinned_adapters.json``: its pins and every other top-level key, as read."""

    pins: tuple[Pin, ...]
    extra: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)


def _optional_text(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise errors.ContractError("pin.file_invalid", f"{where}: {key} must be a string or null")
    return value


def _parse_pin(raw: Any, index: int) -> Pin:
    where = f"pinned_adapters[{index}]"
    if not isinstance(raw, dict):
        raise errors.ContractError(
            "pin.file_invalid", f"{where} must be an object", details={"index": index}
        )
    values = {}
    for key in ("adapter_id", "adapter_version", "contract_hash"):
        value = raw.get(key)
        if not isinstance(value, str):
            raise errors.ContractError(
                "pin.file_invalid", f"{where}: {key} missing or not a string"
            )
        values[key] = value
    try:
        validate_pin_args(values["adapter_id"], values["adapter_version"], values["contract_hash"])
    except errors.ContractError as e:
        if e.code != "pin.invalid_argument":
            raise
        raise errors.ContractError(
            "pin.file_invalid", f"{where}: {e.message}", details={"index": index}
        ) from None
    return Pin(
        adapter_id=values["adapter_id"],
        adapter_version=values["adapter_version"],
        contract_hash=values["contract_hash"],
        status=_optional_text(raw, "status", where),
        entry_hash=_optional_text(raw, "entry_hash", where),
        entry_hash_status=_optional_text(raw, "entry_hash_status", where),
        entry_signature_status=_optional_text(raw, "entry_signature_status", where),
        lifecycle_advice=_optional_text(raw, "lifecycle_advice", where),
        raw=dict(raw),
    )


def parse_pin_file(document: Any) -> PinFile:
    """Validate a parsed pin file (ours or the peer's).

    Raises:
        PinFileError: not an object, ``pinned_adapters`` not an array of valid pins, or the same
            (adapter_id, adapter_version) pinned twice.
    """
    if not isinstance(document, dict):
        raise errors.ContractError("pin.file_invalid", "a pin file must be a JSON object")
    raw_pins = document.get("pinned_adapters")
    if raw_pins is None:
        raw_pins = []
    if not isinstance(raw_pins, list):
        raise errors.ContractError("pin.file_invalid", "pinned_adapters must be an array")
    pins = tuple(_parse_pin(raw, i) for i, raw in enumerate(raw_pins))
    seen: set[tuple[str, str]] = set()
    for pin in pins:
        if pin.key in seen:
            raise errors.ContractError(
                "pin.file_invalid", f"{pin.adapter_id}@{pin.adapter_version} is pinned twice"
            )
        seen.add(pin.key)
    extra = {k: v for k, v in document.items() if k != "pinned_adapters"}
    return PinFile(pins=pins, extra=extra)


# ------------------------------------------------------------------------------------------
# The pin check (issue 3 §6): pure; the CLI gathers declarations and the manifest report.


@dataclasses.dataclass(frozen=True, slots=True)
class Declaration:
    """A contract declaration found by the caller, with where it came from (for the report)."""

    source: str
    body: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class BrokenDeclaration:
    """A local file that may be a contract but cannot be read strictly (unreadable, too large,
    not strict JSON). ``adapter_ids`` are the pinned ids it appears to name (empty: unknown)."""

    source: str
    reason: str
    adapter_ids: frozenset[str] = frozenset()


@dataclasses.dataclass(frozen=True, slots=True)
class PinVerdict:
    """What the gate found for one pin. ``holds`` is False when ``problems`` is not empty."""

    adapter_id: str
    adapter_version: str
    contract_hash: str
    lifecycle: Lifecycle
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    sources: tuple[str, ...]
    revoked_refused: bool

    @property
    def holds(self) -> bool:
        """True when the pin holds (no problem and not refused as revoked)."""
        return not self.problems and not self.revoked_refused

    def to_json(self) -> dict[str, Any]:
        """JSON form for ``--json``."""
        return {
            "adapter_id": self.adapter_id,
            "adapter_version": self.adapter_version,
            "contract_hash": self.contract_hash,
            "holds": self.holds,
            "lifecycle": self.lifecycle,
            "revoked_refused": self.revoked_refused,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "sources": list(self.sources),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class PinCheckReport:
    """The gate's verdict over every pin, plus the manifest-level findings."""

    pins: tuple[PinVerdict, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    manifest: ManifestReport | None

    @property
    def ok(self) -> bool:
        """True when every pin holds and the manifest (if any) has no problem."""
        return not self.problems and all(p.holds for p in self.pins)

    @property
    def exit_code(self) -> int:
        """0 all hold; 1 any mismatch/missing/bad entry; 3 only revoked pins refused."""
        if self.problems or any(p.problems for p in self.pins):
            return 1
        return 3 if any(p.revoked_refused for p in self.pins) else 0

    def to_json(self) -> dict[str, Any]:
        """JSON form for ``--json``."""
        return {
            "ok": self.ok,
            "exit_code": self.exit_code,
            "pin_count": len(self.pins),
            "pins": [p.to_json() for p in self.pins],
            "problems": list(self.problems),
            "notes": list(self.notes),
            "manifest": self.manifest.to_json() if self.manifest is not None else None,
        }


def _check_declarations(pin: Pin, found: Sequence[Declaration], problems: list[str]) -> None:
    for decl in found:
        # seed 003 "Lint a contract": a declaration the runtime would load must lint clean.
        report = lint_contract(decl.body)
        if not report.ok:
            problems.append(
                f"{decl.source} does not lint clean: "
                + ", ".join(dict.fromkeys(report.error_codes))
            )
        recomputed = contract_hash(decl.body)
        if recomputed != pin.contract_hash:
            problems.append(
                f"contract_hash mismatch in {decl.source}: pinned {pin.contract_hash}, "
                f"recomputed {recomputed}"
            )
        declared = decl.body.get("contract_hash")
        if declared is not None and declared != recomputed:
            problems.append(
                f"{decl.source} declares contract_hash {declared}, recomputes {recomputed}"
            )


def _check_entry(
    pin: Pin,
    entry: Mapping[str, Any],
    entry_report: EntryReport,
    *,
    require_signed: bool,
    problems: list[str],
    notes: list[str],
    label: str = "manifest",
) -> None:
    if entry.get("contract_hash") != pin.contract_hash:
        problems.append(
            f"{label} entry contract_hash {entry.get('contract_hash')!r} differs from the pin"
        )
    if entry_report.entry_hash_status != "ok":
        problems.append(f"{label} entry_hash {entry_report.entry_hash_status}")
    signature = entry_report.entry_signature_status
    if signature == "bad":
        problems.append(f"{label} entry_signature bad")
    elif signature != "ok":
        (problems if require_signed else notes).append(f"{label} entry_signature {signature}")
    if pin.entry_hash and entry.get("entry_hash") != pin.entry_hash:
        notes.append(f"{label} entry_hash changed since pinning (lifecycle fields may have moved)")


def _check_one(
    pin: Pin,
    declarations: Sequence[Declaration],
    entry: tuple[Mapping[str, Any], EntryReport] | None,
    *,
    manifest_given: bool,
    require_signed: bool,
    broken: Sequence[BrokenDeclaration] = (),
    live: tuple[Mapping[str, Any], EntryReport] | None = None,
    live_given: bool = False,
    allow_inspection_only: bool = False,
) -> PinVerdict:
    problems: list[str] = []
    notes: list[str] = []
    # formats.md §1: a file that cannot be read strictly is never "not found" (fail closed).
    problems.extend(
        f"{b.source} cannot be checked ({b.reason}): it may be this contract, tampered"
        for b in broken
    )
    # A pin recorded against a failing entry never holds (seed 003: never unverified as trusted).
    if pin.entry_hash_status == "mismatch" or pin.entry_signature_status == "bad":
        problems.append(
            f"pinned with entry_hash_status={pin.entry_hash_status}, "
            f"entry_signature_status={pin.entry_signature_status}"
        )
    _check_declarations(pin, declarations, problems)
    rows: list[Mapping[str, Any]] = [pin.raw, *(d.body for d in declarations)]
    if entry is not None:
        _check_entry(
            pin, entry[0], entry[1], require_signed=require_signed, problems=problems, notes=notes
        )
        rows.append(entry[0])
    elif manifest_given:
        (problems if require_signed else notes).append("no manifest entry for this pin")
    elif require_signed and not live_given:
        problems.append("--require-signed needs a signed manifest entry (no manifest given)")
    if live is not None:
        # The registry's live manifest (--registry): it knows of revocations a file predates.
        _check_entry(
            pin, live[0], live[1], require_signed=True, problems=problems, notes=notes, label="live"
        )
        rows.append(live[0])
    elif live_given:
        problems.append("the registry's live manifest has no entry for this pin")
    if not declarations and entry is None and live is None and not broken:
        problems.append("declaration missing: no contract file and no manifest entry found")
    # The most severe lifecycle any source reports wins (revoked > deprecated > superseded);
    # the pin's own text can only make it stricter (seed 003 lifecycle table).
    states = [lifecycle_state(r) for r in rows]
    lifecycle = max(states, key=("active", "superseded", "deprecated", "revoked").index)
    inspection = allow_inspection_only and pin.inspection_only
    refused = lifecycle == "revoked" and not inspection
    if lifecycle != "active":
        notes.append(
            f"lifecycle {lifecycle}" + ("; inspection-only pin allowed" if inspection else "")
        )
    if lifecycle == "revoked" and pin.inspection_only and not allow_inspection_only:
        notes.append("recorded inspection-only: passes only with --allow-inspection-only")
    return PinVerdict(
        adapter_id=pin.adapter_id,
        adapter_version=pin.adapter_version,
        contract_hash=pin.contract_hash,
        lifecycle=lifecycle,
        problems=tuple(problems),
        notes=tuple(notes),
        sources=tuple(d.source for d in declarations)
        + (("manifest",) if entry else ())
        + (("registry",) if live else ()),
        revoked_refused=refused,
    )


def _entries_of(
    manifest: Mapping[str, Any], report: ManifestReport
) -> dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]]:
    entries: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    for raw, entry_report in zip(contracts_of(manifest), report.entries, strict=True):
        entries.setdefault(
            (entry_report.adapter_id, entry_report.adapter_version), (raw, entry_report)
        )
    return entries


def check_pins(
    pin_file: PinFile,
    declarations: Iterable[Declaration],
    *,
    manifest: Mapping[str, Any] | None = None,
    manifest_report: ManifestReport | None = None,
    require_signed: bool = False,
    broken: Iterable[BrokenDeclaration] = (),
    live_manifest: Mapping[str, Any] | None = None,
    live_report: ManifestReport | None = None,
    allow_inspection_only: bool = False,
    manifest_problems: Iterable[str] = (),
) -> PinCheckReport:
    """Check every pin against the declarations found and, when given, the verified manifests.

    A pin holds when each declaration found for its (adapter_id, adapter_version) lints clean and
    recomputes to the pinned ``contract_hash`` (and declares that hash), no broken file may be
    its contract, the manifest entry (if a manifest is given) carries the same hash with an ``ok``
    entry hash and no ``bad`` signature, and at least one source was found. ``require_signed``
    also demands an ``ok`` entry signature and manifest signature. ``live_manifest`` (the
    registry's, ``--registry``) must verify fully and list the pin. Revoked pins are refused
    (exit 3) unless ``allow_inspection_only`` and the pin was recorded as inspection-only.
    ``manifest_problems`` are findings the caller made about the manifest (e.g. its age).

    Raises:
        ManifestFormatError: ``manifest`` is malformed.
    """
    by_key: dict[tuple[str, str], list[Declaration]] = {}
    for decl in declarations:
        key = (str(decl.body.get("adapter_id", "")), str(decl.body.get("adapter_version", "")))
        by_key.setdefault(key, []).append(decl)
    problems: list[str] = list(manifest_problems)
    notes: list[str] = []
    entries: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if manifest is not None:
        if manifest_report is None:
            raise errors.UsageError("check_pins needs the manifest's verification report")
        entries = _entries_of(manifest, manifest_report)
        _manifest_findings(manifest_report, require_signed, problems, notes)
    elif require_signed and live_manifest is None:
        problems.append("--require-signed needs --manifest (or --registry) and a public key")
    live: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if live_manifest is not None:
        if live_report is None:
            raise errors.UsageError("check_pins needs the live manifest's verification report")
        live = _entries_of(live_manifest, live_report)
        problems.extend(f"registry manifest: {reason}" for reason in live_report.failures())
    broken_files = tuple(broken)
    pinned_ids = {pin.adapter_id for pin in pin_file.pins}
    # A broken file naming no pinned id may be any contract: nothing proves it is not one.
    problems.extend(
        f"{item.source} cannot be checked ({item.reason})"
        for item in broken_files
        if not item.adapter_ids & pinned_ids
    )
    verdicts = tuple(
        _check_one(
            pin,
            by_key.get(pin.key, []),
            entries.get(pin.key),
            manifest_given=manifest is not None,
            require_signed=require_signed,
            broken=[b for b in broken_files if pin.adapter_id in b.adapter_ids],
            live=live.get(pin.key),
            live_given=live_manifest is not None,
            allow_inspection_only=allow_inspection_only,
        )
        for pin in pin_file.pins
    )
    if not pin_file.pins:
        notes.append("the pin file has no pins")
    return PinCheckReport(
        pins=verdicts, problems=tuple(problems), notes=tuple(notes), manifest=manifest_report
    )


def _manifest_findings(
    report: ManifestReport, require_signed: bool, problems: list[str], notes: list[str]
) -> None:
    if report.manifest_hash_status != "ok":
        problems.append(f"manifest_hash {report.manifest_hash_status}")
    if report.manifest_signature_status == "bad":
        problems.append("manifest_signature bad")
    elif report.manifest_signature_status != "ok":
        (problems if require_signed else notes).append(
            f"manifest_signature {report.manifest_signature_status}"
        )
    problems.extend(f"manifest loud collision {i}@{v}" for i, v in report.loud_collisions)
    problems.extend(f"manifest duplicate entry {i}@{v}" for i, v in report.duplicate_keys)


# ------------------------------------------------------------------------------------------
# Pinning one contract (seed 003 "Adoption workflow" and lifecycle table, "CLI pin behavior")


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
    """Decide what to pin, in the peer's pin shape (formats.md §3, seed 003 lifecycle table).

    Without a manifest the pin says ``entry_hash_status: no_manifest_supplied``. With one, the
    matching entry must verify (its hash, no ``bad`` signature, no tampered manifest) and carry
    the same contract_hash; its lifecycle decides the advice. Statuses are recorded as found, so
    an unverified entry is never recorded as trusted.

    Raises:
        PinArgumentError: malformed id, version or hash.
        PinEntryUnverified: the manifest entry or the manifest fails verification.
        PinHashMismatch: the entry's contract_hash is not the one being pinned.
        PinRevoked: the entry is revoked and the inspection flag was not given (exit 3).
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
        raise errors.ContractError(
            "pin.revoked",
            f"{label} is REVOKED: refusing to pin it for new work (replacement: "
            f"{entry.get('replaced_by') or 'none declared'}); for legacy or forensic review only, "
            "re-run with --allow-revoked-for-legacy-inspection",
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
