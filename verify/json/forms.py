"""The textual forms of hashes and times: one definition each, for every layer.

>>> is_hex64("ab" * 32), is_hex64("AB" * 32), is_hex64("AB" * 32, any_case=True)
(True, False, True)
>>> from datetime import datetime, timezone
>>> format_utc(datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=timezone.utc))
'2026-01-02T03:04:05Z'
>>> parse_utc("2026-01-02T03:04:05Z")
datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
>>> parse_utc("2026-1-2T03:04:05Z") is None
True

A hex64 is a SHA-256 digest as 64 lowercase hex characters (docs/formats.md, ``H(x)``); a UTC
timestamp is ``YYYY-MM-DDTHH:MM:SSZ`` (§4), with ``fraction=True`` also one to six fraction digits
(RFC 3161 genTime, freshness times). Parsing is strict: ASCII digits, zero-padded, zone ``Z``, a
real calendar date. On the ``verify bundle`` path (docs/adr/0003): :mod:`datetime` loads lazily.
"""

from __future__ import annotations

import hmac
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "HEX64",
    "HEX64_PATTERN",
    "UTC_TIMESTAMP",
    "UTC_TIMESTAMP_FORMAT",
    "UTC_TIMESTAMP_FRACTION",
    "format_utc",
    "format_utc_fraction",
    "is_hex64",
    "parse_utc",
    "same_digest",
]

HEX64_PATTERN: Final = "[0-9a-f]{64}"
HEX64: Final = re.compile(rf"\A{HEX64_PATTERN}\Z")
_HEX64_ANY_CASE: Final = re.compile(rf"\A{HEX64_PATTERN}\Z", re.IGNORECASE | re.ASCII)

UTC_TIMESTAMP_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"
_UTC_SECONDS: Final = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
UTC_TIMESTAMP: Final = re.compile(rf"\A{_UTC_SECONDS}Z\Z")
UTC_TIMESTAMP_FRACTION: Final = re.compile(rf"\A{_UTC_SECONDS}(?:\.[0-9]{{1,6}})?Z\Z")


def is_hex64(value: object, *, any_case: bool = False) -> bool:
    """``value`` is a string of 64 hex characters, lowercase unless ``any_case``."""
    if not isinstance(value, str):
        return False
    return (_HEX64_ANY_CASE if any_case else HEX64).fullmatch(value) is not None


def same_digest(recomputed: str, claimed: object) -> bool:
    """Whether ``claimed`` is exactly the text of the ``recomputed`` digest, in constant time; a
    claim of any other type or text is a different value, never an error (docs/formats.md §1)."""
    if not isinstance(claimed, str):
        return False
    return hmac.compare_digest(
        recomputed.encode("utf-8", "surrogatepass"), claimed.encode("utf-8", "surrogatepass")
    )


def format_utc(moment: datetime) -> str:
    """``moment`` (naive: local time) as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC, the fraction dropped."""
    from datetime import UTC  # noqa: PLC0415 - lazy (cold start)

    return moment.astimezone(UTC).strftime(UTC_TIMESTAMP_FORMAT)


def format_utc_fraction(moment: datetime) -> str:
    """``moment`` as ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` in UTC: the fraction kept, without
    trailing zeros (RFC 3161 §2.4.2 genTime in RFC 3339 form)."""
    from datetime import UTC  # noqa: PLC0415 - lazy (cold start)

    utc = moment.astimezone(UTC)
    text = utc.strftime(UTC_TIMESTAMP_FORMAT[:-1])
    if utc.microsecond:
        text += f".{utc.microsecond:06d}".rstrip("0")
    return text + "Z"


def parse_utc(text: object, *, fraction: bool = False) -> datetime | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (with ``fraction``, also ``...SS.ffffffZ``, one to six digits) as
    an aware UTC datetime; None for anything else, an impossible date or time included."""
    form = UTC_TIMESTAMP_FRACTION if fraction else UTC_TIMESTAMP
    if not isinstance(text, str) or not form.fullmatch(text):
        return None
    from datetime import UTC, datetime  # noqa: PLC0415 - lazy (cold start)

    try:
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    except ValueError:
        return None
