"""The one verification outcome of ``affidavit.verify`` (style.md §5, §17): steps, a verdict, a
result, a report.

>>> step = StepResult.ok("bundle_hash")
>>> step.to_json()
{'name': 'bundle_hash', 'status': 'ok'}
>>> result = Result("example", "x.json", (step, StepResult.not_checked("signature", "no key")))
>>> result.verdict, result.code, result.exit_code
('unanchored', None, 1)

A step is ``ok``, ``failed`` (a stable ``code``), ``not_checked`` (a ``reason``) or
``self_asserted`` (docs/adr/0008-actor-keys-and-events-after-finality.md). A :class:`Result`'s
verdict is computed from its steps, never stored beside them (style.md §5):

``unreadable``  a step reading the input failed (:meth:`StepResult.unreadable`, exit 2);
``failed``      any other step failed (exit 1);
``unanchored``  nothing failed, but a step the verdict needs (``required``; every step when
                ``None``) is not ``ok``: read, not proven, never verified (style.md §7);
``verified``    every step the verdict needs is ``ok`` (exit 0).

A :class:`Report`'s verdict is the worst of its results'. A :class:`Problem` names a caller
setting by field, never by command-line flag (tests/verify/test_no_flags.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple

from affidavit.verify.codes import INPUT
from affidavit.verify.errors import AffidavitError

__all__ = [
    "RESULT_VERSION",
    "VERDICTS",
    "VERDICT_EXIT",
    "Problem",
    "Report",
    "Result",
    "StepResult",
    "StepRun",
    "StepStatus",
    "Verdict",
    "render_problems",
]

# ``verify_result_version`` of every ``--json`` verification document.
RESULT_VERSION: Final = "1.0.0"

StepStatus = Literal["ok", "failed", "not_checked", "self_asserted"]
Verdict = Literal["verified", "unanchored", "failed", "unreadable"]
# In order of severity: a report's verdict is the last of its results' in this order.
VERDICTS: Final[tuple[Verdict, ...]] = ("verified", "unanchored", "failed", "unreadable")

# The one verdict -> exit code map (style.md §11): 0 verified, 1 not verified, 2 unreadable.
VERDICT_EXIT: Final[Mapping[str, int]] = MappingProxyType(
    {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}
)

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
    input_error: bool = False  # failed reading the input: the verdict is unreadable

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

    @classmethod
    def unreadable(cls, name: str, error: AffidavitError, **details: Any) -> StepResult:
        """A step that could not read the input as what it claims to be: failed, and the
        verdict is ``unreadable``."""
        return cls.failed(name, error, **details)._replace(input_error=True)

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

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the details as a plain dict (``--jobs`` workers send results back)."""
        *head, details, input_error = self
        return (StepResult, (*head, dict(details), input_error))


class Result(NamedTuple):
    """One verification: the kind of subject, its source, every step, and the subject's own
    fields (JSON values, in output order). ``required`` names the steps the verdict needs ``ok``
    (``None``: every step); ``unproven`` is the code and message of ``unanchored`` (``None``: the
    first needed step's).
    """

    kind: str
    source: str | None
    steps: tuple[StepResult, ...]
    subject: Mapping[str, Any] = _NO_DETAILS
    required: tuple[str, ...] | None = None
    unproven: tuple[str, str] | None = None

    @classmethod
    def unreadable_input(cls, kind: str, source: str | None, error: AffidavitError) -> Result:
        """The result for an input that ``error`` kept from being read at all (no such file, not
        strict JSON): one failed ``parse`` step."""
        return cls(kind, source, (StepResult.unreadable("parse", error),))

    def _decision(self) -> tuple[Verdict, str | None, str]:
        """The verdict, its code and its message, from the steps (fail closed)."""
        failed = [s for s in self.steps if s.status == "failed"]
        unreadable = next((s for s in failed if s.input_error), None)
        if unreadable is not None:
            return "unreadable", unreadable.code, unreadable.message
        if failed:
            return "failed", failed[0].code, f"{failed[0].name}: {failed[0].message}"
        needed = self.required
        unproven = next(
            (s for s in self.steps if s.status != "ok" and (needed is None or s.name in needed)),
            None,
        )
        if unproven is None:
            return "verified", None, ""
        if self.unproven is not None:
            return "unanchored", *self.unproven
        return "unanchored", unproven.code, f"{unproven.name}: {unproven.message}"

    @property
    def verdict(self) -> Verdict:
        """``verified``, ``unanchored``, ``failed`` or ``unreadable`` (module docstring)."""
        return self._decision()[0]

    @property
    def code(self) -> str | None:
        """Why it is not verified: the deciding step's code (None when verified)."""
        return self._decision()[1]

    @property
    def message(self) -> str:
        """Why it is not verified, for people ("" when verified)."""
        return self._decision()[2]

    @property
    def verified(self) -> bool:
        """True only for the verdict ``verified``."""
        return self.verdict == "verified"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 unanchored or failed, 2 unreadable."""
        return VERDICT_EXIT[self.verdict]

    def step(self, name: str) -> StepResult | None:
        """The step called ``name``, if it ran or was reported."""
        return next((s for s in self.steps if s.name == name), None)

    @property
    def failed_step(self) -> StepResult | None:
        """The first failed step, if any."""
        return next((s for s in self.steps if s.status == "failed"), None)

    def to_json(self) -> dict[str, Any]:
        """``{kind, source, verdict, verified, <subject fields>, steps, code?, message?}``: one
        result of ``specs/verify-result.schema.json``."""
        verdict, code, message = self._decision()
        out: dict[str, Any] = {
            "kind": self.kind,
            "source": self.source,
            "verdict": verdict,
            "verified": verdict == "verified",
            **self.subject,
            "steps": [s.to_json() for s in self.steps],
        }
        if verdict != "verified":
            out["code"], out["message"] = code, message
        return out

    def document(self) -> dict[str, Any]:
        """The ``--json`` document of a command that verifies one subject: the result with
        ``verify_result_version`` first."""
        return {"verify_result_version": RESULT_VERSION, **self.to_json()}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the subject as a plain dict (``--jobs`` workers send results back)."""
        kind, source, steps, subject, required, unproven = self
        return (Result, (kind, source, steps, dict(subject), required, unproven))


class Report(NamedTuple):
    """One run over several inputs (``verify bundle``, ``attestation``, ``receipt``): every
    result, in input order."""

    kind: str
    results: tuple[Result, ...]

    @property
    def verdict(self) -> Verdict:
        """The worst of the results' verdicts (``verified`` when there is none)."""
        return max((r.verdict for r in self.results), key=VERDICTS.index, default="verified")

    @property
    def exit_code(self) -> int:
        """The largest of the results' exit codes (0 when there is none)."""
        return VERDICT_EXIT[self.verdict]

    def summary(self) -> dict[str, Any]:
        """``{total, verified, unanchored, failed, unreadable, by_code}`` (codes sorted)."""
        counts: dict[str, Any] = dict.fromkeys(VERDICTS, 0)
        codes: Counter[str] = Counter()
        for result in self.results:
            verdict, code, _ = result._decision()  # once per result
            counts[verdict] += 1
            if code is not None:
                codes[code] += 1
        return {"total": len(self.results), **counts, "by_code": dict(sorted(codes.items()))}

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (``specs/verify-result.schema.json``)."""
        return {
            "verify_result_version": RESULT_VERSION,
            "kind": self.kind,
            "verdict": self.verdict,
            "results": [result.to_json() for result in self.results],
            "summary": self.summary(),
        }


class StepRun:
    """The steps of a check that raises at its first failure: :meth:`passed` records each step,
    :meth:`fail` the step in progress (``unreadable`` for an input error) and the rest as
    ``not_checked``.

    >>> run = StepRun(("parse",))
    >>> run.passed("parse")
    >>> run.result("example", None).verdict
    'verified'
    """

    __slots__ = ("names", "steps")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.steps: list[StepResult] = []

    def passed(self, name: str, **details: Any) -> None:
        """The next step, ``name``, passed."""
        if self.names[len(self.steps)] != name:  # pragma: no cover - a plan out of order
            raise AssertionError(f"step {name!r} out of order in {self.names}")
        self.steps.append(StepResult.ok(name, **details))

    def fail(self, error: AffidavitError) -> None:
        """The step in progress failed with ``error``; the later ones are not checked."""
        name = self.names[len(self.steps)]
        unreadable = error.exit_code == INPUT
        step = StepResult.unreadable(name, error) if unreadable else StepResult.failed(name, error)
        self.steps.append(step)
        later = self.names[len(self.steps) :]
        self.steps.extend(StepResult.not_checked(s, f"the {name} step failed") for s in later)

    def result(self, kind: str, source: str | None, **subject: Any) -> Result:
        """The steps so far as a :class:`Result`."""
        return Result(kind, source, tuple(self.steps), subject)


class Problem(NamedTuple):
    """A finding that is not a step of its own (the pin gate, a manifest): one sentence, each
    caller setting in ``settings`` a ``{field}`` of ``message`` (never formatted without any)."""

    message: str
    settings: tuple[str, ...] = ()
    # The finding's error code and file, when known: what a CI annotation needs (issue 37 §5).
    code: str | None = None
    file: str | None = None

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
