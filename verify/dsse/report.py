"""The steps of verifying one DSSE envelope (``affidavit verify dsse``; docs/formats.md §8), as
the one :class:`~affidavit.verify.results.Result`:

1. ``envelope``     strict parse (:func:`affidavit.verify.dsse.envelope.parse_envelope`); a failure
                    is unreadable input, exit 2;
2. ``signatures``   the threshold of distinct trusted keys over ``PAE(payloadType, payload)``
                    (:mod:`affidavit.verify.dsse.verify`);
3. ``statement``    the payloadType is in-toto's and the payload a strict in-toto Statement v1
                    (:mod:`affidavit.verify.dsse.statement`); ``not_checked`` unless step 2 is
                    ``ok`` (an unauthenticated payload is not read);
4. ``cross_check``  only with a bundle: the Statement against the bundle it summarizes
                    (:mod:`affidavit.verify.dsse.crosscheck`).

Verified only when every step is ``ok``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.codes import FAILED
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.dsse.crosscheck import cross_check_bundle
from affidavit.verify.dsse.envelope import parse_envelope
from affidavit.verify.dsse.statement import statement_of
from affidavit.verify.dsse.verify import check_threshold, verify_envelope
from affidavit.verify.results import Result, StepResult

__all__ = ["NO_BUNDLE", "check_envelope"]

NO_BUNDLE: Final[Any] = object()  # no bundle to cross-check: no cross_check step
_UNAUTHENTICATED: Final = (
    "the signatures did not verify: the payload is not authenticated, not read"
)


def check_envelope(
    data: bytes,
    trusted_keys: Sequence[Ed25519PublicKey],
    *,
    threshold: int = 1,
    bundle: Any = NO_BUNDLE,
    source: str | None = None,
) -> Result:
    """Verify the envelope ``data`` under ``trusted_keys`` (module docstring); an envelope too
    large or malformed is the verdict ``unreadable``. ``bundle`` (a parsed ProofPack bundle) adds
    the ``cross_check`` step.

    Raises:
        ``usage.invalid``: ``threshold`` is below 1 or above the distinct trusted keys.
        ``bundle.*``, ``statement.*`` (exit 2): ``bundle`` records no decision, or the
            Statement's predicate type cannot be cross-checked.
    """
    check_threshold(threshold, len(set(trusted_keys)))
    subject: dict[str, Any] = {
        "payload_type": None,
        "threshold": threshold,
        "trusted_keys": len(trusted_keys),
        "signatures": [],
        "keys_verified": [],
        "statement": None,
    }
    try:
        envelope = parse_envelope(data)
    except (errors.EnvelopeError, errors.ParseError) as e:
        return Result("dsse", source, (StepResult.unreadable("envelope", e),), subject)
    subject["payload_type"] = envelope.payload_type
    steps = [StepResult.ok("envelope", signatures=len(envelope.signatures))]
    # 2. signatures: the threshold of distinct trusted keys (DSSE protocol.md).
    verification = verify_envelope(envelope, trusted_keys, threshold=threshold)
    subject["signatures"] = [
        {"index": c.index, "keyid": c.keyid, "verified_by": [k.b64 for k in c.verified_by]}
        for c in verification.signatures
    ]
    subject["keys_verified"] = [key.b64 for key in verification.keys_verified]
    counted = len(verification.keys_verified)
    if verification.error is not None:
        steps.append(StepResult.failed("signatures", verification.error))
    else:
        summary = f"{counted} distinct trusted key(s) verified, threshold {threshold}"
        details = {"threshold": threshold, "verified_keys": counted}
        steps.append(StepResult("signatures", "ok", message=summary, details=details))
    # 3. statement: only an authenticated payload is read.
    statement = None
    if not verification.met:
        steps.append(StepResult.not_checked("statement", _UNAUTHENTICATED))
    else:
        try:
            statement = statement_of(envelope)
        except errors.EnvelopeError as e:
            steps.append(StepResult.failed("statement", e))
        else:
            subject["statement"] = {
                "predicate_type": statement.predicate_type,
                "subjects": [
                    {"name": s.name, "digest": dict(s.digest)} for s in statement.subjects
                ],
            }
            steps.append(StepResult.ok("statement", predicate_type=statement.predicate_type))
    # 4. cross_check: asked for with a bundle.
    if bundle is not NO_BUNDLE:
        steps.append(_cross_check(statement, bundle))
    return Result("dsse", source, tuple(steps), subject)


def _cross_check(statement: Any, bundle: Any) -> StepResult:
    if statement is None:
        reason = "the Statement was not read: nothing to cross-check"
        return StepResult.not_checked("cross_check", reason)
    try:
        cross_check_bundle(statement, bundle)
    except (errors.EnvelopeError, errors.BundleError) as e:
        if e.exit_code != FAILED:  # a bundle that is no decision bundle: bad input, exit 2
            raise
        return StepResult.failed("cross_check", e)
    return StepResult.ok("cross_check")
