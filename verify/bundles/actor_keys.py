"""Actor key directories (docs/formats.md §4 "Key directory"): their two shapes, a key's validity
window and lifecycle status, and the trust labels ``caller_trusted`` / ``bundle_key_directory``
(docs/adr/0008-actor-keys-and-events-after-finality.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "TRUST_BUNDLE",
    "TRUST_CALLER",
    "directory_entries",
    "key_valid_at",
    "lifecycle_problem",
    "parse_instant",
]

TRUST_CALLER: Final = "caller_trusted"
TRUST_BUNDLE: Final = "bundle_key_directory"


def directory_entries(key_directory: Any) -> dict[str, Any] | None:
    """``{key_id: entry}`` from either directory shape: flat (3.0.0 ``key_directory[key_id]``) or
    ``{key_directory_version, keys_by_key_id}`` (sidecar). None when the value is not a mapping."""
    if not isinstance(key_directory, dict):
        return None
    nested = key_directory.get("keys_by_key_id")
    if isinstance(nested, dict):
        return nested
    if "keys_by_key_id" in key_directory:
        return None
    return key_directory


# RFC 3339 §5.6 date-time: full-date "T" full-time, with a zone (Z or a numeric offset). Python's
# fromisoformat alone also takes ISO 8601 forms RFC 3339 does not (basic format, week dates).
_RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})"
)


def parse_instant(text: Any) -> datetime | None:
    """An RFC 3339 date-time with a zone as an aware datetime, fractions beyond microseconds
    truncated; None for anything else. Instants are compared as times, never as strings."""
    if not isinstance(text, str) or not _RFC3339.fullmatch(text):
        return None
    from datetime import datetime  # noqa: PLC0415 - lazy (cold start, docs/adr/0003)

    body = text.upper()
    head, dot, rest = body.partition(".")
    if dot:  # keep at most six fraction digits: fromisoformat takes 1..6 on Python 3.11
        digits = len(rest) - len(rest.lstrip("0123456789"))
        body = f"{head}.{rest[: min(digits, 6)]}{rest[digits:]}"
    try:
        moment = datetime.fromisoformat(body.replace("Z", "+00:00"))
    except ValueError:  # e.g. month 13, second 61
        return None
    return moment


def key_valid_at(entry: Mapping[str, Any], when: str) -> bool:
    """``issued_at <= when < revoked_at`` (revoked_at null: no end). Times are RFC 3339 with a
    zone, compared as instants; anything unparseable is not valid (fail closed)."""
    moment, issued = parse_instant(when), parse_instant(entry.get("issued_at"))
    if moment is None or issued is None or moment < issued:
        return False
    revoked_text = entry.get("revoked_at")
    if revoked_text is None:
        return True
    revoked = parse_instant(revoked_text)
    return revoked is not None and moment < revoked


def lifecycle_problem(
    entry: Mapping[str, Any], key_id: str, *, status_required: bool
) -> errors.AffidavitError | None:
    """The key's ``status`` against its window (docs/formats.md §4 key directory): a status other
    than ``active`` needs a ``revoked_at`` (``event.key_lifecycle_malformed``); with
    ``status_required`` (a ``keys_by_key_id`` directory) it must be ``active``
    (``event.key_inactive``), elsewhere an absent status means active."""
    status = entry.get("status", None if status_required else "active")
    if status == "active":
        return None
    if entry.get("revoked_at") is None and "status" in entry:
        return errors.BundleError(
            "event.key_lifecycle_malformed",
            f"key {key_id!r} has status {status!r} and no revoked_at",
        )
    if status_required:
        return errors.BundleError(
            "event.key_inactive", f"key {key_id!r} has status {status!r}, not 'active'"
        )
    return None
