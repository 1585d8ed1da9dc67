"""What verifying transformation receipts reports: one :class:`ReceiptResult` per receipt, in the
step vocabulary of :mod:`affidavit.verify.results`, and the :class:`ReceiptReport` of a run.

Verdicts (computed from the steps, never beside them):

``verified``    every step is ``ok``;
``failed``      some step ``failed`` (its code says which tamper case);
``incomplete``  no step failed, but one could not run (``not_checked``): a transformation this
                verifier has no implementation of (``transform.unimplemented``), or no trusted key
                (``receipt.unanchored``). Never verified (style.md §7: could not check is not ok);
``unreadable``  the receipt (or, in bulk, a file it names) could not be read: one failed ``parse``
                step.

Exit codes (:data:`affidavit.verify.results.VERDICT_EXIT` extended): 0 verified, 1 failed or
incomplete, 2 unreadable; a run exits with the largest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple

from affidavit.verify.errors import AffidavitError
from affidavit.verify.results import RESULT_VERSION, VERDICT_EXIT, StepResult, step_named

__all__ = [
    "RECEIPT_VERDICTS",
    "RECEIPT_VERDICT_EXIT",
    "ReceiptReport",
    "ReceiptResult",
    "ReceiptVerdict",
    "decide_receipt",
]

ReceiptVerdict = Literal["verified", "failed", "incomplete", "unreadable"]
RECEIPT_VERDICTS: Final[tuple[ReceiptVerdict, ...]] = (
    "verified",
    "failed",
    "incomplete",
    "unreadable",
)
# The one map (results.VERDICT_EXIT), with ``incomplete`` in the place of ``unanchored``: both
# mean "read, but not everything could be checked", so never verified (exit 1).
RECEIPT_VERDICT_EXIT: Final[Mapping[str, int]] = MappingProxyType(
    {
        "verified": VERDICT_EXIT["verified"],
        "failed": VERDICT_EXIT["failed"],
        "incomplete": VERDICT_EXIT["unanchored"],
        "unreadable": VERDICT_EXIT["unreadable"],
    }
)


def decide_receipt(steps: Sequence[StepResult]) -> tuple[ReceiptVerdict, str | None, str]:
    """Verdict, code and message: the first failed step, else the first step not checked."""
    failed = next((s for s in steps if s.status == "failed"), None)
    if failed is not None:
        return "failed", failed.code, f"{failed.name}: {failed.message}"
    skipped = next((s for s in steps if s.status != "ok"), None)
    if skipped is not None:
        return "incomplete", skipped.code, f"{skipped.name}: {skipped.message}"
    return "verified", None, ""


class ReceiptResult(NamedTuple):
    """The verification of one receipt (or why it could not be read)."""

    source: str | None  # the receipt file, as named
    verdict: ReceiptVerdict
    steps: tuple[StepResult, ...]
    receipt_hash: str | None = None
    adapter: tuple[str, str] | None = None  # (name, version)
    transformations: tuple[str, ...] = ()
    capability: str | None = None
    code: str | None = None
    message: str = ""
    files: tuple[tuple[str, str], ...] = ()  # bulk: (("source", path), ("content", path))

    @classmethod
    def unreadable(
        cls, source: str | None, error: AffidavitError, files: tuple[tuple[str, str], ...] = ()
    ) -> ReceiptResult:
        """The result for a receipt that ``error`` kept from being read."""
        step = StepResult.failed("parse", error)
        return cls(
            source, "unreadable", (step,), code=error.code, message=error.message, files=files
        )

    @property
    def verified(self) -> bool:
        """True only for the verdict ``verified``."""
        return self.verdict == "verified"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 failed or incomplete, 2 unreadable."""
        return RECEIPT_VERDICT_EXIT[self.verdict]

    def step(self, name: str) -> StepResult | None:
        """The step called ``name``, if it ran or was reported."""
        return step_named(self.steps, name)

    def to_json(self) -> dict[str, Any]:
        """One ``results`` item of ``specs/output/verify-receipt.schema.json``."""
        out: dict[str, Any] = {
            "kind": "receipt",
            "source": self.source,
            "verdict": self.verdict,
            "verified": self.verified,
            "receipt_hash": self.receipt_hash,
            "adapter": None
            if self.adapter is None
            else {"name": self.adapter[0], "version": self.adapter[1]},
            "transformations": list(self.transformations),
            "capability": self.capability,
            "steps": [step.to_json() for step in self.steps],
        }
        if self.files:
            out["files"] = dict(self.files)
        if self.code is not None or self.verdict != "verified":
            out["code"] = self.code
            out["message"] = self.message
        return out

    def render(self, *, detailed: bool) -> list[str]:
        """The human lines: the verdict; with ``detailed`` every step; then why it is not
        verified."""
        lines = [f"{self.source}: {self.verdict}"]
        if detailed and self.verdict != "unreadable":
            if self.adapter is not None:
                chain = ", ".join(self.transformations) or "(none)"
                lines.append(
                    f"  adapter {self.adapter[0]} {self.adapter[1]}, {self.capability}: {chain}"
                )
            lines.extend(step.line() for step in self.steps)
        if self.verdict != "verified":
            lines.append(f"  {self.code}: {self.message}")
        return lines


class ReceiptReport(NamedTuple):
    """One ``verify receipt`` run: every result, in input order."""

    results: tuple[ReceiptResult, ...]

    def summary(self) -> dict[str, Any]:
        """``{total, verified, failed, incomplete, unreadable, by_code}`` (codes sorted)."""
        counts: dict[str, Any] = dict.fromkeys(RECEIPT_VERDICTS, 0)
        codes: Counter[str] = Counter()
        for result in self.results:
            counts[result.verdict] += 1
            if result.code is not None:
                codes[result.code] += 1
        return {"total": len(self.results), **counts, "by_code": dict(sorted(codes.items()))}

    @property
    def exit_code(self) -> int:
        """The largest of the results' exit codes (0 when there is none)."""
        return max((r.exit_code for r in self.results), default=0)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (``specs/output/verify-receipt.schema.json``)."""
        return {
            "verify_result_version": RESULT_VERSION,
            "kind": "receipt",
            "results": [result.to_json() for result in self.results],
            "summary": self.summary(),
        }

    def render(self, *, detailed: bool) -> list[str]:
        """The human report: each result shown when ``detailed`` or not verified, then the
        summary line (counts by verdict) and, when any, the counts by code."""
        lines: list[str] = []
        for result in self.results:
            if detailed or not result.verified:
                lines.extend(result.render(detailed=detailed))
        summary = self.summary()
        parts = ", ".join(f"{summary[v]} {v}" for v in RECEIPT_VERDICTS if summary[v])
        lines.append(f"{summary['total']} receipt(s): {parts or 'none'}")
        if summary["by_code"]:
            codes = ", ".join(f"{code} {n}" for code, n in summary["by_code"].items())
            lines.append(f"by code: {codes}")
        return lines
