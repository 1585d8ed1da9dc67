"""The textual forms of hashes and times (verify/json/forms.py): one definition each."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from affidavit.verify.json import forms

from tests.conftest import ROOT

HASH = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("value", "lower", "any_case"),
    [
        (HASH, True, True),
        (HASH.upper(), False, True),
        (HASH + "\n", False, False),  # the anchor: no trailing newline, whatever the method
        (HASH[:-1], False, False),
        (HASH + "0", False, False),
        (HASH[:-1] + "g", False, False),
        ("\uff10" * 64, False, False),  # fullwidth digits are not hex
        (None, False, False),
        (b"0" * 64, False, False),
    ],
)
def test_is_hex64(value: object, lower: bool, any_case: bool) -> None:
    assert forms.is_hex64(value) is lower
    assert forms.is_hex64(value, any_case=True) is any_case


def test_hex64_pattern_is_anchored_for_every_method() -> None:
    assert forms.HEX64.match(HASH + "\n") is None
    assert forms.HEX64.search("x" + HASH) is None
    assert re.fullmatch(f"{forms.HEX64_PATTERN},{forms.HEX64_PATTERN}", f"{HASH},{HASH}")


def test_format_utc() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)
    assert forms.format_utc(moment) == "2026-03-04T05:06:07Z"
    assert forms.format_utc(moment.astimezone(timezone(timedelta(hours=2)))) == (
        "2026-03-04T05:06:07Z"
    )
    assert forms.format_utc_fraction(moment) == "2026-03-04T05:06:07.89Z"
    assert forms.format_utc_fraction(moment.replace(microsecond=0)) == "2026-03-04T05:06:07Z"


@pytest.mark.parametrize(
    ("text", "seconds", "fraction"),
    [
        ("2026-03-04T05:06:07Z", True, True),
        ("2026-03-04T05:06:07.5Z", False, True),
        ("2026-03-04T05:06:07.123456Z", False, True),
        ("2026-03-04T05:06:07.1234567Z", False, False),
        ("2026-3-4T05:06:07Z", False, False),  # not zero-padded (strptime took it)
        ("2026-02-30T00:00:00Z", False, False),  # no such day
        ("2026-03-04T24:00:00Z", False, False),
        ("2026-03-04T05:06:07+00:00", False, False),
        ("2026-03-04t05:06:07z", False, False),
        ("2026-03-04T05:06:07Z\n", False, False),
        ("\uff12026-03-04T05:06:07Z", False, False),
        (20260304, False, False),
    ],
)
def test_parse_utc(text: object, seconds: bool, fraction: bool) -> None:
    assert (forms.parse_utc(text) is not None) is seconds
    assert (forms.parse_utc(text, fraction=True) is not None) is fraction


def test_parse_utc_round_trips() -> None:
    moment = forms.parse_utc("2026-03-04T05:06:07.25Z", fraction=True)
    assert moment == datetime(2026, 3, 4, 5, 6, 7, 250000, tzinfo=UTC)
    assert moment is not None
    assert forms.format_utc_fraction(moment) == "2026-03-04T05:06:07.25Z"
    assert forms.parse_utc(forms.format_utc(moment)) == moment.replace(microsecond=0)


def test_one_definition_of_each_form() -> None:
    """No other module of the library spells the hex64 pattern or the timestamp format."""
    spelled = re.compile(r"\[(?:0-9a-f|a-f0-9)\]\{64\}|%Y-%m-%dT%H:%M:%S")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in ("verify", "attest", "cli", "registry")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "verify" / "json" / "forms.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if spelled.search(line)
    ]
    assert found == []
