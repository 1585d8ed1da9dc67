"""Actor-signature sidecars: the signed event is the truth (docs/formats.md §4 sidecar).

AiGentsy's published sidecar fixture (``sample_bundle_with_actor_sigs.json``, aigentsy-verify's
own tests) labels its entry ``actor_id: "test:acceptance_runtime_agent"`` while the signed event
says another actor: the same shape is built here on the peer's ``sample_bundle.json`` and on an
anchored bundle, and must verify (with ``event.actor_label_mismatch``) when the log key is trusted.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.events import sidecar_hash, signing_payload
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.json.strict import loads

from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_KEY,
    OTHER_KEY,
    OUTPUTS,
    stamp,
    verifier,
)

LABEL = "test:acceptance_runtime_agent"
KEY_ID = "test_actor_v1"


@pytest.fixture(scope="module")
def anchored() -> dict[str, Any]:
    return stamp({"accepted": OUTPUTS["accepted"]})["accepted"]


def _sidecar(
    bundle: dict[str, Any],
    *,
    label: str = LABEL,
    signed_at: str | None = None,
    key: Any = ACTOR_KEY,
    directory: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``bundle`` with a sidecar signing its first event, the peer fixture's way."""
    out = copy.deepcopy(bundle)
    event = out["events"][0]
    entry = {
        "actor_id": label,
        "key_id": KEY_ID,
        "public_key_base64": key.public_key.b64,
        "signature_base64": key.sign_b64(signing_payload(event, KEY_ID)),
        "intent": "evaluated_inference",
        "signed_at": signed_at or event["timestamp"],
        "signed_payload_canonical_keys": [
            "event_id", "event_type", "deal_id", "actor_id",
            "timestamp", "payload", "prev_hash", "key_id",
        ],
    }  # fmt: skip
    sidecar: dict[str, Any] = {
        "sidecar_version": "0.0.1",
        "canonicalization": "canonical_event_for_signing_v1",
        "signature_alg": "Ed25519",
        "signatures_by_event_hash": {event["hash"]: [entry]},
    }
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    out["actor_signature_sidecar"] = sidecar
    if directory is not None:
        out["key_directory"] = directory
    return out


def _entry(**changes: Any) -> dict[str, Any]:
    entry = {
        "actor_id": ACTOR_ID,
        "public_key_base64": ACTOR_KEY.public_key.b64,
        "issued_at": "2026-01-01T00:00:00Z",
        "revoked_at": None,
        "status": "active",
    }
    entry.update(changes)
    return entry


def _nested(**changes: Any) -> dict[str, Any]:
    return {"key_directory_version": "1", "keys_by_key_id": {KEY_ID: _entry(**changes)}}


def test_label_mismatch_is_a_warning_and_the_signed_actor_is_reported(
    anchored: dict[str, Any],
) -> None:
    result = verifier().verify(_sidecar(anchored))
    assert result.verdict == "verified", result.to_json()
    step = result.step("actor_signature_sidecar")
    assert step is not None
    assert step.status == "self_asserted"
    assert step.details["actors"] == [ACTOR_ID]
    assert step.details["binding_present"] is False
    (warning,) = [
        w for w in result.subject["warnings"] if w.startswith("event.actor_label_mismatch")
    ]
    assert LABEL in warning
    assert ACTOR_ID in warning


def test_peer_sample_bundle_with_the_fixture_shape(peer_vectors: Path) -> None:
    sample = loads((peer_vectors / "aigentsy" / "sample_bundle.json").read_bytes())
    bundle = _sidecar(sample)
    result = verifier().verify(bundle)
    assert result.verdict == "unanchored"  # the sample carries no inclusion proof
    step = result.step("actor_signature_sidecar")
    assert step is not None
    assert step.status == "self_asserted"
    assert any(w.startswith("event.actor_label_mismatch") for w in result.subject["warnings"])
    from aigentsy_verify.bundle import verify_actor_signature_sidecar

    assert verify_actor_signature_sidecar(bundle)["passed"] is True  # the oracle agrees


def test_nested_directory_binding_is_reported_like_the_peer(anchored: dict[str, Any]) -> None:
    bundle = _sidecar(anchored, directory=_nested())
    result = verifier().verify(bundle)
    assert result.verdict == "verified"
    step = result.step("actor_signature_sidecar")
    assert step is not None
    details = step.details
    assert (details["binding_present"], details["binding_verified"]) == (True, True)
    assert (details["bindings_checked"], details["binding_source"]) == (1, "bundle_key_directory")
    from aigentsy_verify.bundle import verify_actor_signature_sidecar

    peer = verify_actor_signature_sidecar(bundle)
    assert (peer["passed"], peer["binding_verified"], peer["bindings_checked"]) == (True, True, 1)


def test_flat_directory_shape_binds_too(anchored: dict[str, Any]) -> None:
    flat = {KEY_ID: _entry()}
    del flat[KEY_ID]["status"]
    step = verifier().verify(_sidecar(anchored, directory=flat)).step("actor_signature_sidecar")
    assert step is not None
    assert (step.status, step.details["binding_verified"]) == ("self_asserted", True)


@pytest.mark.parametrize(
    ("directory", "signed_at", "code"),
    [
        (_nested(public_key_base64=OTHER_KEY.public_key.b64), None, "event.key_mismatch"),
        (_nested(actor_id="someone-else"), None, "event.actor_mismatch"),
        (_nested(status="revoked", revoked_at="2027-01-01T00:00:00Z"), None, "event.key_inactive"),
        (_nested(status="suspended"), None, "event.key_lifecycle_malformed"),
        ({"keys_by_key_id": {KEY_ID: {k: v for k, v in _entry().items() if k != "status"}}},
         None, "event.key_inactive"),
        (_nested(issued_at="2026-06-01T00:00:00Z"), None, "event.key_not_valid"),
        (_nested(revoked_at="2026-02-01T00:00:00Z"), None, "event.key_not_valid"),
        ({"keys_by_key_id": {}}, None, "event.key_unknown"),
        # Times compare as instants: 12:30+01:00 is 11:30Z, before the 12:00Z signature.
        (_nested(revoked_at="2026-03-01T12:30:00+01:00"), "2026-03-01T12:00:00Z",
         "event.key_not_valid"),
        (_nested(), "20260301T120000Z", "event.key_not_valid"),  # ISO basic form: not RFC 3339
    ],
)  # fmt: skip
def test_directory_binding_failures(
    anchored: dict[str, Any], directory: dict[str, Any], signed_at: str | None, code: str
) -> None:
    result = verifier().verify(_sidecar(anchored, directory=directory, signed_at=signed_at))
    step = result.failed_step
    assert step is not None
    assert (result.verdict, step.name, step.code) == ("failed", "actor_signature_sidecar", code)


def test_times_are_compared_as_times_not_strings(anchored: dict[str, Any]) -> None:
    # Issued 13:00+01:00 = 12:00Z: valid at 12:00Z although the string "…T12" sorts before "…T13".
    directory = _nested(issued_at="2026-03-01T13:00:00+01:00")
    result = verifier().verify(_sidecar(anchored, directory=directory))
    assert result.verdict == "verified", result.to_json()


def test_caller_trusted_key_makes_the_sidecar_ok(anchored: dict[str, Any]) -> None:
    trust = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw, ACTOR_ID)])
    checked = BundleVerifier([LOG_KEY.public_key], actor_trust=trust)
    step = checked.verify(_sidecar(anchored)).step("actor_signature_sidecar")
    assert step is not None
    assert (step.status, step.details["trust"]) == ("ok", "caller_trusted")
    other = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw, "another-actor")])
    step = (
        BundleVerifier([LOG_KEY.public_key], actor_trust=other)
        .verify(_sidecar(anchored))
        .step("actor_signature_sidecar")
    )
    assert step is not None
    assert step.status == "self_asserted"


def test_a_forged_signature_still_fails(anchored: dict[str, Any]) -> None:
    bundle = _sidecar(anchored, key=OTHER_KEY, directory=_nested())
    step = verifier().verify(bundle).failed_step
    assert step is not None
    assert step.code == "event.key_mismatch"
    bundle = _sidecar(anchored, key=OTHER_KEY)
    bundle["actor_signature_sidecar"]["signatures_by_event_hash"][anchored["events"][0]["hash"]][0][
        "public_key_base64"
    ] = ACTOR_KEY.public_key.b64
    bundle["actor_signature_sidecar"]["sidecar_hash"] = sidecar_hash(
        bundle["actor_signature_sidecar"]
    )
    step = verifier().verify(bundle).failed_step
    assert step is not None
    assert step.code == "event.signature_bad"
