"""The bundles room: ProofPack bundle verification (docs/formats.md §4) and outcome attestations.

:mod:`.verifier` runs the step plan (its docstring lists every step); the steps live beside it:
:mod:`.views` (the parts, read once), :mod:`.hashing` (bundle, event and proof hashes),
:mod:`.events` (the chain), :mod:`.inclusion`, :mod:`.binding` (cross-reference),
:mod:`.actor_keys`, :mod:`.actor_trust` and :mod:`.sidecar` (actor signatures),
:mod:`.adapter_replay`, :mod:`.outcome`, :mod:`.swarm` and :mod:`.swarm_decision` (profile
``swarm-strict``), :mod:`.tlog_step`, :mod:`.policy_layer`; :mod:`.attestation` verifies an
OutcomeAttestation. This room is the ``verify bundle`` path (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "ActorTrust": "actor_trust",
    "BundleVerifier": "verifier",
    "FINALITY_EVENT_TYPES": "events",
    "TrustedActorKey": "actor_trust",
    "bundle_hash": "hashing",
    "event_hash": "events",
    "leaf_data": "events",
    "proof_hash": "hashing",
    "signing_payload": "events",
    "verify_attestation": "attestation",
    "verify_bundle": "verifier",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
