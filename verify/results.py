"""The one result vocabulary of ``affidavit.verify``: steps, verdicts, problems, reports.

Frozen verification results and their JSON form (``specs/verify-result.schema.json``).

>>> step = StepResult.ok("bundle_hash")
>>> step.to_json()
{'name': 'bundle_hash', 'status': 'ok'}
>>> StepResult.not_checked("sth_signature", "no trusted key").status
'not_checked'

Every verification step ends in exactly one of these states:

``ok``           the step ran and the part it covers checks;
``failed``       the step ran and found a problem: ``code`` (a stable error code from
                 ``specs/error-codes.json``), a message, and where useful ``expected``/``actual``;
``not_checked``  the step could not run or did not apply; ``reason`` says why.
``self_asserted`` (signature steps) every signature verifies, but only under keys the bundle
                 itself carries, not under keys the caller trusts: never ``ok``
                 (docs/adr/0008-actor-keys-and-events-after-finality.md).

A verdict is computed from the steps, never beside them (style.md §5): ``failed`` if any step
failed, else ``unanchored`` unless the tree head was checked under a trusted key, else
``verified``. "Could not check" is never "verified" (style.md §7). :data:`VERDICT_EXIT` is the one
verdict-to-exit map (style.md §11) and :data:`RESULT_VERSION` the one document version; every
command that prints a verdict takes both from here.

A check that has no step of its own (a pin the gate refuses, a manifest entry that fails) reports
a :class:`Problem`: one sentence. A sentence about a caller setting names it through a field, so
the library says ``require_signed`` where the command line says ``--require-signed``: library
text never names a command-line flag.

The reports are rendered here, not by the commands: ``to_json`` gives the ``--json`` document,
``render`` the human lines (:class:`VerifyReport` for a ``verify bundle|attestation`` run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple, TypeAlias

from affidavit.verify.errors import AffidavitError

__all__ = [
    "RESULT_VERSION",
    "VERDICTS",
    "VERDICT_EXIT",
    "AttestationResult",
    "BundleResult",
    "Problem",
    "Result",
    "StepResult",
    "StepStatus",
    "UnreadableInput",
    "Verdict",
    "VerifyReport",
    "decide",
    "render_problems",
    "step_named",
    "verdict_exit_code",
]

# ``verify_result_version`` of every ``--json`` verification document.
RESULT_VERSION: Final = "1.0.0"

StepStatus = Literal["ok", "failed", "not_checked", "self_asserted"]
Verdict = Literal["verified", "unanchored", "failed", "unreadable"]
VERDICTS: Final[tuple[Verdict, ...]] = ("verified", "unanchored", "failed", "unreadable")

# The one verdict -> exit code map (style.md §11): 0 verified, 1 not verified, 2 unreadable.
VERDICT_EXIT: Final[Mapping[str, int]] = MappingProxyType(
    {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}
)


def verdict_exit_code(verdict: str) -> int:
    """0 verified, 1 unanchored or failed, 2 unreadable (style.md §11)."""
    return VERDICT_EXIT[verdict]


_NO_DETAILS: Final[Mapping[str, Any]] = MappingProxyType({})


# NamedTuple, not dataclass: this module is on the ``verify bundle`` path (docs/adr/0003).
class StepResult(NamedTuple):
    """The outcome of one verification step."""

    name: str
    status: StepStatus
    code: str | None = None
    message: str = ""
    expected: Any = None
    actual: Any = None
    details: Mapping[str, Any] = _NO_DETAILS  # read-only, shared

    @classmethod
    def ok(cls, name: str, **details: Any) -> StepResult:
        """A step that ran and passed."""
        return cls(name, "ok", details=details)

    @classmethod
    def not_checked(cls, name: str, reason: str, **details: Any) -> StepResult:
        """A step that did not run; ``reason`` says why."""
        return cls(name, "not_checked", message=reason, details=details)

    @classmethod
    def self_asserted(cls, name: str, reason: str, **details: Any) -> StepResult:
        """A signature step whose signatures verify only under keys the bundle itself carries:
        consistent, not proven under a key the caller trusts (never shown as ``ok``)."""
        return cls(name, "self_asserted", message=reason, details=details)

    @classmethod
    def failed(
        cls,
        name: str,
        error: AffidavitError,
        *,
        expected: Any = None,
        actual: Any = None,
        **details: Any,
    ) -> StepResult:
        """A step that ran and failed with ``error``'s code and message."""
        merged = {**error.details, **details}
        return cls(name, "failed", error.code, error.message, expected, actual, merged)

    def to_json(self) -> dict[str, Any]:
        """``{name, status, code?, message?, expected?, actual?, details?}``."""
        out: dict[str, Any] = {"name": self.name, "status": self.status}
        if self.code is not None:
            out["code"] = self.code
        if self.message:
            out["message"] = self.message
        if self.expected is not None:
            out["expected"] = self.expected
        if self.actual is not None:
            out["actual"] = self.actual
        if self.details:
            out["details"] = dict(self.details)
        return out

    def line(self) -> str:
        """The step's row in the human report: name, status, then its code or message."""
        extra = self.code or self.message or ""
        return f"  {self.name:<24} {self.status:<13} {extra}".rstrip()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the details as a plain dict (``--jobs`` workers send results back)."""
        return (StepResult, (*self[:-1], dict(self.details)))


def step_named(steps: Iterable[StepResult], name: str) -> StepResult | None:
    """The step called ``name``, if it ran or was reported."""
    return next((s for s in steps if s.name == name), None)


def _first_failure(steps: tuple[StepResult, ...]) -> StepResult | None:
    return next((s for s in steps if s.status == "failed"), None)


class BundleResult(NamedTuple):
    """The verification of one ProofPack bundle (or why it could not be read)."""

    source: str | None
    verdict: Verdict
    steps: tuple[StepResult, ...]
    deal_id: str | None = None
    spec_version: str | None = None
    bundle_hash: str | None = None
    code: str | None = None
    message: str = ""
    warnings: tuple[str, ...] = ()
    profile: str = "default"
    # Recorded values shown to the reader, outside bundle_hash and the verdict (docs/formats.md §4).
    policy_layer: Mapping[str, Any] | None = None

    @property
    def verified(self) -> bool:
        """True only for the verdict ``verified``."""
        return self.verdict == "verified"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 not verified, 2 unreadable."""
        return verdict_exit_code(self.verdict)

    def step(self, name: str) -> StepResult | None:
        """The step called ``name``, if it ran or was reported."""
        return step_named(self.steps, name)

    @property
    def failed_step(self) -> StepResult | None:
        """The first failed step, if any."""
        return _first_failure(self.steps)

    def to_json(self) -> dict[str, Any]:
        """The ``bundle_result`` object of ``specs/verify-result.schema.json``."""
        out: dict[str, Any] = {
            "kind": "bundle",
            "source": self.source,
            "verdict": self.verdict,
            "verified": self.verified,
            "deal_id": self.deal_id,
            "spec_version": self.spec_version,
            "bundle_hash": self.bundle_hash,
            "steps": [s.to_json() for s in self.steps],
            "warnings": list(self.warnings),
            "profile": self.profile,
        }
        if self.policy_layer is not None:
            out["policy_layer"] = dict(self.policy_layer)
        if self.code is not None:
            out["code"] = self.code
            out["message"] = self.message
        return out

    def render(self, *, detailed: bool) -> list[str]:
        """The human report: the verdict line; with ``detailed`` every step, the profile, the
        warnings and the policy layer (shown, never trusted: docs/formats.md §4); then why it is not
        verified."""
        extra: list[str] = []
        if detailed:
            if self.profile != "default":
                extra.append(f"  profile: {self.profile}")
            extra.extend(f"  warning: {w}" for w in self.warnings)
            if self.policy_layer is not None:
                from affidavit.verify.bundles.policy_layer import (  # noqa: PLC0415 - lazy: only for a bundle that has one
                    describe_policy_layer,
                )

                extra.extend(describe_policy_layer(self.policy_layer))
        return _describe(self, detailed, extra)


class AttestationResult(NamedTuple):
    """The verification of one OutcomeAttestation (docs/formats.md §4)."""

    source: str | None
    verdict: Verdict
    steps: tuple[StepResult, ...]
    payload_hash: str | None = None
    code: str | None = None
    message: str = ""

    @property
    def verified(self) -> bool:
        """True only for the verdict ``verified``."""
        return self.verdict == "verified"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 not verified, 2 unreadable."""
        return verdict_exit_code(self.verdict)

    def step(self, name: str) -> StepResult | None:
        """The step called ``name``."""
        return step_named(self.steps, name)

    def to_json(self) -> dict[str, Any]:
        """The ``attestation_result`` object of ``specs/verify-result.schema.json``."""
        out: dict[str, Any] = {
            "kind": "attestation",
            "source": self.source,
            "verdict": self.verdict,
            "verified": self.verified,
            "payload_hash": self.payload_hash,
            "steps": [s.to_json() for s in self.steps],
        }
        if self.code is not None:
            out["code"] = self.code
            out["message"] = self.message
        return out

    def render(self, *, detailed: bool) -> list[str]:
        """The human report: the verdict line, with ``detailed`` every step, then why it is
        not verified."""
        return _describe(self, detailed, ())


class UnreadableInput(NamedTuple):
    """An input that could not be read at all (no such file, not strict JSON): verdict
    ``unreadable``, one failed ``parse`` step, no other field."""

    kind: str  # "bundle" | "attestation"
    source: str | None
    code: str
    message: str

    @classmethod
    def of(cls, kind: str, source: str | None, error: AffidavitError) -> UnreadableInput:
        """The result for ``source``, which ``error`` kept from being read."""
        return cls(kind, source, error.code, error.message)

    @property
    def verdict(self) -> Verdict:
        """Always ``unreadable``."""
        return "unreadable"

    @property
    def exit_code(self) -> int:
        """2 (unreadable)."""
        return verdict_exit_code(self.verdict)

    @property
    def steps(self) -> tuple[StepResult, ...]:
        """The one failed ``parse`` step."""
        return (StepResult("parse", "failed", self.code, self.message),)

    def to_json(self) -> dict[str, Any]:
        """``{kind, source, verdict, verified, steps: [parse], code, message}``."""
        step = {"name": "parse", "status": "failed", "code": self.code, "message": self.message}
        return {
            "kind": self.kind,
            "source": self.source,
            "verdict": "unreadable",
            "verified": False,
            "steps": [step],
            "code": self.code,
            "message": self.message,
        }


Result: TypeAlias = BundleResult | AttestationResult | UnreadableInput


def _describe(
    result: BundleResult | AttestationResult, detailed: bool, extra: Sequence[str]
) -> list[str]:
    lines = [f"{result.source}: {result.verdict}"]
    if detailed:
        lines.extend(step.line() for step in result.steps)
        lines.extend(extra)
    failing = _first_failure(result.steps)
    if result.verdict == "failed" and failing is not None:
        lines.append(f"  failed at {failing.name}: {failing.code}: {failing.message}")
    elif result.verdict == "unanchored":
        lines.append(f"  {result.code}: {result.message}")
    return lines


def _unreadable_line(result: Result) -> str:
    """Input that cannot be read is one line on stderr, as for every command (style.md §11)."""
    source = result.source
    prefix = f"{source}: " if source and source not in result.message else ""
    return f"error: {result.code}: {prefix}{result.message}"


class VerifyReport(NamedTuple):
    """One ``verify bundle|attestation`` run: every result, in input order."""

    kind: str  # "bundle" | "attestation"
    results: tuple[Result, ...]

    def summary(self) -> dict[str, int]:
        """``{total, verified, unanchored, failed, unreadable}``."""
        counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        for result in self.results:
            counts[result.verdict] += 1
        return {"total": len(self.results), **counts}

    @property
    def exit_code(self) -> int:
        """The largest of the results' exit codes (0 when there is none)."""
        return max((VERDICT_EXIT[r.verdict] for r in self.results), default=0)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (``specs/verify-result.schema.json``)."""
        return {
            "verify_result_version": RESULT_VERSION,
            "kind": self.kind,
            "results": [result.to_json() for result in self.results],
            "summary": self.summary(),
        }

    def render(self, *, detailed: bool) -> list[tuple[str, bool]]:
        """The human report as ``(text, to_stderr)`` blocks, in print order.

        An unreadable input is one ``error:`` line on stderr; every other result is shown when
        ``detailed`` or not verified; a summary line ends the report unless the only input was
        unreadable.
        """
        blocks: list[tuple[str, bool]] = []
        for result in self.results:
            if isinstance(result, UnreadableInput) or result.verdict == "unreadable":
                blocks.append((_unreadable_line(result), True))
            elif detailed or result.verdict != "verified":
                blocks.append(("\n".join(result.render(detailed=detailed)), False))
        summary = self.summary()
        if len(self.results) > 1 or summary["unreadable"] == 0:
            parts = ", ".join(f"{summary[v]} {v}" for v in VERDICTS if summary[v])
            blocks.append((f"{summary['total']} {self.kind}(s): {parts}", False))
        return blocks


class Problem(NamedTuple):
    """A finding that is not a step of its own (the pin gate, a manifest): one sentence.

    A sentence about a caller setting names it as a ``{field}`` of ``message``, each field listed
    in ``settings``. The library words it by parameter name (``require_signed``); a command
    passes its option names to :meth:`render` (``--require-signed``). Without settings the
    message is plain text, never formatted.
    """

    message: str
    settings: tuple[str, ...] = ()

    def render(self, names: Mapping[str, str] | None = None) -> str:
        """The sentence, each setting named by ``names`` (else by its parameter name)."""
        if not self.settings:
            return self.message
        table = names or {}
        return self.message.format_map({s: table.get(s, s) for s in self.settings})

    def __str__(self) -> str:
        return self.render()


def render_problems(
    problems: Iterable[Problem], names: Mapping[str, str] | None = None
) -> list[str]:
    """Each problem's sentence (see :meth:`Problem.render`)."""
    return [problem.render(names) for problem in problems]


def decide(
    steps: tuple[StepResult, ...], *, anchored: bool, unanchored_error: AffidavitError
) -> tuple[Verdict, str | None, str]:
    """Verdict, code and message from the steps (fail closed; see the module docstring)."""
    failure = _first_failure(steps)
    if failure is not None:
        return "failed", failure.code, f"{failure.name}: {failure.message}"
    if not anchored:
        return "unanchored", unanchored_error.code, unanchored_error.message
    return "verified", None, ""
