"""The actor-signature sidecar of a ProofPack bundle (docs/formats.md §4, any spec version).

>>> check_sidecar({"events": []}).status
'not_checked'

``actor_signature_sidecar = {sidecar_version, canonicalization: "canonical_event_for_signing_v1",
signature_alg: "Ed25519", signatures_by_event_hash: {event hash: [{actor_id, key_id,
public_key_base64, signature_base64, intent, signed_at, signed_payload_canonical_keys}]},
sidecar_hash}``, ``sidecar_hash = H(py-compact(sidecar without sidecar_hash))``.

The signed event is the truth: every signature covers the event's own ``actor_id`` (the py-compact
payload of a 3.0.0 actor signature). An entry's ``actor_id`` is a label; one that differs from
the signed event's is reported (warning ``event.actor_label_mismatch``, naming both) and the
actor reported is the event's. With a ``key_directory`` (flat ``{key_id: entry}`` or nested
``keys_by_key_id``) the directory is the source of the key: the entry's key must equal it
(``event.key_mismatch``), the directory's actor must be the signed event's
(``event.actor_mismatch``), the key must be active (``event.key_inactive``; in the nested shape
the status is required) and the event's own time inside ``issued_at <= t < revoked_at``,
compared as RFC 3339 instants (``event.key_not_valid``). An entry's ``signed_at`` is signed by
nothing: it can only refuse (a key not valid at the stated time, as the peer checks), never
admit; the caller's trust (:mod:`.actor_trust`) is judged at the event time only. Without
a directory the entry's own key is used. Reported like the peer: ``binding_present``,
``binding_verified``, ``binding_source``, ``bindings_checked``. Fail closed: one bad signature
fails the step; all good but not under caller-trusted keys is ``self_asserted`` (docs/adr/0008).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.bundles.actor_keys import (
    TRUST_BUNDLE,
    TRUST_CALLER,
    directory_entries,
    key_valid_at,
    parse_instant,
)
from affidavit.verify.bundles.events import SELF_ASSERTED_REASON, check_directory_signature
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.json.forms import same_digest
from affidavit.verify.results import StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.actor_trust import ActorTrust

__all__ = ["SidecarCheck", "check_sidecar", "sidecar_check", "sidecar_hash"]

STEP: Final = "actor_signature_sidecar"
CANONICALIZATION: Final = "canonical_event_for_signing_v1"
LABEL_MISMATCH: Final = "event.actor_label_mismatch"
_ENTRY_FIELDS: Final = ("actor_id", "key_id", "public_key_base64", "signature_base64")


class SidecarCheck(NamedTuple):
    """Step ``actor_signature_sidecar``, the event hashes it proved signed, and its warnings."""

    step: StepResult
    signed: frozenset[str]
    trusted: frozenset[str]  # under a key the caller trusts
    warnings: tuple[str, ...] = ()


def sidecar_hash(sidecar: Mapping[str, Any]) -> str:
    """``H(py-compact(sidecar without sidecar_hash))``."""
    return sha256_hex(py_compact({k: v for k, v in sidecar.items() if k != "sidecar_hash"}))


def check_sidecar(bundle: Mapping[str, Any], trust: ActorTrust | None = None) -> StepResult:
    """Step ``actor_signature_sidecar`` only (see :func:`sidecar_check`)."""
    return sidecar_check(bundle, trust).step


_NONE: Final[frozenset[str]] = frozenset()


def _fail(error: errors.AffidavitError, **details: Any) -> SidecarCheck:
    return SidecarCheck(StepResult.failed(STEP, error, **details), _NONE, _NONE)


def sidecar_check(bundle: Mapping[str, Any], trust: ActorTrust | None = None) -> SidecarCheck:
    """The sidecar step (events must already have passed the chain check)."""
    sidecar = bundle.get("actor_signature_sidecar")
    if sidecar is None:
        return SidecarCheck(
            StepResult.not_checked(STEP, "no actor_signature_sidecar"), _NONE, _NONE
        )
    if not isinstance(sidecar, dict) or not isinstance(
        sidecar.get("signatures_by_event_hash"), dict
    ):
        return _fail(
            errors.BundleError("bundle.sidecar_malformed", "actor_signature_sidecar is malformed")
        )
    if sidecar.get("signature_alg") != "Ed25519" or sidecar.get("canonicalization") != (
        CANONICALIZATION
    ):
        return _fail(
            errors.BundleError(
                "bundle.sidecar_malformed", "unsupported signature_alg or canonicalization"
            )
        )
    recomputed = sidecar_hash(sidecar)
    claimed = sidecar.get("sidecar_hash")
    if not same_digest(recomputed, claimed):
        mismatch = errors.BundleError(
            "bundle.sidecar_hash_mismatch", "sidecar_hash does not recompute"
        )
        failed = StepResult.failed(STEP, mismatch, expected=recomputed, actual=claimed)
        return SidecarCheck(failed, _NONE, _NONE)
    directory: dict[str, Any] | None = None
    nested = False
    if "key_directory" in bundle:
        directory = directory_entries(bundle["key_directory"])
        if directory is None:
            return _fail(
                errors.BundleError("bundle.sidecar_malformed", "key_directory is malformed")
            )
        nested = "keys_by_key_id" in bundle["key_directory"]
    events = {event["hash"]: event for event in bundle["events"]}
    warnings: list[str] = []
    signed: set[str] = set()
    trusted: set[str] = set()
    actors: set[str] = set()
    checked = 0
    for event_hash, entries in sidecar["signatures_by_event_hash"].items():
        event = events.get(event_hash)
        if event is None:
            error = errors.BundleError(
                "bundle.sidecar_unknown_event", f"signed event {event_hash[:16]}... not in chain"
            )
            return _fail(error)
        if not isinstance(entries, list) or not entries:
            return _fail(
                errors.BundleError(
                    "bundle.sidecar_malformed", "signatures must be a non-empty array"
                )
            )
        all_trusted = True
        for entry in entries:
            problem, key_b64 = _check_entry(event, entry, directory, nested=nested)
            if problem is not None:
                return _fail(problem, event_hash=event_hash, event_id=event["event_id"])
            if entry["actor_id"] != event["actor_id"]:
                warnings.append(
                    f"{LABEL_MISMATCH}: sidecar entry for event {event['event_id']!r} is labelled "
                    f"actor {entry['actor_id']!r}; the signed event's actor is "
                    f"{event['actor_id']!r} (reported)"
                )
            # The caller's key window is judged at the signed, logged event time only: an
            # entry's signed_at is covered by no signature and no log (docs/formats.md §4).
            when = event["timestamp"]
            if trust is None or not trust.vouches(key_b64, event["actor_id"], when):
                all_trusted = False
            actors.add(event["actor_id"])
            checked += 1
        signed.add(event_hash)
        if all_trusted:
            trusted.add(event_hash)
    if not checked:
        return _fail(
            errors.BundleError("bundle.sidecar_malformed", "the sidecar holds no signature")
        )
    details: dict[str, Any] = {
        "signatures": checked,
        "events_signed": len(signed),
        "actors": sorted(actors),
        "binding_present": directory is not None,
        "binding_verified": directory is not None,
        "binding_source": "bundle_key_directory" if directory is not None else "",
        "bindings_checked": checked if directory is not None else 0,
    }
    if len(trusted) == len(signed):
        step = StepResult.ok(STEP, trust=TRUST_CALLER, **details)
    else:
        step = StepResult.self_asserted(STEP, SELF_ASSERTED_REASON, trust=TRUST_BUNDLE, **details)
    return SidecarCheck(step, frozenset(signed), frozenset(trusted), tuple(warnings))


def _check_entry(
    event: Mapping[str, Any], entry: Any, directory: dict[str, Any] | None, *, nested: bool
) -> tuple[errors.AffidavitError | None, str]:
    """(problem or None, the public key that verified the signature)."""
    if not isinstance(entry, dict) or not all(
        isinstance(entry.get(name), str) and entry.get(name) for name in _ENTRY_FIELDS
    ):
        return errors.BundleError(
            "bundle.sidecar_malformed", "a sidecar signature lacks a required field"
        ), ""
    key_id = entry["key_id"]
    # docs/formats.md §4 sidecar: the window is judged at the event's own timestamp, which the
    # event hash, the signature and (for the finality event) the log bind. ``signed_at`` is
    # bound by nothing: it may refuse a signature (a key not valid at the time the entry
    # states), never admit one. A falsy signed_at is absent, as before.
    stated = entry.get("signed_at") or None
    if stated is not None and not isinstance(stated, str):
        return errors.BundleError(
            "bundle.sidecar_malformed", "signed_at must be an RFC 3339 string"
        ), ""
    when = event["timestamp"]
    if directory is None:
        # No directory: the entry's own key, bound to the signed event's actor at the event
        # time. The label is not the truth; the signature covers the event's actor.
        if stated is not None and parse_instant(stated) is None:
            return errors.BundleError(
                "event.key_not_valid", f"signed_at {stated!r} is not an RFC 3339 time"
            ), ""
        own = {"actor_id": event["actor_id"], "public_key_base64": entry["public_key_base64"]}
        own["issued_at"], own["revoked_at"] = when, None
        signature = entry["signature_base64"]
        return check_directory_signature(event, own, key_id, signature, when), own[
            "public_key_base64"
        ]
    listed = directory.get(key_id)
    if isinstance(listed, dict) and listed.get("public_key_base64") != entry["public_key_base64"]:
        return errors.BundleError(
            "event.key_mismatch", f"sidecar key for {key_id!r} differs from the key directory's"
        ), ""
    problem = check_directory_signature(
        event, listed, key_id, entry["signature_base64"], when, status_required=nested
    )
    if (
        problem is None
        and stated is not None
        and isinstance(listed, dict)
        and not key_valid_at(listed, stated)
    ):
        problem = errors.BundleError(
            "event.key_not_valid",
            f"key {key_id!r} is not valid at the stated signed_at {stated!r} "
            f"(issued_at={listed.get('issued_at')!r}, revoked_at={listed.get('revoked_at')!r})",
        )
    return problem, entry["public_key_base64"]
