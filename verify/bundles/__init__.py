"""The bundles room: ProofPack bundle verification (docs/formats.md §4) and outcome attestations.

:mod:`.verifier` runs the step plan (its docstring lists every step); the steps live beside it:
:mod:`.views` (the parts, read once), :mod:`.hashing` (bundle, event and proof hashes),
:mod:`.events` (the chain), :mod:`.inclusion`, :mod:`.binding` (cross-reference),
:mod:`.actor_keys`, :mod:`.actor_trust` and :mod:`.sidecar` (actor signatures),
:mod:`.adapter_replay`, :mod:`.outcome`, :mod:`.swarm` and :mod:`.swarm_decision` (profile
``swarm-strict``), :mod:`.tlog_step`, :mod:`.policy_layer`; :mod:`.attestation` verifies an
OutcomeAttestation. This room is the ``verify bundle`` path (docs/adr/0003-cold-start.md).

This room is internal (issue 32; docs/adr/0003-cold-start.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. The layers
above import a name from the module that defines it (each module's ``__all__`` says what it
offers); the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
