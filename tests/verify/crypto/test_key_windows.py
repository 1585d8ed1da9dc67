"""Validity windows on trusted keys (verify/crypto/windows.py, docs/adr/0011): RFC 3339 with a
mandatory offset, compared as times; a tree head dated outside its signer's window is refused."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.crypto import trusted_keys
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.crypto.windows import KeyWindow, check_head_time, merge_windows, parse_rfc3339
from affidavit.verify.trust import KeyFile, TrustRoot

from tests.conftest import raises_code
from tests.verify.bundles.test_bundle_support import LOG_KEY, OUTPUTS, stamp

KEY = derive_test_key("TEST-ONLY key windows")
OTHER = derive_test_key("TEST-ONLY key windows, other")
UTC = dt.UTC
MIDNIGHT = dt.datetime(2026, 1, 1, tzinfo=UTC)


def _sth(timestamp: str, key: Any = KEY) -> dict[str, Any]:
    message = f"windows.test|7|{'ab' * 32}|{timestamp}".encode()
    return {
        "log_id": "windows.test",
        "tree_size": 7,
        "root_hash": "ab" * 32,
        "timestamp": timestamp,
        "signature": key.sign_b64(message),
        "key_id": "k",
    }


def _doc(**window: object) -> bytes:
    return json.dumps({"public_key_base64": KEY.public_key.b64, **window}).encode()


def _window(**fields: object) -> KeyWindow:
    window = KeyWindow.parse(fields)
    assert window is not None
    return window


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T00:00:00Z", MIDNIGHT),
        ("2026-01-01t00:00:00z", MIDNIGHT),  # RFC 3339 §5.6: T and Z are case-insensitive
        ("2026-01-01T01:00:00+01:00", MIDNIGHT),
        ("2025-12-31T19:00:00-05:00", MIDNIGHT),
        ("2026-01-01T00:00:00-00:00", MIDNIGHT),  # RFC 3339 §4.3: UTC, local offset unknown
        ("2026-01-01T00:00:00.5Z", MIDNIGHT + dt.timedelta(milliseconds=500)),
        ("2026-01-01T00:00:00.000000Z", MIDNIGHT),
        # beyond the microsecond: rounded up (exact for times on the microsecond grid)
        ("2026-01-01T00:00:00.0000001Z", MIDNIGHT + dt.timedelta(microseconds=1)),
        ("2026-01-01T00:00:00.0000010Z", MIDNIGHT + dt.timedelta(microseconds=1)),
    ],
)
def test_rfc3339_times_are_instants(text: str, expected: dt.datetime) -> None:
    assert parse_rfc3339(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:00:00",  # no offset: a local time is not an instant
        "2026-01-01 00:00:00Z",  # a space for T
        "2026-01-01T00:00Z",  # no seconds
        "2026-01-01T00:00:00+0100",  # offset without a colon (ISO 8601 basic)
        "2026-01-01T00:00:00+01",
        "2026-01-01T00:00:00+24:00",
        "2026-01-01T00:00:00+01:60",
        "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-12-31T23:59:60Z",  # a leap second: not representable, refused
        "20260101T000000Z",
        "2026-W01-1T00:00:00Z",
        "٢٠٢٦-01-01T00:00:00Z",  # non-ASCII digits
        "2026-01-01T00:00:00.Z",
        " 2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z\n",
        "",
        None,
        20260101,
    ],
)
def test_malformed_times_are_refused(text: object) -> None:
    assert parse_rfc3339(text) is None


def test_windows_are_half_open_and_compare_as_times() -> None:
    window = _window(valid_from="2026-01-01T01:00:00+01:00", valid_until="2026-02-01T00:00:00Z")
    assert window.valid_from == MIDNIGHT
    assert window.contains(MIDNIGHT)  # from: included
    assert not window.contains(MIDNIGHT - dt.timedelta(microseconds=1))
    assert not window.contains(dt.datetime(2026, 2, 1, tzinfo=UTC))  # until: excluded
    assert window.contains(dt.datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC))
    assert _window(valid_from=None, valid_until=None) == KeyWindow(None, None)


def test_sub_microsecond_bounds_stay_exact_for_whole_seconds() -> None:
    late_start = _window(valid_from="2026-01-01T00:00:00.0000001Z")
    assert not late_start.contains(MIDNIGHT)  # truncating would let midnight in
    late_end = _window(valid_until="2026-01-01T00:00:00.0000001Z")
    assert late_end.contains(MIDNIGHT)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"valid_from": "2026-01-01T00:00:00"}, "valid_from"),  # no offset
        ({"valid_until": "2026-01-01"}, "valid_until"),
        ({"valid_from": 1767225600}, "valid_from"),
        ({"valid_until": True}, "valid_until"),
        ({"valid_from": ""}, "valid_from"),
        (
            {"valid_from": "2026-01-01T00:00:00Z", "valid_until": "2026-01-01T01:00:00+01:00"},
            "valid_until",
        ),  # empty: equal instants
        (
            {"valid_from": "2026-02-01T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"},
            "valid_until",
        ),
    ],
)
def test_malformed_windows_are_refused_with_exit_2(fields: dict[str, Any], field: str) -> None:
    with raises_code("key.window_invalid") as caught:
        trusted_keys.parse_key_bytes(_doc(**fields), source="k.json", windows=True)
    assert caught.value.exit_code == 2
    assert caught.value.details == {"field": field}
    assert caught.value.message.startswith("k.json: ")


def test_key_files_carry_their_window_only_when_asked() -> None:
    loaded = trusted_keys.parse_key_bytes(
        _doc(valid_until="2026-01-01T00:00:00Z"), source="k.json", windows=True
    )
    assert loaded.window == KeyWindow(None, MIDNIGHT)
    # A command that cannot check a window refuses the key rather than trust it at every time.
    with raises_code("key.window_unsupported"):
        trusted_keys.parse_key_bytes(_doc(valid_until="2026-01-01T00:00:00Z"), source="k.json")
    with raises_code("key.window_invalid"):  # malformed is malformed, asked or not
        trusted_keys.parse_key_bytes(_doc(valid_until="soon"), source="k.json")
    with raises_code("key.window_unsupported"):
        trusted_keys.key_from_document(json.loads(_doc(valid_from="2026-01-01T00:00:00Z")))
    plain = trusted_keys.parse_key_bytes(_doc(), source="k.json")  # no window: as before
    assert plain.window is None
    assert trusted_keys.parse_key_bytes(_doc(), source="k.json", windows=True).window is None


def test_folders_and_merging() -> None:
    files = [
        KeyFile("a.json", _doc(valid_until="2026-01-01T00:00:00Z")),
        KeyFile("b.json", _doc(valid_from="2026-06-01T00:00:00Z")),
        KeyFile("c.pub", OTHER.public_key.b64.encode()),
    ]
    with raises_code("key.window_unsupported"):
        TrustRoot.from_files(files)
    windows = TrustRoot.from_files(files, windows=True).windows
    assert windows == {
        KEY.public_key.raw: (KeyWindow(None, MIDNIGHT), KeyWindow(parse_rfc3339(
            "2026-06-01T00:00:00Z"), None)),
    }  # fmt: skip  # OTHER has no window: no entry
    files.append(KeyFile("d.pub", KEY.public_key.b64.encode()))  # KEY also without a window
    assert trusted_keys.key_windows(TrustRoot.from_files(files, windows=True).keys) == {}


def test_verify_sth_refuses_a_head_outside_the_window() -> None:
    window = _window(valid_until="2026-01-01T01:00:00+01:00")  # midnight UTC
    verify_sth(_sth("2025-12-31T23:59:59Z"), KEY.public_key, windows=[window])
    # As text "2026-01-01T00:30:00Z" < "2026-01-01T01:00:00+01:00": a string compare would let
    # this head through; as times it is half an hour after the window closed.
    late, bound = "2026-01-01T00:30:00Z", "2026-01-01T01:00:00+01:00"
    assert late < bound
    with raises_code("treehead.key_outside_window") as caught:
        verify_sth(_sth("2026-01-01T00:30:00Z"), KEY.public_key, windows=[window])
    assert caught.value.exit_code == 1
    assert "[-inf, 2026-01-01T00:00:00Z)" in caught.value.message
    with raises_code("treehead.key_outside_window"):
        verify_sth(_sth("2026-01-01T00:00:00Z"), KEY.public_key, windows=[window])  # until: out
    # The other way round: a string compare would refuse this head; as times it is inside.
    opened = _window(valid_from="2026-01-01T01:00:00+02:00")  # 2025-12-31T23:00Z
    early, start = "2025-12-31T23:30:00Z", "2026-01-01T01:00:00+02:00"
    assert early < start
    verify_sth(_sth("2025-12-31T23:30:00Z"), KEY.public_key, windows=[opened])
    verify_sth(_sth("2030-01-01T00:00:00Z"), KEY.public_key)  # no window: as before
    with raises_code("treehead.signature_bad"):  # the signature is checked first
        verify_sth(_sth("2025-12-31T23:59:59Z", OTHER), KEY.public_key, windows=[window])


def test_an_impossible_head_time_is_malformed_under_a_window() -> None:
    with raises_code("treehead.malformed"):
        check_head_time(
            [KeyWindow(None, MIDNIGHT)], "2025-02-30T00:00:00Z", key_b64="k", log_id="l",
            tree_size=1,
        )  # fmt: skip


def _bundle_windows(**fields: str) -> dict[bytes, tuple[KeyWindow, ...]]:
    window = KeyWindow.parse(fields)
    assert window is not None
    return {LOG_KEY.public_key.raw: (window,)}


def test_bundle_verifier_applies_the_window_to_the_sth_step() -> None:
    bundle = stamp({"accepted": OUTPUTS["accepted"]})["accepted"]  # head: 2026-03-01T12:00:00Z
    assert bundle["signed_tree_head"]["timestamp"] == "2026-03-01T12:00:00Z"
    inside = BundleVerifier(
        [LOG_KEY.public_key], key_windows=_bundle_windows(valid_until="2026-03-01T13:00:01+01:00")
    )
    assert inside.verify(bundle).verdict == "verified"
    # 13:00+01:00 is 12:00Z, the head's own time: outside [.., 12:00Z). As strings the head's
    # "2026-03-01T12:00:00Z" sorts before "2026-03-01T13:00:00+01:00" and would pass.
    outside = BundleVerifier(
        [LOG_KEY.public_key], key_windows=_bundle_windows(valid_until="2026-03-01T13:00:00+01:00")
    )
    result = outside.verify(bundle)
    assert (result.verdict, result.code) == ("failed", "treehead.key_outside_window")
    step = next(s for s in result.steps if s.name == "sth_signature")
    assert (step.status, step.code) == ("failed", "treehead.key_outside_window")
    assert BundleVerifier([LOG_KEY.public_key]).verify(bundle).verdict == "verified"


# --- issue 36: what a mutation run of windows.py asks of these tests ----------------------------


def test_the_largest_offsets_are_times() -> None:
    # RFC 3339 §5.6: time-numoffset hours 00-23, minutes 00-59
    assert parse_rfc3339("2026-01-01T23:59:00+23:59") == MIDNIGHT
    assert parse_rfc3339("2025-12-31T00:00:00-23:59") == MIDNIGHT - dt.timedelta(minutes=1)
    assert parse_rfc3339("2026-01-01T00:00:00.999999Z") == MIDNIGHT + dt.timedelta(
        microseconds=999999
    )
    assert parse_rfc3339("2026-01-01T00:00:00.1234567Z") == MIDNIGHT + dt.timedelta(
        microseconds=123457
    )


def test_no_window_checks_nothing_not_even_the_time() -> None:
    check_head_time([], "not a time", key_b64="k", log_id="l", tree_size=1)  # returns


def test_a_head_outside_every_window_names_each_window() -> None:
    windows = [
        _window(valid_until="2026-01-01T00:00:00Z"),
        _window(valid_from="2026-03-01T00:00:00.5+01:00"),
    ]
    check_head_time(windows, "2025-12-31T23:59:59Z", key_b64="k", log_id="l", tree_size=3)
    check_head_time(windows, "2026-03-01T00:00:00Z", key_b64="k", log_id="l", tree_size=3)
    with raises_code("treehead.key_outside_window") as caught:
        check_head_time(windows, "2026-02-01T00:00:00Z", key_b64="KEY", log_id="l", tree_size=3)
    assert caught.value.details == {
        "log_id": "l",
        "tree_size": 3,
        "timestamp": "2026-02-01T00:00:00Z",
    }
    message = caught.value.message
    assert "[-inf, 2026-01-01T00:00:00Z), [2026-02-28T23:00:00.5Z, +inf)" in message
    assert "KEY" in message
    with raises_code("treehead.malformed") as malformed:
        check_head_time(windows, "2026-02-30T00:00:00Z", key_b64="k", log_id="l", tree_size=3)
    assert malformed.value.message


def test_a_window_without_a_source_says_which_field() -> None:
    for fields, field in (
        ({"valid_from": "soon"}, "valid_from"),
        (
            {"valid_from": "2026-02-01T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"},
            "valid_until",
        ),
    ):
        with raises_code("key.window_invalid") as caught:
            KeyWindow.parse(fields)
        assert caught.value.details == {"field": field}
        assert caught.value.message.startswith("valid_from")  # no "<source>: " before it
    assert KeyWindow.parse({"public_key_base64": "x"}) is None
    assert KeyWindow.parse({"valid_until": None}) == KeyWindow(None, None)


def test_merge_windows() -> None:
    early, late = (
        _window(valid_until="2026-01-01T00:00:00Z"),
        _window(valid_from="2026-06-01T00:00:00Z"),
    )
    merged = merge_windows([(b"a", early), (b"b", None), (b"a", late), (b"c", late), (b"c", None)])
    assert merged == {b"a": (early, late)}
