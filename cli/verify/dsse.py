"""``affidavit verify dsse``: a DSSE envelope carrying an in-toto Statement v1, offline.

::

    affidavit verify dsse FILE|- (--public-key-base64 K ... | --trusted-keys DIR)
        [--threshold N] [--bundle BUNDLE] [--json]

Trust comes only from the caller: ``--public-key-base64 K`` (repeatable) or ``--trusted-keys DIR``
(every ``*.pub``, ``*.json`` and ``*.pem`` there), read by the one strict key loader
(:mod:`affidavit.verify.crypto.trusted_keys`); exactly one of the two. The envelope's ``keyid``
is a hint, never trusted.

Steps, in order (``ok``, ``failed``, ``not_checked`` when an earlier step failed, ``skipped``):

1. ``envelope``     strict parse (:func:`affidavit.verify.dsse.envelope.parse_envelope`); a failure
                    is unreadable input, exit 2;
2. ``signatures``   the threshold of distinct trusted keys over ``PAE(payloadType, payload)``
                    (:mod:`affidavit.verify.dsse.verify`);
3. ``statement``    the payloadType is in-toto's and the payload a strict in-toto Statement v1
                    (:mod:`affidavit.verify.dsse.statement`); not read unless step 2 is ``ok``;
4. ``cross_check``  with ``--bundle``: the Statement against the bundle it summarizes
                    (:mod:`affidavit.verify.dsse.crosscheck`); ``skipped`` without ``--bundle``.

Exit codes: 0 verified (every step ``ok`` or ``skipped``); 1 not verified (``dsse.*`` and
``statement.*`` failures, and ``bundle.hash_mismatch`` for a bundle inconsistent with itself); 2
unreadable input or usage (a bad envelope, key, bundle, threshold, a bundle recording no decision,
or ``--bundle`` with a predicate type that cannot be cross-checked). ``--json`` prints one document
(``specs/output/verify-dsse.schema.json``) for exit 0 and 1, and for an unreadable envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import click
from affidavit.cli._common import emit_json, json_option, read_input
from affidavit.cli.verify._keys import key_options, trusted_keys
from affidavit.verify import errors
from affidavit.verify._code import FAILED
from affidavit.verify.results import RESULT_VERSION, StepResult, StepStatus

if TYPE_CHECKING:
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.dsse.envelope import Envelope
    from affidavit.verify.dsse.statement import Statement
    from affidavit.verify.dsse.verify import DsseVerification

__all__ = ["dsse"]

_UNAUTHENTICATED = "the signatures did not verify: the payload is not authenticated, not read"
_SKIPPED = cast("StepStatus", "skipped")  # a step the caller did not ask for (no --bundle)


@click.command("dsse")
@click.argument("source", metavar="FILE|-")
@key_options
@click.option(
    "--threshold",
    type=int,
    default=1,
    show_default=True,
    help="Distinct trusted keys that must each verify a signature.",
)
@click.option(
    "--bundle",
    "bundle_file",
    type=click.Path(dir_okay=False),
    help="The ProofPack bundle a decision Statement summarizes: cross-check subject and predicate.",
)
@json_option
def dsse(
    *,
    source: str,
    keys_b64: tuple[str, ...],
    trusted_dir: str | None,
    threshold: int,
    bundle_file: str | None,
    as_json: bool,
) -> None:
    """Verify a DSSE envelope and the in-toto Statement v1 it carries, under trusted keys."""
    from affidavit.verify.dsse.verify import check_threshold  # noqa: PLC0415 - lazy

    keys = trusted_keys(keys_b64, trusted_dir, exactly_one=True)
    check_threshold(threshold, len(keys))
    bundle = None if bundle_file is None else _read_bundle(bundle_file)
    report = _Report(source, threshold, len(keys))
    envelope = report.read_envelope(source)
    if envelope is None:
        report.finish(as_json)
        return
    verification = report.check_signatures(envelope, keys, threshold)
    statement = report.check_statement(envelope, verification)
    report.check_bundle(statement, bundle, bundle_file)
    report.finish(as_json)


def _read_bundle(path: str) -> Any:
    from affidavit.cli._common import read_json  # noqa: PLC0415 - lazy

    return read_json(path)


def _read_envelope_bytes(source: str) -> bytes:
    from affidavit.verify.dsse.envelope import MAX_ENVELOPE_BYTES  # noqa: PLC0415 - lazy

    try:
        return read_input(source, max_bytes=MAX_ENVELOPE_BYTES)
    except errors.ParseError as e:
        if e.code != "json.too_large":
            raise
        raise errors.EnvelopeError(
            "dsse.too_large",
            f"{source}: larger than {MAX_ENVELOPE_BYTES} bytes",
            details={"limit": MAX_ENVELOPE_BYTES},
        ) from None


class _Report:
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

    def read_envelope(self, source: str) -> Envelope | None:
        """Step 1: an envelope that cannot be read is reported (JSON) and exits 2."""
        from affidavit.verify.dsse.envelope import parse_envelope  # noqa: PLC0415 - lazy

        try:
            envelope = parse_envelope(_read_envelope_bytes(source))
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
        from affidavit.verify.dsse.verify import verify_envelope  # noqa: PLC0415 - lazy

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
        from affidavit.verify.dsse.statement import statement_of  # noqa: PLC0415 - lazy

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
        from affidavit.verify.dsse.crosscheck import cross_check_bundle  # noqa: PLC0415 - lazy

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

    def finish(self, as_json: bool) -> None:
        """Print the report and exit with the verdict's code (0, 1 or 2)."""
        verdict = self.verdict
        failing = next((s for s in self.steps if s.status == "failed"), None)
        if as_json:
            emit_json(self.to_json(verdict, failing))
        elif verdict == "unreadable" and failing is not None:
            click.echo(f"error: {failing.code}: {self.source}: {failing.message}", err=True)
        else:
            click.echo(f"{self.source}: {verdict}")
            for step in self.steps:
                click.echo(step.line())
            if self.statement is not None:
                click.echo(f"  predicateType: {self.statement['predicate_type']}")
                for subject in self.statement["subjects"]:
                    digests = ", ".join(f"{k}:{v}" for k, v in subject["digest"].items())
                    click.echo(f"  subject: {subject['name'] or '_'} {digests}")
            if failing is not None:
                click.echo(f"  failed at {failing.name}: {failing.code}: {failing.message}")
        code = {"verified": 0, "failed": 1, "unreadable": 2}[verdict]
        if code:
            click.get_current_context().exit(code)

    def to_json(self, verdict: str, failing: StepResult | None) -> dict[str, Any]:
        """The ``--json`` document (``specs/output/verify-dsse.schema.json``)."""
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
