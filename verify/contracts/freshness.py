"""Manifest freshness: a signed statement of when the publisher signed a manifest (docs/formats.md
§3).

>>> from affidavit.verify.contracts.freshness import freshness_hash_body, parse_duration
>>> sorted(freshness_hash_body({"manifest_hash": "ab" * 32, "signed_at": "2025-01-01T00:00:00Z"}))
['freshness_schema_version', 'generated_at', 'manifest_hash', 'manifest_version', 'signed_at']
>>> parse_duration("36h").total_seconds()
129600.0

Three top-level fields the peer ignores bind a signed time to this exact ``manifest_hash``:
``signed_at``, ``freshness_hash`` (over :func:`freshness_hash_body`) and ``freshness_signature``
(Ed25519 over that hex string, base64, under the manifest's key); a gate compares the time with its
own clock (docs/adr/0007-pin-gate-freshness.md).
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.contracts.manifest import check_signature, manifest_hash
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json import forms
from affidavit.verify.json.canonical import py_compact, sha256_hex

__all__ = [
    "FRESHNESS_FIELDS",
    "FRESHNESS_SCHEMA_VERSION",
    "MAX_CLOCK_SKEW",
    "FreshnessReport",
    "check_freshness",
    "freshness_hash",
    "freshness_hash_body",
    "parse_duration",
]

FRESHNESS_SCHEMA_VERSION: Final = "1.0.0"
FRESHNESS_FIELDS: Final = ("manifest_hash", "manifest_version", "generated_at", "signed_at")
# A signed_at this far ahead of the gate's clock is tolerated (clock skew); further is refused.
MAX_CLOCK_SKEW: Final = datetime.timedelta(minutes=5)
_DURATION: Final = re.compile(r"([1-9][0-9]{0,6})([smhdw])")
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

FreshnessStatus = Literal["ok", "mismatch", "absent"]


def freshness_hash_body(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``freshness_hash`` covers (values as found, else "")."""
    body = {key: manifest.get(key, "") for key in FRESHNESS_FIELDS}
    return {"freshness_schema_version": FRESHNESS_SCHEMA_VERSION, **body}


def freshness_hash(manifest: Mapping[str, Any]) -> str:
    """Recompute ``freshness_hash`` from the manifest's own fields."""
    return sha256_hex(py_compact(freshness_hash_body(manifest)))


def parse_duration(text: str) -> datetime.timedelta:
    """``90s``, ``15m``, ``36h``, ``7d`` or ``2w`` (one positive number and one unit).

    Raises:
        ``usage.invalid``: anything else.
    """
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise errors.UsageError(
            f"not a duration: {text!r} (use a whole number and one of s, m, h, d, w: e.g. 36h)"
        )
    return datetime.timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


@dataclasses.dataclass(frozen=True, slots=True)
class FreshnessReport:
    """What was checked of a manifest's freshness statement. ``signed_at`` is set only when it is
    proven: its hash recomputes, covers the recomputed ``manifest_hash``, and its signature is
    ``ok`` under the trusted key."""

    hash_status: FreshnessStatus
    signature_status: str
    claimed_signed_at: str | None
    signed_at: datetime.datetime | None
    problem: str | None

    @property
    def proven(self) -> bool:
        """True when ``signed_at`` is proven under the trusted key."""
        return self.signed_at is not None

    def age_problem(self, max_age: datetime.timedelta, now: datetime.datetime) -> str | None:
        """Why the manifest is not fresh enough at ``now`` (None when it is)."""
        if self.signed_at is None:
            return self.problem or "the manifest carries no signed time (signed_at)"
        if self.signed_at - now > MAX_CLOCK_SKEW:
            return f"the manifest's signed_at {self.claimed_signed_at} is in the future"
        age = now - self.signed_at
        if age > max_age:
            return (
                f"the manifest was signed at {self.claimed_signed_at}, "
                f"{_human(age)} ago: older than the maximum age of {_human(max_age)}"
            )
        return None

    def to_json(self) -> dict[str, Any]:
        """JSON form for reports."""
        return {
            "freshness_hash_status": self.hash_status,
            "freshness_signature_status": self.signature_status,
            "signed_at": self.claimed_signed_at,
            "signed_at_proven": self.proven,
            "problem": self.problem,
        }


def _human(delta: datetime.timedelta) -> str:
    """A duration as people read it, its two largest units.

    >>> _human(datetime.timedelta(hours=36)), _human(datetime.timedelta(seconds=59))
    ('1 day 12 hours', '59 seconds')
    """
    seconds = max(0, int(delta.total_seconds()))
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}{'' if count == 1 else 's'}")
    return " ".join(parts[:2]) or "0 seconds"


def check_freshness(
    unverified_manifest: Mapping[str, Any], public_key: Ed25519PublicKey | None
) -> FreshnessReport:
    """Check the manifest's freshness statement under the caller's trusted key; never raises for
    a wrong value (``absent``, ``mismatch``, a ``bad`` signature: said in ``problem``)."""
    claimed_at = unverified_manifest.get("signed_at")
    claimed_text = claimed_at if isinstance(claimed_at, str) else None
    claimed = unverified_manifest.get("freshness_hash")
    signature = unverified_manifest.get("freshness_signature")
    if claimed is None:
        return FreshnessReport(
            "absent",
            check_signature(public_key, None, signature),
            claimed_text,
            None,
            "the manifest carries no freshness statement (signed_at, freshness_hash)",
        )
    recomputed = freshness_hash(unverified_manifest)
    status: FreshnessStatus = "ok" if claimed == recomputed else "mismatch"
    signature_status = check_signature(public_key, claimed, signature)
    problem: str | None = None
    when = forms.parse_utc(claimed_at, fraction=True)
    if status != "ok":
        problem = "freshness_hash mismatch (signed_at or the manifest fields were edited)"
    elif unverified_manifest.get("manifest_hash") != manifest_hash(unverified_manifest):
        problem = "the freshness statement covers a manifest_hash that does not recompute"
    elif signature_status != "ok":
        problem = f"freshness_signature {signature_status}"
    elif when is None:
        problem = f"signed_at {claimed_at!r} is not YYYY-MM-DDTHH:MM:SSZ"
    return FreshnessReport(
        status, signature_status, claimed_text, when if problem is None else None, problem
    )
