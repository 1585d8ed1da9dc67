"""ProofPack events (docs/formats.md §4): hashes, the chain, finality leaves, per-actor signatures
(inline and in the sidecar) and the ``outcome_reconciliation`` vocabularies (AiGentsy SDK 1.17.2).

>>> event = {"event_id": "e1", "event_type": "DEAL_CREATED", "deal_id": "d", "actor_id": "a",
...          "timestamp": "2026-01-01T00:00:00Z", "payload": {}, "prev_hash": ""}
>>> len(event_hash(event))
64
>>> leaf_data(dict(event, hash="00" * 32))[:12]
b'{"deal_id":"'
>>> check_reconciliation([]) is None
True
>>> sidecar_check({"events": []}).step.status
'not_checked'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.bundles.actor_keys import (
    TRUST_BUNDLE,
    TRUST_CALLER,
    directory_entries,
    key_valid_at,
    lifecycle_problem,
    parse_instant,
)
from affidavit.verify.bundles.views import EVENT_FIELDS, HASHED_FIELDS, Events
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.json.canonical import py_compact, py_spaced, sha256_hex
from affidavit.verify.json.forms import same_digest
from affidavit.verify.results import StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.actor_trust import ActorTrust

__all__ = [
    "EVENT_FIELDS",
    "FINALITY_EVENT_TYPES",
    "OUTCOME_RECONCILED",
    "VOCABULARIES",
    "ActorCheck",
    "SidecarCheck",
    "actor_signature_check",
    "chain_step",
    "check_directory_signature",
    "check_reconciliation",
    "event_hash",
    "leaf_data",
    "sidecar_check",
    "sidecar_hash",
    "signing_payload",
    "trust_step",
]

FINALITY_EVENT_TYPES: Final = frozenset(
    {
        "PROOF_READY",
        "PROOF_VERIFIED",
        "GO_APPROVED",
        "AUTO_GO_APPROVED",
        "SETTLED",
        "PAYOUT_CONFIRMED",
        "OUTCOME_RECORDED",
    }
)
STEP_CHAIN: Final = "event_chain"
STEP_ACTORS: Final = "actor_signatures"


def event_hash(event: Mapping[str, Any]) -> str:
    """``H(py-spaced({event_id, event_type, deal_id, actor_id, timestamp, payload, prev_hash}))``"""
    return sha256_hex(py_spaced({name: event[name] for name in HASHED_FIELDS}))


def leaf_data(event: Mapping[str, Any]) -> bytes:
    """Leaf bytes of a finality event: ``py-compact({deal_id, event_type, event_id, event_hash,
    timestamp})`` (docs/formats.md §4 "Merkle log")."""
    leaf = {
        "deal_id": event["deal_id"],
        "event_hash": event["hash"],
        "event_id": event["event_id"],
        "event_type": event["event_type"],
        "timestamp": event["timestamp"],
    }
    return py_compact(leaf)


def signing_payload(event: Mapping[str, Any], key_id: str) -> bytes:
    """Bytes an actor signature covers: py-compact of the hashed fields plus ``key_id``."""
    body = {name: event[name] for name in HASHED_FIELDS}
    body["key_id"] = key_id
    return py_compact(body)


def chain_step(events: Events, deal_id: str) -> StepResult:
    """Step ``event_chain``: shape, deal, unique ids, each hash, each ``prev_hash`` link."""
    seen: set[str] = set()
    previous = ""
    for index, event in enumerate(events.items):
        if event.deal_id != deal_id:
            error: errors.AffidavitError = errors.BundleError(
                "event.deal_mismatch", f"events[{index}].deal_id is not the bundle's deal_id"
            )
            return StepResult.failed(
                STEP_CHAIN, error, expected=deal_id, actual=event.deal_id, index=index
            )
        if event.event_id in seen:
            error = errors.BundleError(
                "event.duplicate_id", f"events[{index}].event_id repeats an earlier event"
            )
            return StepResult.failed(STEP_CHAIN, error, index=index)
        seen.add(event.event_id)
        if event.prev_hash != previous:
            error = errors.BundleError(
                "event.chain_broken", f"events[{index}].prev_hash does not link"
            )
            return StepResult.failed(
                STEP_CHAIN, error, expected=previous, actual=event.prev_hash, index=index
            )
        recomputed = event_hash(event.raw)
        if not same_digest(recomputed, event.hash):
            error = errors.BundleError(
                "event.hash_mismatch", f"events[{index}].hash does not match its fields"
            )
            return StepResult.failed(
                STEP_CHAIN, error, expected=recomputed, actual=event.hash, index=index
            )
        previous = event.hash
    if events.problem is not None:  # the first malformed event, after the ones before it
        return StepResult.failed(STEP_CHAIN, events.problem, index=len(events.items))
    return StepResult.ok(STEP_CHAIN, event_count=len(events.items))


# ------------------------------------------------------------------------------------------
# Per-actor signatures (spec 3.0.0) and key directories


def check_directory_signature(
    event: Mapping[str, Any],
    entry: Any,
    key_id: str,
    signature_b64: Any,
    when: str,
    *,
    status_required: bool = False,
) -> errors.AffidavitError | None:
    """One signature against one directory entry: binding to the signed event's actor,
    lifecycle, window, key, signature. None if good."""
    if not isinstance(entry, dict):
        return errors.BundleError(
            "event.key_unknown", f"key_id {key_id!r} is not in the key directory"
        )
    if entry.get("actor_id") != event["actor_id"]:
        return errors.BundleError(
            "event.actor_mismatch",
            f"key {key_id!r} belongs to {entry.get('actor_id')!r}, the event to "
            f"{event['actor_id']!r}",
        )
    lifecycle = lifecycle_problem(entry, key_id, status_required=status_required)
    if lifecycle is not None:
        return lifecycle
    if not key_valid_at(entry, when):
        return errors.BundleError(
            "event.key_not_valid",
            f"key {key_id!r} is not valid at {when!r} (issued_at={entry.get('issued_at')!r}, "
            f"revoked_at={entry.get('revoked_at')!r})",
        )
    try:
        key = Ed25519PublicKey.from_b64(entry.get("public_key_base64", ""))
        signature = decode_signature_b64(signature_b64 if isinstance(signature_b64, str) else "")
        verify_ed25519(key, signing_payload(event, key_id), signature)
    except errors.AffidavitError as e:
        if e.code != "signature.bad":
            return e
        return errors.BundleError(
            "event.signature_bad", f"actor signature by key {key_id!r} does not verify"
        )
    return None


class ActorCheck(NamedTuple):
    """Step ``actor_signatures`` and which events it proved signed (indexes into the events)."""

    step: StepResult
    signed: frozenset[int]
    trusted: frozenset[int]  # signed under a key the caller trusts (not only the bundle's)


_SIGNATURE_KEYS: Final = frozenset(("key_id", "signature"))
SELF_ASSERTED_REASON: Final = (
    "the signatures verify only under keys the bundle itself carries (its key_directory), "
    "not under actor keys the caller trusts"
)


def actor_signature_check(
    events: Sequence[Mapping[str, Any]], key_directory: Any, trust: ActorTrust | None = None
) -> ActorCheck:
    """Step ``actor_signatures`` of chain-checked events: every ``event.actor_signature`` present
    must verify (events without one are attribution-only; none at all is ``not_checked``)."""
    signed = [(i, e) for i, e in enumerate(events) if "actor_signature" in e]
    none: frozenset[int] = frozenset()
    if not signed:
        step = StepResult.not_checked(STEP_ACTORS, "no event carries an actor_signature")
        return ActorCheck(step, none, none)
    directory = directory_entries(key_directory)
    if directory is None:
        malformed = _malformed("signed events need a key_directory object")
        return ActorCheck(StepResult.failed(STEP_ACTORS, malformed), none, none)
    trusted: set[int] = set()
    for index, event in signed:
        signature = event["actor_signature"]
        key_id = signature.get("key_id") if isinstance(signature, dict) else None
        if not isinstance(key_id, str) or not key_id:
            bad = errors.BundleError(
                "event.malformed", f"events[{index}].actor_signature lacks a key_id"
            )
            return ActorCheck(StepResult.failed(STEP_ACTORS, bad, index=index), none, none)
        if not signature.keys() <= _SIGNATURE_KEYS:  # docs/formats.md §4: {key_id, signature}
            bad = errors.BundleError(
                "event.malformed",
                f"events[{index}].actor_signature has fields no signature covers",
            )
            return ActorCheck(StepResult.failed(STEP_ACTORS, bad, index=index), none, none)
        entry: Any = directory.get(key_id)
        problem = check_directory_signature(
            event, entry, key_id, signature.get("signature"), event["timestamp"]
        )
        if problem is not None:
            failed = StepResult.failed(STEP_ACTORS, problem, index=index, key_id=key_id)
            return ActorCheck(failed, none, none)
        if trust is not None and trust.vouches(
            entry.get("public_key_base64"), event["actor_id"], event["timestamp"]
        ):
            trusted.add(index)
    indexes = frozenset(i for i, _ in signed)
    actors = sorted({e["actor_id"] for _, e in signed})
    details: dict[str, Any] = {"signed_events": len(signed), "events": len(events)}
    details["actors"] = actors
    if len(trusted) != len(signed):
        details["trusted_events"] = len(trusted)
    step = trust_step(STEP_ACTORS, len(trusted) == len(signed), **details)
    return ActorCheck(step, indexes, frozenset(trusted))


def trust_step(name: str, all_trusted: bool, **details: Any) -> StepResult:
    """``ok`` when every signing key is one the caller trusts, else ``self_asserted``
    (docs/adr/0008)."""
    if all_trusted:
        return StepResult.ok(name, trust=TRUST_CALLER, **details)
    return StepResult.self_asserted(name, SELF_ASSERTED_REASON, trust=TRUST_BUNDLE, **details)


# ------------------------------------------------------------------------------------------
# The actor-signature sidecar (any spec version; docs/formats.md §4): the signed event is the
# truth. An entry's actor_id is a label (a different one is warned about) and its signed_at is
# bound by nothing: it can only refuse, never admit. With a key_directory the directory is the
# source of the key, else the entry's own. Fail closed; self_asserted as the inline signatures.
STEP_SIDECAR: Final = "actor_signature_sidecar"
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


_NO_HASHES: Final[frozenset[str]] = frozenset()


def _malformed(message: str) -> errors.BundleError:
    return errors.BundleError("bundle.sidecar_malformed", message)


def _sidecar_fail(error: errors.AffidavitError, **details: Any) -> SidecarCheck:
    return SidecarCheck(StepResult.failed(STEP_SIDECAR, error, **details), _NO_HASHES, _NO_HASHES)


def sidecar_check(bundle: Mapping[str, Any], trust: ActorTrust | None = None) -> SidecarCheck:
    """The sidecar step (events must already have passed the chain check)."""
    sidecar = bundle.get("actor_signature_sidecar")
    if sidecar is None:
        step = StepResult.not_checked(STEP_SIDECAR, "no actor_signature_sidecar")
        return SidecarCheck(step, _NO_HASHES, _NO_HASHES)
    if not isinstance(sidecar, dict) or not isinstance(
        sidecar.get("signatures_by_event_hash"), dict
    ):
        return _sidecar_fail(_malformed("actor_signature_sidecar is malformed"))
    if sidecar.get("signature_alg") != "Ed25519" or sidecar.get("canonicalization") != (
        CANONICALIZATION
    ):
        return _sidecar_fail(_malformed("unsupported signature_alg or canonicalization"))
    recomputed = sidecar_hash(sidecar)
    claimed = sidecar.get("sidecar_hash")
    if not same_digest(recomputed, claimed):
        mismatch = errors.BundleError(
            "bundle.sidecar_hash_mismatch", "sidecar_hash does not recompute"
        )
        failed = StepResult.failed(STEP_SIDECAR, mismatch, expected=recomputed, actual=claimed)
        return SidecarCheck(failed, _NO_HASHES, _NO_HASHES)
    directory: dict[str, Any] | None = None
    nested = False
    if "key_directory" in bundle:
        directory = directory_entries(bundle["key_directory"])
        if directory is None:
            return _sidecar_fail(_malformed("key_directory is malformed"))
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
            return _sidecar_fail(error)
        if not isinstance(entries, list) or not entries:
            return _sidecar_fail(_malformed("signatures must be a non-empty array"))
        all_trusted = True
        for entry in entries:
            problem, key_b64 = _check_entry(event, entry, directory, nested=nested)
            if problem is not None:
                return _sidecar_fail(problem, event_hash=event_hash, event_id=event["event_id"])
            if entry["actor_id"] != event["actor_id"]:
                warnings.append(
                    f"{LABEL_MISMATCH}: sidecar entry for event {event['event_id']!r} is labelled "
                    f"actor {entry['actor_id']!r}; the signed event's actor is "
                    f"{event['actor_id']!r} (reported)"
                )
            # The caller's key window is judged at the signed, logged event time only.
            when = event["timestamp"]
            if trust is None or not trust.vouches(key_b64, event["actor_id"], when):
                all_trusted = False
            actors.add(event["actor_id"])
            checked += 1
        signed.add(event_hash)
        if all_trusted:
            trusted.add(event_hash)
    if not checked:
        return _sidecar_fail(_malformed("the sidecar holds no signature"))
    details: dict[str, Any] = {
        "signatures": checked,
        "events_signed": len(signed),
        "actors": sorted(actors),
        "binding_present": directory is not None,
        "binding_verified": directory is not None,
        "binding_source": "bundle_key_directory" if directory is not None else "",
        "bindings_checked": checked if directory is not None else 0,
    }
    step = trust_step(STEP_SIDECAR, len(trusted) == len(signed), **details)
    return SidecarCheck(step, frozenset(signed), frozenset(trusted), tuple(warnings))


def _check_entry(
    event: Mapping[str, Any], entry: Any, directory: dict[str, Any] | None, *, nested: bool
) -> tuple[errors.AffidavitError | None, str]:
    """(problem or None, the public key that verified the signature)."""
    if not isinstance(entry, dict) or not all(
        isinstance(entry.get(name), str) and entry.get(name) for name in _ENTRY_FIELDS
    ):
        return _malformed("a sidecar signature lacks a required field"), ""
    key_id = entry["key_id"]
    # The window is judged at the event's own (bound) timestamp; a falsy signed_at is absent.
    stated = entry.get("signed_at") or None
    if stated is not None and not isinstance(stated, str):
        return _malformed("signed_at must be an RFC 3339 string"), ""
    when = event["timestamp"]
    if directory is None:
        # No directory: the entry's own key, bound to the signed event's actor at its time.
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


# Step outcome_reconciliation (AiGentsy SDK 1.17.2, record_outcome_reconciled).

STEP_OUTCOME: Final = "outcome_reconciliation"
OUTCOME_RECONCILED: Final = "OUTCOME_RECONCILED"
VOCABULARIES: Final[Mapping[str, frozenset[str]]] = {
    "reconciliation_status": frozenset({"matched", "mismatched", "inconclusive", "unavailable"}),
    "readback_source_type": frozenset(
        {
            "first_party",
            "third_party",
            "platform_attested",
            "caller_attested",
            "signed_external",
            "unsigned_external",
        }
    ),
    "evidence_redaction_status": frozenset(
        {"hash_only", "summary_only", "redacted", "full_payload_opt_in"}
    ),
}


def check_reconciliation(events: Sequence[Mapping[str, Any]]) -> StepResult | None:
    """The step for chain-checked events, or None when no ``OUTCOME_RECONCILED`` is present."""
    records: list[dict[str, Any]] = []
    unknown: list[str] = []
    for index, event in enumerate(events):
        if event["event_type"] != OUTCOME_RECONCILED:
            continue
        payload = event["payload"]
        record: dict[str, Any] = {"event_id": event["event_id"], "index": index}
        for field, allowed in VOCABULARIES.items():
            value = payload.get(field)
            record[field] = value
            if not isinstance(value, str) or value not in allowed:
                unknown.append(f"events[{index}].payload.{field}={value!r}")
        records.append(record)
    if not records:
        return None
    if unknown:
        error = errors.BundleError(
            "bundle.reconciliation_vocabulary_unknown",
            f"{len(unknown)} value(s) outside the OUTCOME_RECONCILED vocabularies: "
            + ", ".join(unknown[:5]),
        )
        return StepResult.failed(STEP_OUTCOME, error, unknown=unknown, records=records)
    return StepResult.ok(STEP_OUTCOME, records=records)
