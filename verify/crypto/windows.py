"""Validity windows of trusted tree-head keys: when a log key may have signed a head.

>>> window = KeyWindow.parse({"valid_until": "2026-01-01T01:00:00+01:00"}, source="k.json")
>>> window.contains(parse_rfc3339("2025-12-31T23:59:59Z")), window.contains(
...     parse_rfc3339("2026-01-01T00:30:00Z"))
(True, False)

A trusted key document (:mod:`affidavit.verify.crypto.trusted_keys`) may bound its key with
``valid_from``/``valid_until`` (docs/formats.md §4 "Key validity windows", docs/adr/0011): a
half-open window, each bound an RFC 3339 ``date-time`` with a mandatory offset, compared as an
instant. A fraction beyond six digits rounds *up* to the microsecond, exact for times on the
microsecond grid: ``t < x`` exactly when ``t < ceil(x)``. A malformed or empty window is
``key.window_invalid`` (exit 2); a tree head dated outside every window of the key that verified
it, ``treehead.key_outside_window`` (exit 1). On the ``verify bundle`` path (docs/adr/0003).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.json.forms import format_utc_fraction, parse_utc

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "WINDOW_FIELDS",
    "KeyWindow",
    "check_head_time",
    "format_window",
    "merge_windows",
    "parse_rfc3339",
]

WINDOW_FIELDS: Final = ("valid_from", "valid_until")
# RFC 3339 §5.6: full-date "T" full-time, time-offset mandatory ("Z" / ("+" / "-") hh ":" mm).
# The ABNF is case-insensitive, so "t" and "z" are the same characters.
_RFC3339: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)


def parse_rfc3339(text: object) -> datetime | None:
    """An RFC 3339 ``date-time`` with its offset as an aware datetime; None for anything else
    (no offset, a space for ``T``, non-ASCII digits, an impossible date, ``:60``, an offset
    minute above 59)."""
    if not isinstance(text, str):
        return None
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    from datetime import datetime, timedelta, timezone  # noqa: PLC0415 - lazy (cold start)

    date, clock, fraction, zulu, sign, hours, minutes = match.groups()
    if zulu is None and (int(hours) > 23 or int(minutes) > 59):
        return None
    try:
        moment = datetime.fromisoformat(f"{date}T{clock}")
    except ValueError:  # month 13, February 30, second 60...
        return None
    if fraction:
        micros = int(fraction[:6].ljust(6, "0"))
        moment = moment.replace(microsecond=micros)
        if fraction[6:].strip("0"):  # round up past the microsecond grid (module docstring)
            moment += timedelta(microseconds=1)
    offset = timedelta(0)
    if zulu is None:
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        if sign == "-":
            offset = -offset
    return moment.replace(tzinfo=timezone(offset))


class KeyWindow(NamedTuple):
    """``valid_from <= t < valid_until``; a None bound is unbounded on that side."""

    valid_from: datetime | None = None
    valid_until: datetime | None = None

    @classmethod
    def parse(cls, document: Mapping[str, Any], *, source: str | None = None) -> KeyWindow | None:
        """The window a key document names, or None when it names neither bound.

        Raises:
            ``key.window_invalid``: a bound is not an RFC 3339 date-time with an offset (or
                null), or the window is empty.
        """
        if not any(name in document for name in WINDOW_FIELDS):
            return None
        where = f"{source}: " if source else ""
        bounds: list[datetime | None] = []
        for name in WINDOW_FIELDS:
            value = document.get(name)
            moment = None if value is None else parse_rfc3339(value)
            if value is not None and moment is None:
                raise errors.KeyMaterialError(
                    "key.window_invalid",
                    f"{where}{name} must be an RFC 3339 date-time with an offset (Z or +hh:mm), "
                    f"e.g. 2026-01-01T00:00:00Z, or null; got {value!r}",
                    details={"field": name},
                )
            bounds.append(moment)
        start, end = bounds
        if start is not None and end is not None and start >= end:
            raise errors.KeyMaterialError(
                "key.window_invalid",
                f"{where}valid_from ({document['valid_from']}) is not before valid_until "
                f"({document['valid_until']}): the key would be valid at no time",
                details={"field": "valid_until"},
            )
        return cls(start, end)

    def contains(self, moment: datetime) -> bool:
        """``valid_from <= moment < valid_until`` (as instants)."""
        if self.valid_from is not None and moment < self.valid_from:
            return False
        return self.valid_until is None or moment < self.valid_until


def format_window(window: KeyWindow) -> str:
    """``[from, until)`` in UTC, ``-inf``/``+inf`` for an open side (for messages)."""
    start = "-inf" if window.valid_from is None else format_utc_fraction(window.valid_from)
    end = "+inf" if window.valid_until is None else format_utc_fraction(window.valid_until)
    return f"[{start}, {end})"


def check_head_time(
    windows: Sequence[KeyWindow],
    timestamp: str,
    *,
    key_b64: str,
    log_id: str,
    tree_size: int,
) -> None:
    """Refuse a tree head dated (``timestamp``, docs/formats.md §4) outside every one of the
    ``windows`` of the key that verified it; no windows, nothing to check.

    Raises:
        ``treehead.malformed``: the timestamp is not a real UTC time (exit 2).
        ``treehead.key_outside_window``: it lies outside every window (exit 1).
    """
    if not windows:
        return
    moment = parse_utc(timestamp)
    if moment is None:
        raise errors.SignatureError(
            "treehead.malformed", f"tree-head timestamp {timestamp!r} is not a real UTC time"
        )
    if any(window.contains(moment) for window in windows):
        return
    spans = ", ".join(format_window(window) for window in windows)
    raise errors.SignatureError(
        "treehead.key_outside_window",
        f"the tree head of {log_id!r} at size {tree_size} is dated {timestamp}, outside the "
        f"validity window {spans} of the trusted key {key_b64} that signed it",
        details={"log_id": log_id, "tree_size": tree_size, "timestamp": timestamp},
    )


def merge_windows(
    entries: Iterable[tuple[bytes, KeyWindow | None]],
) -> dict[bytes, tuple[KeyWindow, ...]]:
    """``{raw key: windows}`` from (raw key, window) pairs; a key listed once without a window
    is trusted at every time and gets no entry."""
    windows: dict[bytes, list[KeyWindow]] = {}
    unbounded: set[bytes] = set()
    for raw, window in entries:
        if window is None:
            unbounded.add(raw)
        else:
            windows.setdefault(raw, []).append(window)
    return {raw: tuple(found) for raw, found in windows.items() if raw not in unbounded}
