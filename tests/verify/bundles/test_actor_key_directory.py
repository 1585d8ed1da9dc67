"""A bundle's actor key directory and its keys' windows, judged on real signed bundles (issue 36).

docs/formats.md §4 "Key directory" (verify/bundles/actor_keys.py): the directory is flat
(``{key_id: entry}``) or nested (``{key_directory_version, keys_by_key_id}``); a
``keys_by_key_id`` that is not an object makes it neither (``bundle.sidecar_malformed``), never a
flat directory with one odd entry. A key is valid on ``[issued_at, revoked_at)``, times compared
as RFC 3339 instants; anything unparseable is not valid (fail closed).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.actor_keys import key_valid_at, parse_instant

from tests.verify.bundles.test_bundle_support import OUTPUTS, stamp, verifier


def _actor_step(bundle: dict[str, Any]) -> tuple[str, str, str | None]:
    result = verifier().verify(bundle)
    step = result.step("actor_signatures")
    assert step is not None, result.to_json()
    return result.verdict, step.status, step.code


@pytest.mark.parametrize("nested", [None, [], "keys", 7])
def test_a_keys_by_key_id_not_an_object_is_no_directory(
    signed: dict[str, Any], nested: Any
) -> None:
    assert _actor_step(signed) == ("verified", "self_asserted", None)
    bundle = copy.deepcopy(signed)
    bundle["key_directory"]["keys_by_key_id"] = nested  # outside bundle_hash
    assert _actor_step(bundle) == ("failed", "failed", "bundle.sidecar_malformed")


def _window(**changes: Any) -> Any:
    def change(bundle: dict[str, Any]) -> None:
        for entry in bundle["key_directory"].values():
            entry.update(changes)

    return change


# The events are dated 2026-03-01T12:00:00Z.
WINDOWS: list[tuple[str, Any, tuple[str, str, str | None]]] = [
    ("revoked_at not a time", _window(revoked_at="never"),
     ("failed", "failed", "event.key_not_valid")),
    ("revoked_at without a zone", _window(revoked_at="2027-01-01T00:00:00"),
     ("failed", "failed", "event.key_not_valid")),
    ("issued_at not a time", _window(issued_at="2026"),
     ("failed", "failed", "event.key_not_valid")),
    ("issued_at absent", lambda b: [e.pop("issued_at") for e in b["key_directory"].values()],
     ("failed", "failed", "event.key_not_valid")),
    ("revoked a microsecond after", _window(revoked_at="2026-03-01T12:00:00.000001Z"),
     ("verified", "self_asserted", None)),
    ("revoked at the event time, in nanoseconds",
     _window(revoked_at="2026-03-01T12:00:00.000000000Z"),
     ("failed", "failed", "event.key_not_valid")),
    ("issued a microsecond after", _window(issued_at="2026-03-01T12:00:00.000001+00:00"),
     ("failed", "failed", "event.key_not_valid")),
    ("issued at the event time, lower-case t and z", _window(issued_at="2026-03-01t12:00:00z"),
     ("verified", "self_asserted", None)),
    ("revoked in month 13", _window(revoked_at="2026-13-01T00:00:00Z"),
     ("failed", "failed", "event.key_not_valid")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "expected"), WINDOWS, ids=[w[0] for w in WINDOWS])
def test_the_bundles_own_key_window(
    signed: dict[str, Any], name: str, change: Any, expected: Any
) -> None:
    bundle = copy.deepcopy(signed)
    change(bundle)
    assert _actor_step(bundle) == expected, name


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2026-03-01T12:00:00Z", "2026-03-01T12:00:00+00:00"),
        ("2026-03-01t13:00:00+01:00", "2026-03-01T13:00:00+01:00"),
        ("2026-03-01T12:00:00.5Z", "2026-03-01T12:00:00.500000+00:00"),
        ("2026-03-01T12:00:00.123456789Z", "2026-03-01T12:00:00.123456+00:00"),
        ("2026-03-01T12:00:00.1234567-02:30", "2026-03-01T12:00:00.123456-02:30"),
    ],
)
def test_an_instant_is_read_to_the_microsecond(text: str, iso: str) -> None:
    moment = parse_instant(text)
    assert moment is not None
    assert moment.isoformat() == iso


@pytest.mark.parametrize(
    "text",
    ["2026-03-01T12:00:00", "2026-03-01 12:00:00Z", "20260301T120000Z", "2026-02-30T00:00:00Z",
     "2026-03-01T12:00:00.Z", "2026-03-01T12:00:00.1234567890Z", " 2026-03-01T12:00:00Z", None, 7],
)  # fmt: skip
def test_anything_else_is_no_instant(text: Any) -> None:
    assert parse_instant(text) is None
    assert not key_valid_at({"issued_at": "2026-01-01T00:00:00Z"}, text)
    assert not key_valid_at({"issued_at": text}, "2026-03-01T12:00:00Z")


def _failed_actor_step(bundle: dict[str, Any], name: str) -> Any:
    result = verifier().verify(bundle)
    step = result.failed_step
    assert step is not None, result.to_json()
    assert step.name == name, result.to_json()
    return step


def test_a_status_without_revoked_at_is_malformed_and_named(signed: dict[str, Any]) -> None:
    bundle = copy.deepcopy(signed)
    (key_id,) = bundle["key_directory"]
    bundle["key_directory"][key_id]["status"] = "suspended"
    step = _failed_actor_step(bundle, "actor_signatures")
    assert step.code == "event.key_lifecycle_malformed"
    assert repr(key_id) in step.message
    assert "'suspended'" in step.message


def test_an_inactive_key_of_a_nested_directory_is_refused_and_named(
    signed: dict[str, Any],
) -> None:
    from tests.verify.bundles.test_bound_inputs import KEY_ID, _sign_all

    plain = stamp({"accepted": OUTPUTS["accepted"]})["accepted"]
    bundle = _sign_all(plain, None)
    (entry,) = signed["key_directory"].values()
    listed = {**entry, "status": "retired", "revoked_at": "2027-01-01T00:00:00Z"}
    bundle["key_directory"] = {"key_directory_version": "1", "keys_by_key_id": {KEY_ID: listed}}
    step = _failed_actor_step(bundle, "actor_signature_sidecar")
    assert step.code == "event.key_inactive"
    assert repr(KEY_ID) in step.message
    assert "'retired'" in step.message
    listed["status"] = "active"
    assert verifier().verify(bundle).verdict == "verified"
