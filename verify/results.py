"""Frozen verification results and their JSON form (``specs/verify-result.schema.json``).

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
``verified``. "Could not check" is never "verified" (style.md §7).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple

from affidavit.verify.errors import AffidavitError

__all__ = [
    "RESULT_VERSION",
    "AttestationResult",
    "BundleResult",
    "StepResult",
    "StepStatus",
    "Verdict",
    "verdict_exit_code",
]

RESULT_VERSION: Final = "1.0.0"

StepStatus = Literal["ok", "failed", "not_checked", "self_asserted"]
Verdict = Literal["verified", "unanchored", "failed", "unreadable"]

_EXIT: Final[dict[str, int]] = {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}


def verdict_exit_code(verdict: str) -> int:
    """0 verified, 1 unanchored or failed, 2 unreadable (style.md §11)."""
    return _EXIT[verdict]


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
    # Recorded values shown to the reader, outside bundle_hash and the verdict (formats.md §4).
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
        return next((s for s in self.steps if s.name == name), None)

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


class AttestationResult(NamedTuple):
    """The verification of one OutcomeAttestation (formats.md §4)."""

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
        return next((s for s in self.steps if s.name == name), None)

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
