"""Differential-test bundles in the published ProofPack shapes, signed by TEST-ONLY keys.

The shapes are the ones docs/formats.md §4 documents and the pinned peer (``aigentsy-verify`` 1.6.3)
reads: hash-chained events, the finality leaf, ``merkle_inclusion``, the signed tree head,
spec 3.0.0 ``actor_signature`` with a ``key_directory`` (flat ``{key_id: entry}`` or nested
``{key_directory_version, keys_by_key_id}``), the ``actor_signature_sidecar``, consequence
authorizations (``CONSEQUENCE_AUTHORIZED`` with ``identity_hash``, later events with
``consequence_identity_hash``), swarm designations (``payload.swarm_policy``), the
``swarm_enforcement`` snapshot, ``policy_layer`` and anchor receipts. Every line is written here
from those formats; nothing is copied from the peer.

Every bundle's logged leaf is appended to Affidavit's own :class:`TransparencyLog`, so its tree
head verifies under :data:`LOG_KEY`. A :class:`Case` is built in two phases: ``draft`` (events,
proofs, signatures: what the log covers) and ``finish`` (inclusion proof, head, ``bundle_hash``,
then changes outside the hash or deliberate tampering).

``tags`` name what a case exercises; the differential test maps some tags to rows of
docs/parity.md where the two verifiers are expected to decide differently.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.bundles.events import event_hash, leaf_data, signing_payload
from affidavit.verify.bundles.hashing import bundle_hash

__all__ = [
    "ACTORS",
    "ANCHOR_RECEIPT_NAMES",
    "LOG_ID",
    "LOG_KEY",
    "Case",
    "anchor_receipts",
    "build_cases",
    "generated_cases",
    "signed_all",
]

T0: Final = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
LOG_ID: Final = "parity-test-log"
LOG_KEY: Final = derive_test_key("parity: log key", key_id="parity-log-key")  # TEST-ONLY
OTHER_LOG_KEY: Final = derive_test_key("parity: some other log key")  # TEST-ONLY
# actor name -> (actor_id, key_id, TEST-ONLY key)
ACTORS: Final = {
    name: (f"agent:{name}", f"key-{name}", derive_test_key(f"parity: actor {name}"))
    for name in ("buyer", "seller", "runtime", "intruder")
}
SWARM_POLICY_VERSION: Final = "swarm_enforcement/v1"
DECISION_CONTEXT_VERSION: Final = "swarm_decision/v1"
IDENTITY_A: Final = hashlib.sha256(b"consequence A: pay 100 to acct 1").hexdigest()
IDENTITY_B: Final = hashlib.sha256(b"consequence B: pay 900 to acct 2").hexdigest()


def ts(seconds: float) -> str:
    """``T0 + seconds`` in the peer's timestamp form (``%Y-%m-%dT%H:%M:%SZ``)."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def py_compact_hash(value: Any) -> str:
    """``H(py-compact(value))`` (docs/formats.md §1), the peer's convention for snapshot digests."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# -- events -------------------------------------------------------------------------------------


@dataclass
class Ev:
    """One event to write: its type, actor, payload and how (if at all) it is signed inline."""

    event_type: str
    actor: str = "buyer"
    payload: dict[str, Any] = field(default_factory=dict)
    sign: str | None = None  # None, or the ACTORS name whose key signs it
    sign_as_key_id: str | None = None  # the key_id written into the signature (default: signer's)
    at: float | None = None  # seconds after T0 (default: its position)


@dataclass
class Case:
    """One bundle for the differential: how to write it, and what it exercises (``tags``)."""

    name: str
    events: list[Ev]
    spec_version: str | None = "2.0.0"
    profile: str = "default"  # or "swarm-strict"
    logged: int | None = None  # index of the event whose leaf is logged (default: last finality)
    directory: dict[str, dict[str, Any]] | None = None  # key_id -> entry
    directory_shape: str = "flat"  # or "nested"
    sidecar: list[dict[str, Any]] | None = None  # [{event: index, actor, ...overrides}]
    proofs: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # top-level fields outside bundle_hash
    first_prev_hash: str = ""
    event_changes: dict[int, dict[str, Any]] = field(default_factory=dict)  # before hashing
    post: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    bundle: dict[str, Any] | None = None  # filled by build_cases

    def describe(self) -> str:
        """A one-line description for failure messages and the findings file."""
        return f"{self.name} [{self.profile}; {', '.join(sorted(self.tags)) or 'plain'}]"


FINALITY: Final = frozenset(
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


def _write_events(case: Case, deal_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    previous = case.first_prev_hash
    for seq, spec in enumerate(case.events):
        actor_id = ACTORS[spec.actor][0] if spec.actor in ACTORS else spec.actor
        event: dict[str, Any] = {
            "event_id": f"evt-{seq}",
            "event_type": spec.event_type,
            "deal_id": deal_id,
            "actor_id": actor_id,
            "timestamp": ts(seq if spec.at is None else spec.at),
            "payload": copy.deepcopy(spec.payload),
            "prev_hash": previous,
        }
        event.update(copy.deepcopy(case.event_changes.get(seq, {})))
        event["hash"] = event_hash(event)
        if spec.sign is not None:
            _, own_key_id, key = ACTORS[spec.sign]
            key_id = spec.sign_as_key_id or own_key_id
            event["actor_signature"] = {
                "key_id": key_id,
                "signature": key.sign_b64(signing_payload(event, key_id)),
            }
        events.append(event)
        previous = event["hash"]
    return events


def directory_entry(
    actor: str,
    *,
    issued: float = -86400,
    revoked: float | None = None,
    status: str = "active",
    key_of: str | None = None,
    actor_id: str | None = None,
) -> dict[str, Any]:
    """A key-directory entry for ``actor``'s key (``key_of``: put another actor's key there)."""
    return {
        "actor_id": actor_id or ACTORS[actor][0],
        "public_key_base64": ACTORS[key_of or actor][2].public_key.b64,
        "issued_at": ts(issued),
        "revoked_at": None if revoked is None else ts(revoked),
        "status": status,
    }


def _key_directory(case: Case) -> dict[str, Any] | None:
    if case.directory is None:
        return None
    if case.directory_shape == "nested":
        return {"key_directory_version": "1.0", "keys_by_key_id": copy.deepcopy(case.directory)}
    return copy.deepcopy(case.directory)


def _sidecar(case: Case, events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    if case.sidecar is None:
        return None
    by_hash: dict[str, list[dict[str, Any]]] = {}
    for raw in case.sidecar:
        spec = dict(raw)
        event = events[spec.pop("event")]
        signer = spec.pop("signer", None) or spec.get("actor", "buyer")
        actor_name = spec.pop("actor", signer)
        _, key_id, key = ACTORS[signer]
        key_id = spec.pop("key_id", key_id)
        entry: dict[str, Any] = {
            "actor_id": ACTORS[actor_name][0] if actor_name in ACTORS else actor_name,
            "key_id": key_id,
            "public_key_base64": key.public_key.b64,
            "signature_base64": key.sign_b64(signing_payload(event, key_id)),
            "intent": "attest_event",
            "signed_at": event["timestamp"],
            "signed_payload_canonical_keys": [
                "actor_id",
                "deal_id",
                "event_id",
                "event_type",
                "key_id",
                "payload",
                "prev_hash",
                "timestamp",
            ],
        }
        entry.update(spec)  # overrides: signed_at, public_key_base64, signature_base64, ...
        entry = {k: v for k, v in entry.items() if v is not DROP}
        by_hash.setdefault(event["hash"], []).append(entry)
    sidecar: dict[str, Any] = {
        "sidecar_version": "1.0",
        "canonicalization": "canonical_event_for_signing_v1",
        "signature_alg": "Ed25519",
        "signatures_by_event_hash": by_hash,
    }
    sidecar["sidecar_hash"] = py_compact_hash(sidecar)
    return sidecar


DROP: Final = object()  # a sidecar override value that removes the field


def _logged_index(case: Case) -> int:
    if case.logged is not None:
        return case.logged
    return max(i for i, e in enumerate(case.events) if e.event_type in FINALITY)


def build_cases(
    cases: Sequence[Case], log: TransparencyLog, *, when: datetime | None = None
) -> None:
    """Write every case's bundle: one append, one signed head, then each bundle's own changes."""
    drafts = []
    for number, case in enumerate(cases):
        deal_id = f"deal-{number:04d}"
        events = _write_events(case, deal_id)
        draft: dict[str, Any] = {"deal_id": deal_id, "proofs": copy.deepcopy(case.proofs)}
        if case.spec_version is not None:
            draft = {"spec_version": case.spec_version, **draft}
        draft["events"] = events
        drafts.append((case, draft, leaf_data(events[_logged_index(case)])))
    indexes = log.append([leaf for _, _, leaf in drafts])
    head = log.signed_tree_head(when or T0 + timedelta(hours=1))
    for (case, draft, _), index in zip(drafts, indexes, strict=True):
        bundle = dict(draft)
        bundle["merkle_inclusion"] = log.inclusion_proof(index, head.tree_size).to_json(log.log_id)
        bundle["bundle_hash"] = bundle_hash(bundle)
        bundle["signed_tree_head"] = head.to_json()
        directory = _key_directory(case)
        if directory is not None:
            bundle["key_directory"] = directory
        sidecar = _sidecar(case, draft["events"])
        if sidecar is not None:
            bundle["actor_signature_sidecar"] = sidecar
        bundle.update(copy.deepcopy(case.extra))
        for change in case.post:
            change(bundle)
        case.bundle = bundle


def rehash(bundle: dict[str, Any]) -> None:
    """Recompute every event hash, the chain and ``bundle_hash`` after an edit (an attacker's
    repair; the inclusion proof and the head stay as they were)."""
    previous = bundle["events"][0]["prev_hash"] if bundle["events"] else ""
    for event in bundle["events"]:
        event["prev_hash"] = previous
        event["hash"] = event_hash(event)
        previous = event["hash"]
    bundle["bundle_hash"] = bundle_hash(bundle)


# -- building blocks ------------------------------------------------------------------------------

_ALL_ACTORS: Final = ("buyer", "seller", "runtime")


def full_directory(**overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A directory enrolling buyer, seller and runtime; ``overrides[actor]`` edits one entry."""
    directory = {ACTORS[a][1]: directory_entry(a) for a in _ALL_ACTORS}
    for actor, change in overrides.items():
        directory[ACTORS[actor][1]].update(change)
    return directory


def deal_events(
    *,
    consequence: str = "none",
    swarm: dict[str, Any] | None = None,
    sign: Callable[[str], str | None] = lambda _t: None,
    decision_context: dict[str, Any] | None = None,
    after_finality: str | None = None,
) -> list[Ev]:
    """A deal: created, proof ready, optional consequence authorization and dispatch, outcome.

    ``consequence``: ``none``; ``bound`` (outcome carries the authorized identity);
    ``mismatch`` (outcome carries another identity); ``not_dispatched`` (no later identity);
    ``dispatch_mismatch`` (a CONSEQUENCE_DISPATCHED event carries another identity); ``denied``
    (decision ``denied``, later identity present). ``sign(event_type)`` names the actor whose
    key signs it inline.
    """
    events = [Ev("DEAL_CREATED", "buyer", {"terms": {"amount": 100, "currency": "USD"}})]
    if swarm is not None:
        events.append(Ev("SWARM_POLICY_SET", "runtime", {"swarm_policy": swarm}))
    events.append(Ev("PROOF_READY", "seller", {"proof_count": 0}))
    outcome: dict[str, Any] = {"decision": "auto_accept"}
    if consequence != "none":
        payload: dict[str, Any] = {
            "identity_hash": IDENTITY_A,
            "decision": "denied" if consequence == "denied" else "authorized",
            "acceptance_id": "acc-1",
        }
        if decision_context is not None:
            payload.update(decision_context)
        events.append(Ev("CONSEQUENCE_AUTHORIZED", "runtime", payload))
        if consequence == "dispatch_mismatch":
            events.append(Ev("CONSEQUENCE_DISPATCHED", "runtime", {"identity_hash": IDENTITY_B}))
        elif consequence in ("bound", "mismatch", "denied"):
            events.append(Ev("CONSEQUENCE_DISPATCHED", "runtime", {"identity_hash": IDENTITY_A}))
        if consequence in ("bound", "denied", "dispatch_mismatch"):
            outcome["consequence_identity_hash"] = IDENTITY_A
        elif consequence == "mismatch":
            outcome["consequence_identity_hash"] = IDENTITY_B
    events.append(Ev("OUTCOME_RECORDED", "buyer", outcome))
    if after_finality == "payout":
        events.append(Ev("PAYOUT_REQUESTED", "seller", {"amount": 900}))
    elif after_finality == "outcome":
        events.append(Ev("OUTCOME_RECORDED", "buyer", {"decision": "auto_reject"}))
    for event in events:
        event.sign = sign(event.event_type) if event.sign is None else event.sign
        if event.sign == "self":
            event.sign = event.actor
    return events


def swarm_policy(required: Sequence[str], *, version: str = SWARM_POLICY_VERSION) -> dict[str, Any]:
    """A ``swarm_policy`` designation (the authority for the swarm-strict profile)."""
    return {"policy_version": version, "required_signed_event_types": list(required)}


def decision_context(
    policy_event_id: str | None, required: Sequence[str], **changes: Any
) -> dict[str, Any]:
    """``{swarm_decision, swarm_decision_digest}`` for a CONSEQUENCE_AUTHORIZED payload."""
    context: dict[str, Any] = {
        "context_version": DECISION_CONTEXT_VERSION,
        "enforcement": "on",
        "evaluated": True,
        "applicable": True,
        "satisfied": True,
        "reason": "all designated events signed",
        "checks_passed": list(required),
        "checks_failed": [],
        "identity_hash": IDENTITY_A,
        "required_signed_event_types": list(required),
    }
    if policy_event_id is not None:
        context["policy_event_id"] = policy_event_id
    context.update(changes)
    digest_material = {k: v for k, v in context.items() if k not in ("recorded_at", "event_id")}
    return {"swarm_decision": context, "swarm_decision_digest": py_compact_hash(digest_material)}


def swarm_snapshot(required: Sequence[str], *, tamper_hash: bool = False) -> dict[str, Any]:
    """The runtime's hash-committed ``swarm_enforcement`` section (outside ``bundle_hash``)."""
    snapshot = {"summary": {"required_signed_event_types": list(required)}, "mode": "enforce"}
    digest = py_compact_hash(snapshot)
    return {"snapshot": snapshot, "snapshot_hash": ("0" * 64) if tamper_hash else digest}


POLICY_LAYERS: Final = (
    {"sla": {"guarantees": {"delivery_hours": 24, "quality_floor": 0.9}}},
    {
        "mandate": {"mandate_id": "m-1", "max_amount_usd": 500},
        "spawn": {"parent": "agent:buyer"},
        "attestation": {"ocs_score": 91, "ocs_tier": "gold"},
        "outcome": {"metric": "accuracy", "threshold": 0.8},
        "referral_chain": ["agent:a", "agent:b"],
    },
    {"sla": "not an object", "referral_chain": [], "unknown_section": {"x": 1}},
)


def signed_all(event_type: str) -> str | None:
    """A ``sign`` choice for :func:`deal_events`: every event signed by its own actor."""
    return "self"


# -- random cases ----------------------------------------------------------------------------------


def _no_signature(_event_type: str) -> str | None:
    return None


def _outcome_signed(event_type: str) -> str | None:
    return "self" if event_type == "OUTCOME_RECORDED" else None


def _designated_signed(event_type: str) -> str | None:
    designated = ("SWARM_POLICY_SET", "CONSEQUENCE_AUTHORIZED", "OUTCOME_RECORDED")
    return "self" if event_type in designated else None


_DESIGNATIONS: Final = (["OUTCOME_RECORDED"], ["CONSEQUENCE_AUTHORIZED", "OUTCOME_RECORDED"])
_KEY_CHANGES: Final[dict[str | None, dict[str, Any]]] = {
    None: {},
    "revoked": {"revoked_at": ts(-60), "status": "revoked"},
    "not_yet": {"issued_at": ts(3600)},
    "inactive": {"status": "suspended"},
}


def generated_cases(seed: int, count: int) -> list[Case]:
    """``count`` random combinations of the dimensions above (seeded: the same list each run).

    Besides ``gen:*`` tags naming the draw, each case gets the semantic tags the handmade cases
    use (``v3_nested_directory``, ``inline_inactive_status``, ``after_finality``, ...), derived
    from what was drawn, so the differential test explains its differences the same way.
    """
    rng = random.Random(seed)
    cases = []
    for n in range(count):
        consequence = rng.choice(
            ["none", "none", "bound", "mismatch", "not_dispatched", "denied", "dispatch_mismatch"]
        )
        spec = rng.choice(["2.0.0", "3.0.0", "3.0.0"])
        signer = rng.choice(["none", "all", "outcome_only"]) if spec == "3.0.0" else "none"
        key_change = rng.choice([None, None, "revoked", "not_yet", "inactive"])
        changed_actor = rng.choice(list(_ALL_ACTORS))
        change = _KEY_CHANGES[key_change]
        directory = full_directory(**{changed_actor: change}) if change else full_directory()
        shape = rng.choice(["flat", "flat", "nested"])
        swarm_on = rng.random() < 0.3
        if swarm_on:  # mostly well-signed, so both verdicts occur under the profile
            spec = "3.0.0"
            signer = rng.choice(["all", "all", "designated", "outcome_only"])
        required = rng.choice(_DESIGNATIONS)
        after = rng.choice([None, None, None, None, "payout"])
        sign = {
            "none": _no_signature,
            "all": signed_all,
            "outcome_only": _outcome_signed,
            "designated": _designated_signed,
        }[signer]
        events = deal_events(
            consequence=consequence,
            swarm=swarm_policy(required) if swarm_on or rng.random() < 0.2 else None,
            sign=sign,
            after_finality=after,
        )
        sidecar_mode = rng.choice([None, None, "ok", "label"])
        sidecar = None
        sidecar_actor = rng.choice(["buyer", "seller"])
        if sidecar_mode is not None:
            index = next(i for i, e in enumerate(events) if e.actor == sidecar_actor)
            entry: dict[str, Any] = {"event": index, "signer": sidecar_actor}
            entry["actor"] = f"label:{sidecar_actor}" if sidecar_mode == "label" else sidecar_actor
            sidecar = [entry]
        has_directory = spec == "3.0.0" or sidecar is not None
        tags = {f"gen:{consequence}", f"gen:spec{spec}", f"gen:sign-{signer}"}
        tags |= {f"gen:key-{key_change}-{changed_actor}" if key_change else "gen:key-ok"}
        tags.add(f"gen:dir-{shape if has_directory else 'none'}")
        signing_actors = {e.actor for e in events if e.sign is not None}
        if signing_actors and shape == "nested":
            tags.add("v3_nested_directory")
        if key_change == "inactive" and changed_actor in signing_actors:
            tags.add("inline_inactive_status")
        if after:
            tags.add("after_finality")
        if consequence in ("mismatch", "dispatch_mismatch"):
            tags.add("consequence_mismatch")
        if sidecar_mode is not None:
            tags |= {"sidecar", f"gen:sidecar-{sidecar_mode}"}
            if sidecar_mode == "label":
                tags.add("sidecar_label_mismatch")
            if shape == "flat" and key_change and changed_actor == sidecar_actor:
                tags.add("sidecar_flat_directory_checked")
            if key_change == "inactive" and changed_actor == sidecar_actor:
                tags.add("sidecar_inactive")
        if swarm_on:
            tags.add("swarm")
        extra: dict[str, Any] = {}
        if rng.random() < 0.3:
            extra["policy_layer"] = rng.choice(POLICY_LAYERS)
            tags.add("policy_layer")
        cases.append(
            Case(
                f"gen-{seed}-{n}",
                events,
                spec,
                profile="swarm-strict" if swarm_on else "default",
                directory=directory if has_directory else None,
                directory_shape=shape,
                sidecar=sidecar,
                extra=extra,
                tags=tags,
            )
        )
    return cases


# -- anchor receipts (aigentsy_verify.anchor's shape) --------------------------------------


def anchor_receipts(head: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Anchor receipts over ``head`` (a signed tree head): one good, then one per peer check."""
    sth = {k: head[k] for k in ("log_id", "tree_size", "root_hash", "timestamp", "signature")}
    good: dict[str, Any] = {
        "receipt_version": "1.0",
        "anchor_id": "anc-0001",
        "sth": sth,
        "sth_digest": py_compact_hash(sth),
        "sth_digest_algorithm": "SHA-256",
        "anchor_method": "rfc3161",
        "tsa_url": "http://127.0.0.1:9/tsa",
        "tsa_status": "granted",
        "anchored_at": ts(3700),
        "tsr_base64": base64.b64encode(b"opaque test token").decode(),
    }
    receipts = {"anchor_good": good}
    for name in ("receipt_version", "anchor_id", "sth", "sth_digest", "tsa_status", "anchored_at"):
        receipts[f"anchor_missing_{name}"] = {k: v for k, v in good.items() if k != name}
    receipts["anchor_sth_missing_signature"] = {
        **good,
        "sth": {k: v for k, v in sth.items() if k != "signature"},
    }
    receipts["anchor_digest_algorithm_sha1"] = {**good, "sth_digest_algorithm": "SHA-1"}
    receipts["anchor_digest_mismatch"] = {**good, "sth_digest": "0" * 64}
    receipts["anchor_sth_edited"] = {**good, "sth": {**sth, "tree_size": sth["tree_size"] + 1}}
    receipts["anchor_tsa_rejected"] = {**good, "tsa_status": "rejection"}
    receipts["anchor_tsr_empty"] = {**good, "tsr_base64": ""}
    return receipts


ANCHOR_RECEIPT_NAMES: Final = tuple(
    anchor_receipts(
        {"log_id": "l", "tree_size": 1, "root_hash": "0" * 64, "timestamp": "", "signature": ""}
    )
)


def write_json(path: Path, document: Any) -> Path:
    """Write ``document`` as JSON (what both CLIs read)."""
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path
