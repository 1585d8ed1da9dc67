"""The pin check behind the CI gate (docs/formats.md §3, seed 003 "Manifest and pinning").

Pure: the caller reads files and hands parsed values in. :func:`plan_pin` (seed 003 "Adoption
workflow") decides what to record from the verified manifest entry; :func:`check_pins` returns a
frozen report whose ``exit_code`` is the gate's verdict. A revoked pin passes only when the caller
allows inspection-only pins *and* the pin was recorded as one (docs/adr/0007-pin-gate-freshness.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, lint_contract
from affidavit.verify.contracts.lifecycle import Lifecycle, lifecycle_advice, lifecycle_state
from affidavit.verify.contracts.manifest import EntryReport, ManifestReport, contracts_of
from affidavit.verify.contracts.pin_file import Pin, PinFile, validate_pin_args
from affidavit.verify.results import Problem, render_problems

__all__ = [
    "BrokenDeclaration",
    "Declaration",
    "PinCheckReport",
    "PinPlan",
    "PinVerdict",
    "check_pins",
    "plan_pin",
]

# The pin check (docs/formats.md §3, docs/adr/0007-pin-gate-freshness.md)


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
class _Sources:
    """Where the inputs came from, as the caller names them (for findings; never opened)."""

    pin_file: str | None = None
    manifest: str | None = None
    live: str | None = None
    searched: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class PinVerdict:
    """What the gate found for one pin. ``holds`` is False when ``problems`` is not empty."""

    adapter_id: str
    adapter_version: str
    contract_hash: str
    lifecycle: Lifecycle
    problems: tuple[Problem, ...]
    notes: tuple[Problem, ...]
    sources: tuple[str, ...]
    revoked_refused: bool

    @property
    def holds(self) -> bool:
        """True when the pin holds (no problem and not refused as revoked)."""
        return not self.problems and not self.revoked_refused

    def to_json(self, names: Mapping[str, str] | None = None) -> dict[str, Any]:
        """JSON form for ``--json``; ``names`` words the caller's settings
        (:meth:`~affidavit.verify.results.Problem.render`)."""
        return {
            "adapter_id": self.adapter_id,
            "adapter_version": self.adapter_version,
            "contract_hash": self.contract_hash,
            "holds": self.holds,
            "lifecycle": self.lifecycle,
            "revoked_refused": self.revoked_refused,
            "problems": render_problems(self.problems, names),
            "notes": render_problems(self.notes, names),
            "sources": list(self.sources),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class PinCheckReport:
    """The gate's verdict over every pin, plus the manifest-level findings."""

    pins: tuple[PinVerdict, ...]
    problems: tuple[Problem, ...]
    notes: tuple[Problem, ...]
    manifest: ManifestReport | None
    pin_file: str | None = None

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

    def findings(self, names: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """Every reason the gate fails (a refused revoked pin too), as ``{code, pin, file,
        message}``: what a CI annotation needs; ``pin`` and ``file`` are null when unknown."""
        out: list[dict[str, Any]] = []
        for verdict in self.pins:
            label = f"{verdict.adapter_id}@{verdict.adapter_version}"
            out.extend(_finding(p, label, names) for p in verdict.problems)
            if verdict.revoked_refused:
                out.append(
                    {
                        "code": "pin.check_revoked",
                        "pin": label,
                        "file": self.pin_file,
                        "message": f"{label} is revoked",
                    }
                )
        out.extend(_finding(p, None, names) for p in self.problems)
        return out

    def to_json(self, names: Mapping[str, str] | None = None) -> dict[str, Any]:
        """JSON form for ``--json``; ``names`` words the caller's settings
        (:meth:`~affidavit.verify.results.Problem.render`)."""
        return {
            "ok": self.ok,
            "exit_code": self.exit_code,
            "pin_count": len(self.pins),
            "pins": [p.to_json(names) for p in self.pins],
            "problems": render_problems(self.problems, names),
            "notes": render_problems(self.notes, names),
            "findings": self.findings(names),
            "manifest": self.manifest.to_json() if self.manifest is not None else None,
        }


def _finding(problem: Problem, pin: str | None, names: Mapping[str, str] | None) -> dict[str, Any]:
    return {
        "code": problem.code,
        "pin": pin,
        "file": problem.file,
        "message": problem.render(names),
    }


# Findings about the caller's settings, named by parameter (the command line renders its option).
_NO_MANIFEST_ENTRY_SIGNED = Problem(
    "{require_signed} needs a signed manifest entry (no manifest given)",
    ("require_signed",),
    "pin.signature_required",
)
_NO_MANIFEST_SIGNED = Problem(
    "{require_signed} needs {manifest} (or {live_manifest}) and a public key",
    ("require_signed", "manifest", "live_manifest"),
    "pin.signature_required",
)
_INSPECTION_NEEDS_ALLOW = Problem(
    "recorded inspection-only: passes only with {allow_inspection_only}",
    ("allow_inspection_only",),
)


def _required(
    required: bool, problem: Problem, problems: list[Problem], notes: list[Problem]
) -> None:
    """A finding that fails the gate when ``required``, else a note (notes carry no code)."""
    if required:
        problems.append(problem)
    else:
        notes.append(Problem(problem.message, problem.settings))


def _check_declarations(pin: Pin, found: Sequence[Declaration], problems: list[Problem]) -> None:
    for decl in found:
        # seed 003 "Lint a contract": a declaration the runtime would load must lint clean.
        report = lint_contract(decl.body)
        if not report.ok:
            problems.append(
                Problem(
                    f"{decl.source} does not lint clean: "
                    + ", ".join(dict.fromkeys(report.error_codes)),
                    code="pin.contract_invalid",
                    file=decl.source,
                )
            )
        recomputed = contract_hash(decl.body)
        if recomputed != pin.contract_hash:
            problems.append(
                Problem(
                    f"contract_hash mismatch in {decl.source}: pinned {pin.contract_hash}, "
                    f"recomputed {recomputed}",
                    code="pin.contract_changed",
                    file=decl.source,
                )
            )
        declared = decl.body.get("contract_hash")
        if declared is not None and declared != recomputed:
            problems.append(
                Problem(
                    f"{decl.source} declares contract_hash {declared}, recomputes {recomputed}",
                    code="contract.hash_mismatch",
                    file=decl.source,
                )
            )


def _check_entry(
    pin: Pin,
    entry: Mapping[str, Any],
    entry_report: EntryReport,
    *,
    require_signed: bool,
    problems: list[Problem],
    notes: list[Problem],
    label: str = "manifest",
    source: str | None = None,
) -> None:
    if entry.get("contract_hash") != pin.contract_hash:
        problems.append(
            Problem(
                f"{label} entry contract_hash {entry.get('contract_hash')!r} differs from the pin",
                code="pin.hash_mismatch",
                file=source,
            )
        )
    if entry_report.entry_hash_status != "ok":
        problems.append(
            Problem(
                f"{label} entry_hash {entry_report.entry_hash_status}",
                code="entry.hash_mismatch",
                file=source,
            )
        )
    signature = entry_report.entry_signature_status
    if signature == "bad":
        problems.append(
            Problem(f"{label} entry_signature bad", code="entry.signature_invalid", file=source)
        )
    elif signature != "ok":
        _required(
            require_signed,
            Problem(
                f"{label} entry_signature {signature}", code="pin.signature_required", file=source
            ),
            problems,
            notes,
        )
    if pin.entry_hash and entry.get("entry_hash") != pin.entry_hash:
        notes.append(
            Problem(f"{label} entry_hash changed since pinning (lifecycle fields may have moved)")
        )


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
    sources: _Sources | None = None,
) -> PinVerdict:
    where = sources or _Sources()
    problems: list[Problem] = []
    notes: list[Problem] = []
    # docs/formats.md §1: a file that cannot be read strictly is never "not found" (fail closed).
    problems.extend(
        Problem(
            f"{b.source} cannot be checked ({b.reason}): it may be this contract, tampered",
            code="pin.contract_unreadable",
            file=b.source,
        )
        for b in broken
    )
    # A pin recorded against a failing entry never holds (seed 003: never unverified as trusted).
    if pin.entry_hash_status == "mismatch" or pin.entry_signature_status == "bad":
        problems.append(
            Problem(
                f"pinned with entry_hash_status={pin.entry_hash_status}, "
                f"entry_signature_status={pin.entry_signature_status}",
                code="pin.recorded_unverified",
                file=where.pin_file,
            )
        )
    # A manifest entry vouches for the hash, never for the bytes the runtime will load: it does not
    # stand in for a deleted, moved or renamed contract.
    if not declarations and not broken:
        searched = ", ".join(where.searched) or "the folders searched"
        problems.append(
            Problem(
                f"declaration missing: no contract file for this pin in {searched} "
                "(deleted, moved or renamed?)",
                code="pin.contract_missing",
                file=where.pin_file,
            )
        )
    _check_declarations(pin, declarations, problems)
    rows: list[Mapping[str, Any]] = [pin.raw, *(d.body for d in declarations)]
    if entry is not None:
        _check_entry(
            pin,
            entry[0],
            entry[1],
            require_signed=require_signed,
            problems=problems,
            notes=notes,
            source=where.manifest,
        )
        rows.append(entry[0])
    elif manifest_given:
        _required(
            require_signed,
            Problem(
                "no manifest entry for this pin", code="pin.entry_missing", file=where.manifest
            ),
            problems,
            notes,
        )
    elif require_signed and not live_given:
        problems.append(_NO_MANIFEST_ENTRY_SIGNED)
    if live is not None:
        # The registry's live manifest: it knows of revocations a file predates (docs/adr/0007).
        _check_entry(
            pin,
            live[0],
            live[1],
            require_signed=True,
            problems=problems,
            notes=notes,
            label="live",
            source=where.live,
        )
        rows.append(live[0])
    elif live_given:
        problems.append(
            Problem(
                "the registry's live manifest has no entry for this pin",
                code="pin.entry_missing",
                file=where.live,
            )
        )
    # The most severe lifecycle any source reports wins (revoked > deprecated > superseded);
    # the pin's own text can only make it stricter (seed 003 lifecycle table).
    states = [lifecycle_state(r) for r in rows]
    lifecycle = max(states, key=("active", "superseded", "deprecated", "revoked").index)
    inspection = allow_inspection_only and pin.inspection_only
    refused = lifecycle == "revoked" and not inspection
    if lifecycle != "active":
        notes.append(
            Problem(
                f"lifecycle {lifecycle}" + ("; inspection-only pin allowed" if inspection else "")
            )
        )
    if lifecycle == "revoked" and pin.inspection_only and not allow_inspection_only:
        notes.append(_INSPECTION_NEEDS_ALLOW)
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
    manifest_problems: Iterable[str | Problem] = (),
    pin_file_source: str | None = None,
    manifest_source: str | None = None,
    live_source: str | None = None,
    searched: Iterable[str] = (),
) -> PinCheckReport:
    """Check every pin against the declarations found and, when given, the verified manifests.

    A pin holds when a declaration is found for it (a manifest entry never stands in), each lints
    clean and recomputes to (and declares) the pinned ``contract_hash``, no broken file may be its
    contract, and the manifest entry carries the same hash with an ``ok`` entry hash and no
    ``bad`` signature; ``require_signed`` also demands ``ok`` signatures; ``live_manifest`` must
    verify fully and list the pin. ``manifest_problems`` are the caller's findings about the
    manifest (e.g. its age); the ``*_source`` names and ``searched`` only word findings.

    Raises:
        ``manifest.invalid``: ``manifest`` is malformed.
    """
    by_key: dict[tuple[str, str], list[Declaration]] = {}
    for decl in declarations:
        key = (str(decl.body.get("adapter_id", "")), str(decl.body.get("adapter_version", "")))
        by_key.setdefault(key, []).append(decl)
    where = _Sources(pin_file_source, manifest_source, live_source, tuple(searched))
    problems: list[Problem] = [
        p
        if isinstance(p, Problem)
        else Problem(p, code="manifest.verification_failed", file=manifest_source)
        for p in manifest_problems
    ]
    notes: list[Problem] = []
    entries: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if manifest is not None:
        if manifest_report is None:
            raise errors.UsageError("check_pins needs the manifest's verification report")
        entries = _entries_of(manifest, manifest_report)
        _manifest_findings(manifest_report, require_signed, problems, notes, manifest_source)
    elif require_signed and live_manifest is None:
        problems.append(_NO_MANIFEST_SIGNED)
    live: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if live_manifest is not None:
        if live_report is None:
            raise errors.UsageError("check_pins needs the live manifest's verification report")
        live = _entries_of(live_manifest, live_report)
        problems.extend(
            Problem(
                f"registry manifest: {problem.message}",
                code="manifest.verification_failed",
                file=live_source,
            )
            for problem in live_report.problems()
        )
    broken_files = tuple(broken)
    pinned_ids = {pin.adapter_id for pin in pin_file.pins}
    # A broken file naming no pinned id may be any contract: nothing proves it is not one.
    problems.extend(
        Problem(
            f"{item.source} cannot be checked ({item.reason})",
            code="pin.contract_unreadable",
            file=item.source,
        )
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
            sources=where,
        )
        for pin in pin_file.pins
    )
    if not pin_file.pins:
        notes.append(Problem("the pin file has no pins"))
    return PinCheckReport(
        pins=verdicts,
        problems=tuple(problems),
        notes=tuple(notes),
        manifest=manifest_report,
        pin_file=pin_file_source,
    )


def _manifest_findings(
    report: ManifestReport,
    require_signed: bool,
    problems: list[Problem],
    notes: list[Problem],
    source: str | None,
) -> None:
    failed = "manifest.verification_failed"
    if report.manifest_hash_status != "ok":
        problems.append(
            Problem(f"manifest_hash {report.manifest_hash_status}", code=failed, file=source)
        )
    if report.manifest_signature_status == "bad":
        problems.append(Problem("manifest_signature bad", code=failed, file=source))
    elif report.manifest_signature_status != "ok":
        _required(
            require_signed,
            Problem(
                f"manifest_signature {report.manifest_signature_status}",
                code="pin.signature_required",
                file=source,
            ),
            problems,
            notes,
        )
    problems.extend(
        Problem(f"manifest loud collision {i}@{v}", code=failed, file=source)
        for i, v in report.loud_collisions
    )
    problems.extend(
        Problem(f"manifest duplicate entry {i}@{v}", code=failed, file=source)
        for i, v in report.duplicate_keys
    )


# Pinning one contract (docs/formats.md §3; seed 003 "Adoption workflow", lifecycle table)


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

    With a manifest, the matching entry must verify and carry the same contract_hash; its
    lifecycle decides the advice. Statuses are recorded as found (never an unverified entry as
    trusted).

    Raises:
        ``pin.invalid_argument``: malformed id, version or hash.
        ``pin.entry_unverified``: the manifest entry or the manifest fails verification.
        ``pin.hash_mismatch``: the entry's contract_hash is not the one being pinned.
        ``pin.revoked``: the entry is revoked and ``allow_revoked_for_legacy_inspection`` is not set
            (exit 3; the caller adds the way out to the message).
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
