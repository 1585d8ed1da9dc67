"""Verifying one DSSE envelope (``affidavit verify dsse``; docs/formats.md §8) as the one
:class:`~affidavit.verify.results.Result`, verified only when every step is ``ok``: ``envelope``
(strict parse, else unreadable), ``signatures`` (the threshold of distinct trusted keys),
``statement`` (read only once authenticated) and, with a bundle, ``cross_check``.

Every signature is tried under every trusted Ed25519 key (protocol.md: "KEYID ... MUST NOT be used
for security decisions"); a key counts once. A threshold below 1 or above the distinct trusted
keys is a usage error. The cross-check rebuilds subject and predicate from the bundle
(:mod:`affidavit.verify.dsse.predicates`) against its *recomputed* ``bundle_hash``.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.codes import FAILED
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.dsse import predicates
from affidavit.verify.dsse.envelope import Envelope, parse_envelope
from affidavit.verify.dsse.statement import Statement, statement_of
from affidavit.verify.results import Result, StepResult

__all__ = [
    "CROSS_CHECKABLE",
    "NO_BUNDLE",
    "DsseVerification",
    "SignatureCheck",
    "check_envelope",
    "check_threshold",
    "cross_check_bundle",
    "verify_envelope",
]

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


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """One envelope signature: its index, its (unauthenticated) keyid, and the trusted keys it
    verifies under (empty: under none)."""

    index: int
    keyid: str
    verified_by: tuple[Ed25519PublicKey, ...]


@dataclass(frozen=True, slots=True)
class DsseVerification:
    """The signatures of one envelope checked against the trusted keys, and the threshold."""

    signatures: tuple[SignatureCheck, ...]
    keys_verified: tuple[Ed25519PublicKey, ...]  # distinct, in trusted-key order
    threshold: int
    trusted_key_count: int

    @property
    def met(self) -> bool:
        return len(self.keys_verified) >= self.threshold

    @property
    def error(self) -> errors.EnvelopeError | None:
        """Why the envelope does not verify (None when the threshold is met):
        ``dsse.signature_unverified`` (no trusted key) or ``dsse.threshold_not_met`` (too few)."""
        if self.met:
            return None
        details = {"threshold": self.threshold, "verified_keys": len(self.keys_verified)}
        if not self.keys_verified:
            return errors.EnvelopeError(
                "dsse.signature_unverified",
                f"none of the {len(self.signatures)} signature(s) verifies under any of the "
                f"{self.trusted_key_count} trusted key(s) over PAE(payloadType, payload)",
                details=details,
            )
        return errors.EnvelopeError(
            "dsse.threshold_not_met",
            f"signatures verify under {len(self.keys_verified)} distinct trusted key(s), "
            f"the threshold is {self.threshold}",
            details=details,
        )


def verify_envelope(
    envelope: Envelope, trusted_keys: Iterable[Ed25519PublicKey], *, threshold: int = 1
) -> DsseVerification:
    """Check every signature of ``envelope`` under every key of ``trusted_keys`` (module
    docstring); :attr:`DsseVerification.error` says whether the threshold is met.

    Raises:
        ``usage.invalid``: ``threshold`` is below 1 or above the number of distinct trusted keys.
    """
    keys = tuple(dict.fromkeys(trusted_keys))  # distinct, order kept (Ed25519PublicKey hashes)
    check_threshold(threshold, len(keys))
    message = envelope.signed_bytes()
    checks: list[SignatureCheck] = []
    verified: set[Ed25519PublicKey] = set()
    for index, signature in enumerate(envelope.signatures):
        under = tuple(key for key in keys if _verifies(key, message, signature.sig))
        verified.update(under)
        checks.append(SignatureCheck(index, signature.keyid, under))
    return DsseVerification(
        signatures=tuple(checks),
        keys_verified=tuple(key for key in keys if key in verified),
        threshold=threshold,
        trusted_key_count=len(keys),
    )


def check_threshold(threshold: int, distinct_keys: int) -> None:
    """Refuse a threshold that is not an integer from 1 to ``distinct_keys`` (module docstring).

    Raises:
        ``usage.invalid``: below 1, or above the number of distinct trusted keys.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise errors.UsageError(f"the threshold must be an integer of at least 1, got {threshold}")
    if threshold > distinct_keys:
        raise errors.UsageError(
            f"the threshold {threshold} is more than the {distinct_keys} distinct trusted "
            "key(s): it could never be met"
        )


def _verifies(key: Ed25519PublicKey, message: bytes, signature: bytes) -> bool:
    # A signature of another length or algorithm may be for a key of another kind (DSSE
    # envelope.md "Multiple signatures"): it simply does not verify.
    try:
        verify_ed25519(key, message, signature)
    except errors.SignatureError:
        return False
    return True


# The predicate types a --bundle can be cross-checked against.
CROSS_CHECKABLE: Final = frozenset({predicates.DECISION_V1})


def cross_check_bundle(statement: Statement, bundle: Any) -> None:
    """Check a ``DECISION_V1`` ``statement`` against the parsed ``bundle``: its one subject and
    its predicate are the ones :mod:`~affidavit.verify.dsse.predicates` rebuilds, as JSON values.

    Raises:
        ``usage.invalid``: the predicate type cannot be cross-checked against a bundle.
        ``bundle.malformed``: ``bundle`` is not an object with a string ``deal_id`` and
            ``bundle_hash``.
        ``predicate.decision_missing``: the bundle records no decision (exit 2: not a source a
            decision Statement can be about).
        ``canonical.*``: the bundle has no canonical form (it cannot be hashed).
        ``statement.subject_mismatch``, ``statement.predicate_mismatch``: it does not match.
        ``bundle.hash_mismatch``: the subject is the bundle's content, but the bundle's recorded
            ``bundle_hash`` is not (exit 1).
    """
    if statement.predicate_type not in CROSS_CHECKABLE:
        raise errors.UsageError(
            f"a Statement of predicateType {statement.predicate_type!r} cannot be cross-checked "
            f"against a bundle (only {', '.join(sorted(CROSS_CHECKABLE))})"
        )
    recomputed = predicates.bundle_subject(bundle)["digest"]["sha256"]
    if len(statement.subjects) != 1:
        raise _subject_mismatch(
            f"a decision Statement has exactly one subject, this one has {len(statement.subjects)}"
        )
    subject = statement.subjects[0]
    actual = subject.digest.get("sha256")
    if actual is None or not hmac.compare_digest(actual, recomputed):
        raise _subject_mismatch(
            "subject digest sha256 is not the bundle's recomputed bundle_hash",
            expected=recomputed,
            actual=actual,
        )
    if subject.name != bundle["deal_id"]:
        raise _subject_mismatch(
            "subject name is not the bundle's deal_id",
            expected=bundle["deal_id"],
            actual=subject.name,
        )
    expected_subject = predicates.subject_for_bundle(bundle)
    if not _same_json(statement.document["subject"][0], expected_subject):
        raise _subject_mismatch(
            "the subject is not the one the bundle gives (another digest or field)",
            expected=expected_subject,
            actual=statement.document["subject"][0],
        )
    expected_predicate = predicates.decision_predicate(bundle)
    if not _same_json(statement.predicate, expected_predicate):
        raise errors.EnvelopeError(
            "statement.predicate_mismatch",
            "the predicate is not the one rebuilt from the bundle",
            details={"differs_at": _first_difference(statement.predicate, expected_predicate)},
        )


def _subject_mismatch(
    message: str, *, expected: Any = None, actual: Any = None
) -> errors.EnvelopeError:
    details = {k: v for k, v in (("expected", expected), ("actual", actual)) if v is not None}
    return errors.EnvelopeError("statement.subject_mismatch", message, details=details)


def _same_json(left: Any, right: Any) -> bool:
    """Equality as JSON values: ``True`` is not ``1``, ``1.0`` is ``1`` (one JSON number)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(_same_json(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(map(_same_json, left, right))
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return type(left) is type(right) and left == right


def _first_difference(left: Any, right: Any, path: str = "predicate") -> str:
    # The JSON path of the first difference (never a value: a predicate may be large).
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        for key in sorted(set(left) | set(right)):
            if key not in left or key not in right or not _same_json(left[key], right[key]):
                if key in left and key in right:
                    return _first_difference(left[key], right[key], f"{path}.{key}")
                return f"{path}.{key}"
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            if not _same_json(a, b):
                return _first_difference(a, b, f"{path}[{index}]")
    return path
