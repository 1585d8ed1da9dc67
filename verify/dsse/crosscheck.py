"""Cross-check a Statement of one of Affidavit's predicate types against its source.

A signature proves who said something; the cross-check proves *what* was said is a faithful
summary of the source the reader holds. The predicate builders are pure
(:mod:`affidavit.verify.dsse.predicates`), so the verifier rebuilds from the source and compares;
nothing in the Statement is taken on trust.

For ``DECISION_V1`` (the source is a ProofPack bundle, ``verify dsse --bundle``):

1. exactly one subject (``statement.subject_mismatch`` otherwise);
2. its ``digest.sha256`` equals the bundle's ``bundle_hash`` *recomputed* from the bundle's content
   (:func:`affidavit.verify.bundles.hashing.bundle_hash`, docs/formats.md §4), never the hash the
   bundle records;
3. its ``name`` equals the bundle's ``deal_id``;
4. the whole subject equals :func:`~affidavit.verify.dsse.predicates.subject_for_bundle` (no
   other digest or field the builder would not write); that builder also refuses a bundle whose
   *recorded* ``bundle_hash`` is not its recomputed one (``bundle.hash_mismatch``, exit 1): a
   bundle inconsistent with itself is no source to vouch for a Statement;
5. ``predicate`` equals :func:`~affidavit.verify.dsse.predicates.decision_predicate` of the bundle,
   as JSON values (``statement.predicate_mismatch``).

The cross-check says the Statement is about this bundle; whether the bundle itself is anchored
and signed is ``verify bundle``'s question. A predicate type with no rebuild here
(:data:`CROSS_CHECKABLE`) is a usage error: the caller asked for a check that cannot be made.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.dsse import predicates
from affidavit.verify.dsse.statement import Statement

__all__ = ["CROSS_CHECKABLE", "cross_check_bundle"]

# The predicate types a --bundle can be cross-checked against.
CROSS_CHECKABLE: Final = frozenset({predicates.DECISION_V1})


def cross_check_bundle(statement: Statement, bundle: Any) -> None:
    """Check ``statement`` (a ``DECISION_V1`` Statement) against ``bundle``, the parsed bundle
    JSON (module docstring). Returns None when it matches.

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
    if not isinstance(bundle, Mapping) or not isinstance(bundle.get("deal_id"), str):
        raise errors.BundleError(
            "bundle.malformed", "the bundle is not a JSON object with a string deal_id"
        )
    recomputed = bundle_hash(bundle)
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
    details: dict[str, Any] = {}
    if expected is not None:
        details["expected"] = expected
    if actual is not None:
        details["actual"] = actual
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
    """The JSON path of the first place ``left`` (the Statement's) and ``right`` (rebuilt)
    differ, for the message (never a value: a predicate may be large)."""
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
