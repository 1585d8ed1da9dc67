"""Verification outcomes as text for people (style.md §17): every line is rendered from the
library's :class:`~affidavit.verify.results.Result` or :class:`~affidavit.verify.results.Report`,
never computed beside them. The ``verify bundle`` fast path imports this module: no click, no
dataclasses (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from affidavit.verify.results import VERDICTS, Report, Result, StepResult

__all__ = [
    "error_line",
    "one_line",
    "outcome_blocks",
    "report_blocks",
    "result_lines",
    "step_line",
]


def outcome_blocks(
    outcome: Result | Report,
    *,
    as_json: bool,
    extra: Mapping[str, Any] | None = None,
    detailed: bool = True,
    brief: bool = False,
) -> list[tuple[str, bool]]:
    """What a verify verb prints, as ``(text, to_stderr)`` blocks: with ``as_json`` the result's
    (or report's) one document, ``extra`` beside it (the trust it was verified under); else a
    report's blocks, a result's one line (``brief``), or its error line when unreadable and its
    report lines otherwise."""
    if as_json:
        document = outcome.to_json() if isinstance(outcome, Report) else outcome.document()
        return [(json.dumps({**document, **(extra or {})}, indent=2, ensure_ascii=False), False)]
    if isinstance(outcome, Report):
        return report_blocks(outcome, detailed=detailed)
    if brief:
        return [one_line(outcome)]
    if outcome.verdict == "unreadable":
        return [(error_line(outcome), True)]
    return [("\n".join(result_lines(outcome, detailed=detailed)), False)]


def step_line(step: StepResult) -> str:
    """A step's row: name, status, then its code or message."""
    extra = step.code or step.message or ""
    return f"  {step.name:<24} {step.status:<13} {extra}".rstrip()


def error_line(result: Result) -> str:
    """An unreadable input is one line on stderr, as for every command (style.md §11)."""
    source, message = result.source, result.message
    prefix = f"{source}: " if source and source not in message else ""
    return f"error: {result.code}: {prefix}{message}"


def result_lines(result: Result, *, detailed: bool) -> list[str]:
    """The verdict line; with ``detailed`` every step and what the subject adds; then why it is
    not verified."""
    lines = [f"{result.source}: {result.verdict}"]
    if detailed:
        lines.extend(step_line(step) for step in result.steps)
        lines.extend(_EXTRA.get(result.kind, _nothing)(result.subject))
    failing = result.failed_step
    if result.verdict == "failed" and failing is not None:
        lines.append(f"  failed at {failing.name}: {failing.code}: {failing.message}")
    elif result.verdict == "unanchored":
        lines.append(f"  {result.code}: {result.message}")
        hint = _HINTS.get(result.code or "")
        if hint is not None:
            lines.append(f"  {hint}")
    return lines


def one_line(result: Result) -> tuple[str, bool]:
    """The text of a verb that answers in one line (checkpoint, inclusion, tlog-proof, monitor),
    as ``(text, to_stderr)``: what was verified, else the error line on stderr."""
    if not result.verified:
        return error_line(result), True
    return _HEADLINE[result.kind](result.subject), False


def report_blocks(report: Report, *, detailed: bool) -> list[tuple[str, bool]]:
    """The report as ``(text, to_stderr)`` blocks, in print order.

    An unreadable input is one ``error:`` line on stderr; every other result is shown when
    ``detailed`` or not verified; a summary line (and, for several inputs, the counts by code)
    ends the report unless the only input was unreadable.
    """
    blocks: list[tuple[str, bool]] = []
    for result in report.results:
        if result.verdict == "unreadable":
            blocks.append((error_line(result), True))
        elif detailed or not result.verified:
            blocks.append(("\n".join(result_lines(result, detailed=detailed)), False))
    summary = report.summary()
    if len(report.results) > 1 or summary["unreadable"] == 0:
        parts = ", ".join(f"{summary[v]} {v}" for v in VERDICTS if summary[v])
        lines = [f"{summary['total']} {report.kind}(s): {parts}"]
        if len(report.results) > 1 and summary["by_code"]:
            codes = ", ".join(f"{code} {n}" for code, n in summary["by_code"].items())
            lines.append(f"by code: {codes}")
        blocks.append(("\n".join(lines), False))
    return blocks


# How to supply what a verdict lacked, in this command line's words: the library names no flag
# (style.md §17), so the hint lives here, by code.
_KEY_OPTIONS: Final = (
    "--public-key-base64 K, --public-key FILE, --publisher-doc FILE or --trusted-keys DIR"
)
_HINTS: Final[Mapping[str, str]] = {
    "bundle.unanchored": f"give a key you trust: {_KEY_OPTIONS}",
    "attestation.unanchored": f"give a key you trust: {_KEY_OPTIONS}",
    "receipt.unanchored": f"give a key you trust: {_KEY_OPTIONS}",
    "anchor.token_unchecked": "give the TSA certificate you trust: --tsa-cert PEM",
    "bundle.actor_keys_self_asserted": "prove who signed with --trusted-actor-keys PATH",
}


def _nothing(_: Mapping[str, Any]) -> list[str]:
    return []


def _bundle(subject: Mapping[str, Any]) -> list[str]:
    """The profile, the warnings and the policy layer (shown, never trusted: formats.md §4)."""
    profile = subject.get("profile", "default")
    lines = [] if profile == "default" else [f"  profile: {profile}"]
    for warning in subject.get("warnings", ()):
        hint = _HINTS.get(warning.partition(":")[0])
        lines.append(f"  warning: {warning}" + (f" ({hint})" if hint else ""))
    layer = subject.get("policy_layer")
    if layer is not None:
        lines.extend(_policy_layer(layer))
    return lines


def _policy_layer(view: Mapping[str, Any]) -> list[str]:
    if not view.get("has_policy"):
        return ["  policy_layer: present but empty or not an object (ProofPack v1 reading)"]
    sections = view.get("sections", [])
    lines = [f"  policy_layer (ProofPack v2, {len(sections)} section(s); {view['note']}):"]
    if "sla" in view:
        sla = view["sla"]
        terms = sla.get("guarantees", sla) if isinstance(sla.get("guarantees"), dict) else sla
        lines.append(
            f"    sla: delivery {terms.get('delivery_hours', '?')}h, "
            f"quality >= {terms.get('quality_floor', '?')}"
        )
    lines.extend(
        f"    {name}: {', '.join(sorted(map(str, view[name])))}"
        for name in ("mandate", "spawn")
        if name in view
    )
    if "attestation" in view:
        att = view["attestation"]
        lines.append(
            f"    attestation: OCS {att.get('ocs_score', '?')} ({att.get('ocs_tier', '')})"
        )
    if "outcome" in view:
        out = view["outcome"]
        lines.append(f"    outcome: {out.get('metric', '?')} >= {out.get('threshold', '?')}")
    if "referral_chain" in view:
        lines.append("    referral_chain: " + " -> ".join(map(str, view["referral_chain"])))
    return lines


def _receipt(subject: Mapping[str, Any]) -> list[str]:
    """The adapter and its declared chain (docs/formats.md §7)."""
    adapter = subject["adapter"]
    chain = ", ".join(subject["transformations"]) or "(none)"
    return [f"  adapter {adapter['name']} {adapter['version']}, {subject['capability']}: {chain}"]


def _dsse(subject: Mapping[str, Any]) -> list[str]:
    """The Statement's type and subjects, once its signatures verified."""
    statement = subject["statement"]
    if statement is None:
        return []
    lines = [f"  predicateType: {statement['predicate_type']}"]
    for item in statement["subjects"]:
        digests = ", ".join(f"{k}:{v}" for k, v in item["digest"].items())
        lines.append(f"  subject: {item['name'] or '_'} {digests}")
    return lines


def _tlog_proof(subject: Mapping[str, Any]) -> str:
    witnesses = ", ".join(subject["witnesses"]) or "no witness"
    extra = "" if subject["extra_base64"] is None else "; extra data present (not authenticated)"
    return (
        f"verified: leaf {subject['index']} of {subject['origin']} (tree size "
        f"{subject['tree_size']}, root {subject['root_hash']}), cosigned by {witnesses}; "
        f"quorum {subject['quorum']} met{extra}"
    )


def _checkpoint(subject: Mapping[str, Any]) -> str:
    return (
        f"verified: checkpoint {subject['origin']} size {subject['tree_size']} root "
        f"{subject['root_hash']} (signed by {', '.join(subject['verified_by'])}; "
        f"{subject['ignored_signatures']} other signature(s) ignored)"
    )


def _inclusion(subject: Mapping[str, Any]) -> str:
    return (
        f"verified: leaf {subject['index']} is in the tree of size {subject['size']} "
        f"with root {subject['root_hash']}"
    )


def _monitor(subject: Mapping[str, Any]) -> str:
    """A monitor round: the tree it trusts now, what it read, what it followed."""
    size, previous = subject["tree_size"], subject["previous_size"]
    if previous is None:
        what = f"first round: trusting size {size}"
    elif previous == size:
        what = f"unchanged at size {size}"
    else:
        what = f"size {previous} -> {size} extends the trusted tree"
    notes = [f"{subject['tiles_read']} tiles, {subject['bytes_read']} bytes read"]
    if subject["entries_checked"]:
        notes.append(f"{subject['entries_checked']} entries checked")
    if subject["cosigned_by"]:
        notes.append(f"cosigned by {', '.join(subject['cosigned_by'])}")
    if subject["rotated_to"]:
        rotated = ", ".join(subject["rotated_to"])
        notes.append(f"followed the key rotation(s) the trusted key signed to {rotated}")
    return f"ok: {subject['origin']} {what} ({'; '.join(notes)})"


# The one line of a verified subject, by kind.
_HEADLINE: Final[Mapping[str, Callable[[Mapping[str, Any]], str]]] = {
    "checkpoint": _checkpoint,
    "inclusion": _inclusion,
    "monitor": _monitor,
    "tlog_proof": _tlog_proof,
}

# What each kind of subject adds to a detailed report.
_EXTRA: Final[Mapping[str, Callable[[Mapping[str, Any]], list[str]]]] = {
    "bundle": _bundle,
    "dsse": _dsse,
    "receipt": _receipt,
}
