"""The report of verifying one DSSE envelope: its steps, verdict, ``--json`` document and human
lines (``affidavit verify dsse``; docs/formats.md §8).

Steps, in order (``ok``, ``failed``, ``not_checked`` when an earlier step failed, ``skipped``):

1. ``envelope``     strict parse (:func:`affidavit.verify.dsse.envelope.parse_envelope`); a failure
                    is unreadable input, exit 2;
2. ``signatures``   the threshold of distinct trusted keys over ``PAE(payloadType, payload)``
                    (:mod:`affidavit.verify.dsse.verify`);
3. ``statement``    the payloadType is in-toto's and the payload a strict in-toto Statement v1
                    (:mod:`affidavit.verify.dsse.statement`); not read unless step 2 is ``ok``;
4. ``cross_check``  with a bundle: the Statement against the bundle it summarizes
                    (:mod:`affidavit.verify.dsse.crosscheck`); ``skipped`` without one.

The verdict is computed from the steps: ``verified`` only when every step is ``ok`` or
``skipped`` (a step not run is never a pass), ``unreadable`` when the envelope could not be read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, cast

from affidavit.verify import errors
from affidavit.verify._code import FAILED
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.dsse.crosscheck import cross_check_bundle
from affidavit.verify.dsse.envelope import Envelope, parse_envelope
from affidavit.verify.dsse.statement import Statement, statement_of
from affidavit.verify.dsse.verify import DsseVerification, verify_envelope
from affidavit.verify.results import RESULT_VERSION, StepResult, StepStatus, verdict_exit_code

__all__ = ["DsseReport"]

_UNAUTHENTICATED: Final = (
    "the signatures did not verify: the payload is not authenticated, not read"
)
_SKIPPED: Final = cast("StepStatus", "skipped")  # a step the caller did not ask for (no bundle)


class DsseReport:
    """The steps of one run, their facts, and the verdict computed from them."""

    def __init__(self, source: str, threshold: int, trusted_keys: int) -> None:
        self.source = source
        self.threshold = threshold
        self.trusted_keys = trusted_keys
        self.steps: list[StepResult] = []
        self.unreadable = False
        self.payload_type: str | None = None
        self.signatures: list[dict[str, Any]] = []
        self.keys_verified: list[str] = []
        self.statement: dict[str, Any] | None = None

    def read_envelope(self, read: Callable[[], bytes]) -> Envelope | None:
        """Step 1: parse the bytes ``read()`` gives; an envelope that cannot be read (too large,
        malformed) is a failed step and the verdict ``unreadable`` (exit 2). A file that cannot be
        opened at all (``io.unreadable``) is raised."""
        try:
            envelope = parse_envelope(read())
        except (errors.EnvelopeError, errors.ParseError) as e:
            if e.code == "io.unreadable":
                raise
            self.unreadable = True
            self.steps.append(StepResult.failed("envelope", e))
            return None
        self.payload_type = envelope.payload_type
        self.steps.append(StepResult.ok("envelope", signatures=len(envelope.signatures)))
        return envelope

    def check_signatures(
        self, envelope: Envelope, keys: list[Ed25519PublicKey], threshold: int
    ) -> DsseVerification:
        """Step 2: the threshold of distinct trusted keys."""
        verification = verify_envelope(envelope, keys, threshold=threshold)
        self.signatures = [
            {"index": c.index, "keyid": c.keyid, "verified_by": [k.b64 for k in c.verified_by]}
            for c in verification.signatures
        ]
        self.keys_verified = [key.b64 for key in verification.keys_verified]
        counts = {"threshold": threshold, "verified_keys": len(verification.keys_verified)}
        error = verification.error
        summary = (
            f"{len(verification.keys_verified)} distinct trusted key(s) verified, "
            f"threshold {threshold}"
        )
        step = (
            StepResult("signatures", "ok", message=summary, details=counts)
            if error is None
            else StepResult.failed("signatures", error)
        )
        self.steps.append(step)
        return verification

    def check_statement(
        self, envelope: Envelope, verification: DsseVerification
    ) -> Statement | None:
        """Step 3: read only an authenticated payload."""
        if not verification.met:
            self.steps.append(StepResult.not_checked("statement", _UNAUTHENTICATED))
            return None
        try:
            statement = statement_of(envelope)
        except errors.EnvelopeError as e:
            self.steps.append(StepResult.failed("statement", e))
            return None
        self.statement = {
            "predicate_type": statement.predicate_type,
            "subjects": [{"name": s.name, "digest": dict(s.digest)} for s in statement.subjects],
        }
        self.steps.append(StepResult.ok("statement", predicate_type=statement.predicate_type))
        return statement

    def check_bundle(
        self, statement: Statement | None, bundle: Any, bundle_file: str | None
    ) -> None:
        """Step 4: the cross-check against ``--bundle``."""
        if bundle_file is None:
            self.steps.append(StepResult("cross_check", _SKIPPED, message="no --bundle given"))
            return
        if statement is None:
            reason = "the Statement was not read: nothing to cross-check"
            self.steps.append(StepResult.not_checked("cross_check", reason))
            return
        try:
            cross_check_bundle(statement, bundle)
        except (errors.EnvelopeError, errors.BundleError) as e:
            if e.exit_code != FAILED:  # a --bundle that is no decision bundle: bad input, exit 2
                raise
            self.steps.append(StepResult.failed("cross_check", e))
            return
        self.steps.append(StepResult.ok("cross_check", bundle=bundle_file))

    @property
    def verdict(self) -> str:
        """``unreadable``, ``failed`` unless every step is ``ok`` or ``skipped``, else
        ``verified`` (a step not run is never a pass)."""
        if self.unreadable:
            return "unreadable"
        if all(step.status in {"ok", "skipped"} for step in self.steps):
            return "verified"
        return "failed"

    @property
    def failing(self) -> StepResult | None:
        """The first failed step, if any: the report's code and message."""
        return next((s for s in self.steps if s.status == "failed"), None)

    @property
    def exit_code(self) -> int:
        """0 verified, 1 failed, 2 unreadable (:data:`affidavit.verify.results.VERDICT_EXIT`)."""
        return verdict_exit_code(self.verdict)

    def render(self) -> list[tuple[str, bool]]:
        """The human lines as ``(text, to_stderr)``: for an unreadable envelope one error line on
        stderr; else the verdict, the steps, the Statement's type and subjects, and the first
        failure."""
        failing = self.failing
        if self.verdict == "unreadable" and failing is not None:
            return [(f"error: {failing.code}: {self.source}: {failing.message}", True)]
        lines = [f"{self.source}: {self.verdict}", *(step.line() for step in self.steps)]
        if self.statement is not None:
            lines.append(f"  predicateType: {self.statement['predicate_type']}")
            for subject in self.statement["subjects"]:
                digests = ", ".join(f"{k}:{v}" for k, v in subject["digest"].items())
                lines.append(f"  subject: {subject['name'] or '_'} {digests}")
        if failing is not None:
            lines.append(f"  failed at {failing.name}: {failing.code}: {failing.message}")
        return [(line, False) for line in lines]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (``specs/output/verify-dsse.schema.json``)."""
        verdict, failing = self.verdict, self.failing
        out: dict[str, Any] = {
            "verify_result_version": RESULT_VERSION,
            "kind": "dsse",
            "source": self.source,
            "verdict": verdict,
            "verified": verdict == "verified",
            "payload_type": self.payload_type,
            "threshold": self.threshold,
            "trusted_keys": self.trusted_keys,
            "signatures": self.signatures,
            "keys_verified": self.keys_verified,
            "statement": self.statement,
            "steps": [step.to_json() for step in self.steps],
        }
        if failing is not None:
            out["code"] = failing.code
            out["message"] = f"{failing.name}: {failing.message}"
        return out
