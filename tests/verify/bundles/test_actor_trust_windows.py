"""The caller's pinned actor keys: who a key vouches for, and when (docs/formats.md §4, ADR 0008).

Issue 36 (mutation testing): the red team switched off the pinned-key validity window of
``verify/bundles/actor_trust.py`` and 3,351 tests still passed. Here each pinned directory is
judged on a real stamped bundle whose events (all at 2026-03-01T12:00:00Z) are signed under the
actor key and whose own key directory admits them: only the caller's pin decides whether the
signatures are *trusted* (``ok``) or only *self-asserted*, which ``require_actor_signatures``
turns into ``bundle.actor_signatures_untrusted``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.verifier import BundleVerifier

from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_KEY,
    OTHER_KEY,
    OUTPUTS,
    stamp,
)

EVENT_TIME = "2026-03-01T12:00:00Z"  # every event of the stamped bundle
FEBRUARY = "2026-02-01T00:00:00Z"
UNTRUSTED = ("failed", "actor_signatures", "bundle.actor_signatures_untrusted")
TRUSTED = ("verified", None, None)


def _entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "actor_id": ACTOR_ID,
        "public_key_base64": ACTOR_KEY.public_key.b64,
        "issued_at": "2026-01-01T00:00:00Z",
        "revoked_at": None,
    }
    entry.update(changes)
    return entry


def _judge(bundle: dict[str, Any], trust: ActorTrust) -> tuple[str, str | None, str | None]:
    verifier = BundleVerifier(
        [LOG_KEY.public_key], actor_trust=trust, require_actor_signatures=True
    )
    result = verifier.verify(copy.deepcopy(bundle))
    failed = result.failed_step
    if failed is None:
        return result.verdict, None, None
    return result.verdict, failed.name, failed.code


WINDOWS: list[tuple[str, dict[str, Any], tuple[str, str | None, str | None]]] = [
    ("open window", {"k": _entry()}, TRUSTED),
    ("issued at the event time", {"k": _entry(issued_at=EVENT_TIME)}, TRUSTED),
    ("issued a second after the events", {"k": _entry(issued_at="2026-03-01T12:00:01Z")},
     UNTRUSTED),
    ("issued after the events, as an offset", {"k": _entry(issued_at="2026-03-01T13:00:01+01:00")},
     UNTRUSTED),
    ("revoked at the event time", {"k": _entry(revoked_at=EVENT_TIME)}, UNTRUSTED),
    ("revoked before the events", {"k": _entry(revoked_at="2026-02-01T00:00:00Z")}, UNTRUSTED),
    ("revoked before the events, as an offset",
     {"k": _entry(revoked_at="2026-03-01T12:30:00+01:00")}, UNTRUSTED),
    ("revoked a second after the events", {"k": _entry(revoked_at="2026-03-01T12:00:01Z")},
     TRUSTED),
    ("revoked later, status says so", {"k": _entry(status="revoked",
     revoked_at="2026-04-01T00:00:00Z")}, TRUSTED),
    ("status revoked, no revoked_at", {"k": _entry(status="revoked")}, UNTRUSTED),
    ("status active", {"k": _entry(status="active")}, TRUSTED),
    ("pinned for another actor", {"k": _entry(actor_id="agent-other")}, UNTRUSTED),
    ("another key pinned for the actor", {"k": _entry(public_key_base64=OTHER_KEY.public_key.b64)},
     UNTRUSTED),
    ("the key pinned for another actor, then for this one",
     {"a": _entry(actor_id="agent-other"), "b": _entry()}, TRUSTED),
    ("the key revoked, then issued again",
     {"a": _entry(revoked_at=FEBRUARY), "b": _entry(issued_at="2026-02-15T00:00:00Z")},
     TRUSTED),
    ("the key revoked, then issued again too late",
     {"a": _entry(revoked_at=FEBRUARY), "b": _entry(issued_at="2026-03-02T00:00:00Z")},
     UNTRUSTED),
    ("nested shape", {"keys_by_key_id": {"k": _entry()}}, TRUSTED),
    ("nested shape, revoked", {"keys_by_key_id": {"k": _entry(revoked_at=EVENT_TIME)}},
     UNTRUSTED),
]  # fmt: skip


@pytest.mark.parametrize(("name", "directory", "expected"), WINDOWS, ids=[w[0] for w in WINDOWS])
def test_a_pinned_key_vouches_only_inside_its_window_and_for_its_actor(
    signed: dict[str, Any],
    name: str,
    directory: dict[str, Any],
    expected: tuple[str, str | None, str | None],
) -> None:
    assert _judge(signed, ActorTrust.from_directory(directory)) == expected, name


def test_without_require_the_untrusted_pin_is_self_asserted(signed: dict[str, Any]) -> None:
    revoked = ActorTrust.from_directory({"k": _entry(revoked_at="2026-02-01T00:00:00Z")})
    result = BundleVerifier([LOG_KEY.public_key], actor_trust=revoked).verify(signed)
    step = result.step("actor_signatures")
    assert step is not None
    # actor signatures are not required: the verdict stands on the log, the step says who signed
    assert (result.verdict, step.status, step.details["trusted_events"]) == (
        "verified",
        "self_asserted",
        0,
    )


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ((), UNTRUSTED),  # no key trusted: nothing vouched for
        ((TrustedActorKey(OTHER_KEY.public_key.raw),), UNTRUSTED),
        ((TrustedActorKey(ACTOR_KEY.public_key.raw),), TRUSTED),  # any actor
        ((TrustedActorKey(ACTOR_KEY.public_key.raw, "agent-other"),), UNTRUSTED),
        (
            (
                TrustedActorKey(ACTOR_KEY.public_key.raw, "agent-other"),
                TrustedActorKey(ACTOR_KEY.public_key.raw, ACTOR_ID),
            ),
            TRUSTED,
        ),
    ],
)
def test_trusted_keys_match_by_bytes_and_actor(
    signed: dict[str, Any], keys: tuple[TrustedActorKey, ...], expected: Any
) -> None:
    assert _judge(signed, ActorTrust(keys)) == expected


@pytest.mark.parametrize(
    "value",
    [
        ACTOR_KEY.public_key.b64.encode(),  # not JSON text
        None,
        "not base64!",
        OTHER_KEY.public_key.b64[:-4],
    ],
)
def test_only_the_text_of_a_valid_key_is_vouched_for(value: Any) -> None:
    trust = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw)])
    assert trust  # a trust with keys is one (an empty one vouches for nothing)
    assert trust.vouches(ACTOR_KEY.public_key.b64, ACTOR_ID, EVENT_TIME)
    assert not trust.vouches(value, ACTOR_ID, EVENT_TIME)
    assert not ActorTrust().vouches(ACTOR_KEY.public_key.b64, ACTOR_ID, EVENT_TIME)
    assert not ActorTrust()


MALFORMED: list[tuple[str, Any, str]] = [
    ("not an object", [], "usage.invalid"),
    ("no entries", {}, "usage.invalid"),
    ("nested, no entries", {"keys_by_key_id": {}}, "usage.invalid"),
    ("an entry not an object", {"k1": "key"}, "usage.invalid"),
    ("no actor_id", {"k1": _entry(actor_id=None)}, "usage.invalid"),
    ("empty actor_id", {"k1": _entry(actor_id="")}, "usage.invalid"),
    ("actor_id not text", {"k1": _entry(actor_id=7)}, "usage.invalid"),
    ("no issued_at", {"k1": _entry(issued_at=None)}, "usage.invalid"),
    ("issued_at without a zone", {"k1": _entry(issued_at="2026-01-01T00:00:00")}, "usage.invalid"),
    ("revoked_at not a time", {"k1": _entry(revoked_at="never")}, "usage.invalid"),
    ("revoked_at empty", {"k1": _entry(revoked_at="")}, "usage.invalid"),
    ("no public key", {"k1": _entry(public_key_base64=None)}, "usage.invalid"),
    ("a public key of 16 bytes", {"k1": _entry(public_key_base64="A" * 22 + "==")},
     "key.wrong_length"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "document", "code"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_pinned_directory_is_refused_naming_its_entry(
    name: str, document: Any, code: str
) -> None:
    with pytest.raises(errors.AffidavitError) as caught:
        ActorTrust.from_directory(document, source="pins.json")
    assert caught.value.code == code, name
    if code == "usage.invalid":  # the message names the file and the entry at fault
        assert "pins.json" in str(caught.value), name
        if isinstance(document, dict) and "k1" in document:
            assert "'k1'" in str(caught.value), name
    with pytest.raises(errors.AffidavitError) as default:
        ActorTrust.from_directory(document)
    if code == "usage.invalid":
        assert "pinned directory" in str(default.value), name


# The red team: an unsigned time (a sidecar entry's signed_at) must never decide the caller's
# window. The bundle's own directory admits the key at both times, so only the pin decides: it is
# judged at the signed, logged event time (2026-03-01T12:00:00Z), whatever signed_at states.
SIGNED_AT: list[tuple[str, dict[str, Any], str, tuple[str, str | None, str | None]]] = [
    ("revoked pin, signed_at back-dated into its window",
     _entry(revoked_at="2026-03-01T00:00:00Z"), "2026-01-15T00:00:00Z", UNTRUSTED),
    ("pin issued after the events, signed_at forward-dated into its window",
     _entry(issued_at="2026-03-02T00:00:00Z"), "2026-03-05T00:00:00Z", UNTRUSTED),
    ("open pin, signed_at back-dated", _entry(), "2026-01-15T00:00:00Z", TRUSTED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "pin", "signed_at", "expected"), SIGNED_AT, ids=[s[0] for s in SIGNED_AT]
)
def test_a_sidecar_signed_at_never_decides_the_pinned_window(
    name: str, pin: dict[str, Any], signed_at: str, expected: Any
) -> None:
    from tests.verify.bundles.test_bound_inputs import KEY_ID, _sign_all

    plain = stamp({"accepted": OUTPUTS["accepted"]})["accepted"]
    bundle = _sign_all(plain, signed_at)
    bundle["key_directory"] = {KEY_ID: _entry()}  # the bundle's own: open since January
    assert _judge(bundle, ActorTrust.from_directory({KEY_ID: pin})) == expected, name
