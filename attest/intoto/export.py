"""The Statement of an Affidavit artefact: which kind it is, and its subject and predicate.

Three kinds (docs/formats.md §3-§5), told apart by shape when the caller does not say: a stamped
``bundle``, a manifest ``entry`` (or the ``adapter attest`` document), a facts ``audit`` report.
A document that fits none or several is refused: guessing would attest the wrong thing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from affidavit.attest.intoto.sign import build_statement
from affidavit.verify import errors
from affidavit.verify.dsse import predicates

__all__ = ["KINDS", "detect_kind", "statement_for"]


def _bundle(source: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return [predicates.subject_for_bundle(source)], predicates.decision_predicate(source)


def _entry(source: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return [predicates.subject_for_entry(source)], predicates.entry_predicate(source)


def _audit(source: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return predicates.subject_for_audit(source), predicates.audit_predicate(source)


_Build = Callable[[Any], tuple[list[dict[str, Any]], dict[str, Any]]]
# kind -> (predicate type, builder of (subjects, predicate))
_KINDS: Final[dict[str, tuple[str, _Build]]] = {
    "bundle": (predicates.DECISION_V1, _bundle),
    "entry": (predicates.MANIFEST_ENTRY_V1, _entry),
    "audit": (predicates.FACT_AUDIT_V1, _audit),
}
KINDS: Final = tuple(_KINDS)


def detect_kind(source: Any) -> str:
    """``bundle``, ``entry`` or ``audit`` by shape (module docstring).

    Raises:
        ``predicate.kind_unknown``: no kind fits. ``predicate.kind_ambiguous``: several do.
    """
    fits: list[str] = []
    if isinstance(source, Mapping):
        keys = source.keys()
        if {"deal_id", "events", "bundle_hash"} <= keys:
            fits.append("bundle")
        nested = isinstance(source.get("entry"), Mapping) and "entry_hash" in keys
        if {"adapter_id", "entry_hash"} <= keys or nested:
            fits.append("entry")
        if {"ok", "facts", "findings", "info"} <= keys:
            fits.append("audit")
    if not fits:
        raise errors.EnvelopeError(
            "predicate.kind_unknown",
            "the source is not a stamped bundle, a signed manifest entry or a facts audit report",
        )
    if len(fits) > 1:
        raise errors.EnvelopeError(
            "predicate.kind_ambiguous",
            f"the source has the shape of {' and '.join(fits)}: name one with --kind",
            details={"kinds": fits},
        )
    return fits[0]


def statement_for(source: Any, kind: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(kind, Statement)`` of ``source``, of the kind given or detected.

    Raises:
        ``usage.invalid``: an unknown ``kind``. ``predicate.*``, ``bundle.*``, ``entry.*``: as
        :func:`detect_kind` and the builders.
    """
    if kind is None:
        kind = detect_kind(source)
    if kind not in _KINDS:
        raise errors.UsageError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    predicate_type, build = _KINDS[kind]
    subjects, predicate = build(source)
    return kind, build_statement(subjects, predicate_type, predicate)
