"""The actor-signature sidecar of a ProofPack bundle (formats.md §4, any spec version).

>>> check_sidecar({"events": []}).status
'not_checked'

``actor_signature_sidecar = {sidecar_version, canonicalization: "canonical_event_for_signing_v1",
signature_alg: "Ed25519", signatures_by_event_hash: {event hash: [{actor_id, key_id,
public_key_base64, signature_base64, intent, signed_at, signed_payload_canonical_keys}]},
sidecar_hash}``, ``sidecar_hash = H(py-compact(sidecar without sidecar_hash))``.

Every signature covers the same py-compact payload as a 3.0.0 actor signature. With a
``key_directory`` the directory is the source of the key: the entry's key must equal it, the
directory's actor must be the event's actor, and the signing time (``signed_at``, else the event
time) must be inside ``issued_at <= t < revoked_at``. Without a directory the entry's own key is
used, and its ``actor_id`` must still be the event's. Fail closed: one bad signature fails the step.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.canonical import py_compact, sha256_hex
from affidavit.verify.events import check_directory_signature, directory_entries
from affidavit.verify.report import StepResult

__all__ = ["check_sidecar", "sidecar_hash"]

STEP: Final = "actor_signature_sidecar"
CANONICALIZATION: Final = "canonical_event_for_signing_v1"
_ENTRY_FIELDS: Final = ("actor_id", "key_id", "public_key_base64", "signature_base64")


def sidecar_hash(sidecar: Mapping[str, Any]) -> str:
    """``H(py-compact(sidecar without sidecar_hash))``."""
    return sha256_hex(py_compact({k: v for k, v in sidecar.items() if k != "sidecar_hash"}))


def _fail(error: errors.AffidavitError, **details: Any) -> StepResult:
    return StepResult.failed(STEP, error, **details)


def check_sidecar(bundle: Mapping[str, Any]) -> StepResult:
    """Step ``actor_signature_sidecar`` (events must already have passed the chain check)."""
    sidecar = bundle.get("actor_signature_sidecar")
    if sidecar is None:
        return StepResult.not_checked(STEP, "no actor_signature_sidecar")
    if not isinstance(sidecar, dict) or not isinstance(
        sidecar.get("signatures_by_event_hash"), dict
    ):
        return _fail(errors.BundleSidecarMalformed("actor_signature_sidecar is malformed"))
    if sidecar.get("signature_alg") != "Ed25519" or sidecar.get("canonicalization") != (
        CANONICALIZATION
    ):
        return _fail(errors.BundleSidecarMalformed("unsupported signature_alg or canonicalization"))
    recomputed = sidecar_hash(sidecar)
    claimed = sidecar.get("sidecar_hash")
    if not isinstance(claimed, str) or not hmac.compare_digest(recomputed, claimed):
        mismatch = errors.BundleSidecarHashMismatch("sidecar_hash does not recompute")
        return StepResult.failed(STEP, mismatch, expected=recomputed, actual=claimed)
    directory: dict[str, Any] | None = None
    if "key_directory" in bundle:
        directory = directory_entries(bundle["key_directory"])
        if directory is None:
            return _fail(errors.BundleSidecarMalformed("key_directory is malformed"))
    events = {event["hash"]: event for event in bundle["events"]}
    checked = 0
    for event_hash, entries in sidecar["signatures_by_event_hash"].items():
        event = events.get(event_hash)
        if event is None:
            error = errors.BundleSidecarUnknownEvent(
                f"signed event {event_hash[:16]}... not in chain"
            )
            return _fail(error)
        if not isinstance(entries, list) or not entries:
            return _fail(errors.BundleSidecarMalformed("signatures must be a non-empty array"))
        for entry in entries:
            problem = _check_entry(event, entry, directory)
            if problem is not None:
                return _fail(problem, event_hash=event_hash)
            checked += 1
    if not checked:
        return _fail(errors.BundleSidecarMalformed("the sidecar holds no signature"))
    return StepResult.ok(STEP, signatures=checked)


def _check_entry(
    event: Mapping[str, Any], entry: Any, directory: dict[str, Any] | None
) -> errors.AffidavitError | None:
    if not isinstance(entry, dict) or not all(
        isinstance(entry.get(name), str) and entry.get(name) for name in _ENTRY_FIELDS
    ):
        return errors.BundleSidecarMalformed("a sidecar signature lacks a required field")
    key_id = entry["key_id"]
    when = entry.get("signed_at") or event["timestamp"]
    if entry["actor_id"] != event["actor_id"]:
        return errors.EventActorMismatch(
            f"sidecar signature names actor {entry['actor_id']!r}, the event {event['actor_id']!r}"
        )
    if directory is None:
        # No directory: the entry's own key, valid from the event on (self-asserted binding).
        own = {"actor_id": entry["actor_id"], "public_key_base64": entry["public_key_base64"]}
        own["issued_at"], own["revoked_at"] = when, None
        return check_directory_signature(event, own, key_id, entry["signature_base64"], when)
    listed = directory.get(key_id)
    if isinstance(listed, dict) and listed.get("public_key_base64") != entry["public_key_base64"]:
        return errors.EventKeyUnknown(f"sidecar key for {key_id!r} differs from the directory's")
    return check_directory_signature(event, listed, key_id, entry["signature_base64"], when)
