"""The pin check behind the CI gate (docs/formats.md §3, seed 003 "Manifest and pinning").

Pin files are parsed by :mod:`affidavit.verify.contracts.pin_file`, one contract is pinned by
:mod:`affidavit.verify.contracts.pin_plan` (their names are importable from here too); lifecycle
rules live in :mod:`affidavit.verify.contracts.lifecycle`. Everything here is pure: the CLI reads
files, fetches nothing unless asked, and hands parsed values in. The pin check
(:func:`check_pins`) returns a frozen report whose ``exit_code`` is the gate's verdict: 0 every pin
holds, 1 a mismatch, a missing, broken or unlinted declaration, or a stale manifest, 3 a revoked pin
(1 wins when both occur: a tampered contract is the louder finding).

Findings are :class:`~affidavit.verify.results.Problem` sentences. One about a caller setting
names it by its parameter here (``require_signed``); the command line renders it with its own
option names (``to_json(names)``), so no message of this module names a command-line flag.

Lifecycle is decided from the sources that say the most (revoked > deprecated > superseded >
active): the signed manifest entries and the declarations, and the pin's own ``status``, which can
only make a verdict stricter. Editable pin text never relaxes one: a revoked pin passes only when
the caller allows inspection-only pins explicitly *and* the pin was recorded as one
(docs/adr/0007-pin-gate-freshness.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from affidavit.verify import errors
from affidavit.verify.contracts.contract import contract_hash, lint_contract
from affidavit.verify.contracts.lifecycle import Lifecycle, lifecycle_state
from affidavit.verify.contracts.manifest import EntryReport, ManifestReport, contracts_of
from affidavit.verify.contracts.pin_file import (
    SHA256_HEX_RE,
    Pin,
    PinFile,
    parse_pin_file,
    validate_pin_args,
)
from affidavit.verify.contracts.pin_plan import PinPlan, plan_pin
from affidavit.verify.results import Problem, render_problems

__all__ = [
    "SHA256_HEX_RE",
    "BrokenDeclaration",
    "Declaration",
    "Pin",
    "PinCheckReport",
    "PinFile",
    "PinPlan",
    "PinVerdict",
    "Problem",
    "check_pins",
    "parse_pin_file",
    "plan_pin",
    "validate_pin_args",
]

# ------------------------------------------------------------------------------------------
# The pin check (docs/formats.md §3, docs/adr/0007-pin-gate-freshness.md): pure; the CLI gathers
# the declarations and the manifest report.


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
            "manifest": self.manifest.to_json() if self.manifest is not None else None,
        }


# Findings about the caller's settings, worded through Problem fields (see the module docstring).
_NO_MANIFEST_ENTRY_SIGNED = Problem(
    "{require_signed} needs a signed manifest entry (no manifest given)", ("require_signed",)
)
_NO_MANIFEST_SIGNED = Problem(
    "{require_signed} needs {manifest} (or {live_manifest}) and a public key",
    ("require_signed", "manifest", "live_manifest"),
)
_INSPECTION_NEEDS_ALLOW = Problem(
    "recorded inspection-only: passes only with {allow_inspection_only}",
    ("allow_inspection_only",),
)


def _check_declarations(pin: Pin, found: Sequence[Declaration], problems: list[Problem]) -> None:
    for decl in found:
        # seed 003 "Lint a contract": a declaration the runtime would load must lint clean.
        report = lint_contract(decl.body)
        if not report.ok:
            problems.append(
                Problem(
                    f"{decl.source} does not lint clean: "
                    + ", ".join(dict.fromkeys(report.error_codes))
                )
            )
        recomputed = contract_hash(decl.body)
        if recomputed != pin.contract_hash:
            problems.append(
                Problem(
                    f"contract_hash mismatch in {decl.source}: pinned {pin.contract_hash}, "
                    f"recomputed {recomputed}"
                )
            )
        declared = decl.body.get("contract_hash")
        if declared is not None and declared != recomputed:
            problems.append(
                Problem(f"{decl.source} declares contract_hash {declared}, recomputes {recomputed}")
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
) -> None:
    if entry.get("contract_hash") != pin.contract_hash:
        problems.append(
            Problem(
                f"{label} entry contract_hash {entry.get('contract_hash')!r} differs from the pin"
            )
        )
    if entry_report.entry_hash_status != "ok":
        problems.append(Problem(f"{label} entry_hash {entry_report.entry_hash_status}"))
    signature = entry_report.entry_signature_status
    if signature == "bad":
        problems.append(Problem(f"{label} entry_signature bad"))
    elif signature != "ok":
        (problems if require_signed else notes).append(
            Problem(f"{label} entry_signature {signature}")
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
) -> PinVerdict:
    problems: list[Problem] = []
    notes: list[Problem] = []
    # docs/formats.md §1: a file that cannot be read strictly is never "not found" (fail closed).
    problems.extend(
        Problem(f"{b.source} cannot be checked ({b.reason}): it may be this contract, tampered")
        for b in broken
    )
    # A pin recorded against a failing entry never holds (seed 003: never unverified as trusted).
    if pin.entry_hash_status == "mismatch" or pin.entry_signature_status == "bad":
        problems.append(
            Problem(
                f"pinned with entry_hash_status={pin.entry_hash_status}, "
                f"entry_signature_status={pin.entry_signature_status}"
            )
        )
    _check_declarations(pin, declarations, problems)
    rows: list[Mapping[str, Any]] = [pin.raw, *(d.body for d in declarations)]
    if entry is not None:
        _check_entry(
            pin, entry[0], entry[1], require_signed=require_signed, problems=problems, notes=notes
        )
        rows.append(entry[0])
    elif manifest_given:
        (problems if require_signed else notes).append(Problem("no manifest entry for this pin"))
    elif require_signed and not live_given:
        problems.append(_NO_MANIFEST_ENTRY_SIGNED)
    if live is not None:
        # The registry's live manifest: it knows of revocations a file predates (docs/adr/0007).
        _check_entry(
            pin, live[0], live[1], require_signed=True, problems=problems, notes=notes, label="live"
        )
        rows.append(live[0])
    elif live_given:
        problems.append(Problem("the registry's live manifest has no entry for this pin"))
    if not declarations and entry is None and live is None and not broken:
        problems.append(
            Problem("declaration missing: no contract file and no manifest entry found")
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
    manifest_problems: Iterable[str] = (),
) -> PinCheckReport:
    """Check every pin against the declarations found and, when given, the verified manifests.

    A pin holds when each declaration found for its (adapter_id, adapter_version) lints clean and
    recomputes to the pinned ``contract_hash`` (and declares that hash), no broken file may be
    its contract, the manifest entry (if a manifest is given) carries the same hash with an ``ok``
    entry hash and no ``bad`` signature, and at least one source was found. ``require_signed``
    also demands an ``ok`` entry signature and manifest signature. ``live_manifest`` (the
    registry's live one) must verify fully and list the pin. Revoked pins are refused
    (exit 3) unless ``allow_inspection_only`` and the pin was recorded as inspection-only.
    ``manifest_problems`` are findings the caller made about the manifest (e.g. its age).

    Raises:
        ``manifest.invalid``: ``manifest`` is malformed.
    """
    by_key: dict[tuple[str, str], list[Declaration]] = {}
    for decl in declarations:
        key = (str(decl.body.get("adapter_id", "")), str(decl.body.get("adapter_version", "")))
        by_key.setdefault(key, []).append(decl)
    problems: list[Problem] = [Problem(text) for text in manifest_problems]
    notes: list[Problem] = []
    entries: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if manifest is not None:
        if manifest_report is None:
            raise errors.UsageError("check_pins needs the manifest's verification report")
        entries = _entries_of(manifest, manifest_report)
        _manifest_findings(manifest_report, require_signed, problems, notes)
    elif require_signed and live_manifest is None:
        problems.append(_NO_MANIFEST_SIGNED)
    live: dict[tuple[str, str], tuple[Mapping[str, Any], EntryReport]] = {}
    if live_manifest is not None:
        if live_report is None:
            raise errors.UsageError("check_pins needs the live manifest's verification report")
        live = _entries_of(live_manifest, live_report)
        problems.extend(
            Problem(f"registry manifest: {problem.message}") for problem in live_report.problems()
        )
    broken_files = tuple(broken)
    pinned_ids = {pin.adapter_id for pin in pin_file.pins}
    # A broken file naming no pinned id may be any contract: nothing proves it is not one.
    problems.extend(
        Problem(f"{item.source} cannot be checked ({item.reason})")
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
        notes.append(Problem("the pin file has no pins"))
    return PinCheckReport(
        pins=verdicts, problems=tuple(problems), notes=tuple(notes), manifest=manifest_report
    )


def _manifest_findings(
    report: ManifestReport, require_signed: bool, problems: list[Problem], notes: list[Problem]
) -> None:
    if report.manifest_hash_status != "ok":
        problems.append(Problem(f"manifest_hash {report.manifest_hash_status}"))
    if report.manifest_signature_status == "bad":
        problems.append(Problem("manifest_signature bad"))
    elif report.manifest_signature_status != "ok":
        (problems if require_signed else notes).append(
            Problem(f"manifest_signature {report.manifest_signature_status}")
        )
    problems.extend(Problem(f"manifest loud collision {i}@{v}") for i, v in report.loud_collisions)
    problems.extend(Problem(f"manifest duplicate entry {i}@{v}") for i, v in report.duplicate_keys)
