"""Inputs Affidavit refuses and aigentsy-verify 1.6.3 accepts, each with its reason in
docs/parity.md (issue 35): an empty value is never read as "absent", and a hash has one form.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.bundles.hashing import bundle_hash

from tests.verify.bundles.test_bundle_support import OUTPUTS, stamp, verifier
from tests.verify.bundles.test_bundle_swarm import _peer_verified as peer_swarm_verified
from tests.verify.bundles.test_bundle_swarm import _stamp as swarm_bundle
from tests.verify.bundles.test_bundle_swarm import _strict as strict_verifier


@pytest.fixture(scope="module")
def plain() -> dict[str, Any]:
    return stamp(OUTPUTS)["accepted"]  # four leaves in one log: a non-empty audit path


def _failed(bundle: dict[str, Any]) -> tuple[str, str | None]:
    step = verifier().verify(bundle).failed_step
    assert step is not None
    return step.name, step.code


def test_uppercase_hex_proof_node(plain: dict[str, Any]) -> None:
    bundle = copy.deepcopy(plain)
    path = bundle["merkle_inclusion"]["proof"]
    assert path
    node = path[0]
    if isinstance(node, dict):
        node["hash"] = node["hash"].upper()
    else:
        path[0] = node.upper()
    bundle["bundle_hash"] = bundle_hash(bundle)
    assert _failed(bundle) == ("merkle_inclusion", "bundle.inclusion_malformed")


def test_empty_directory_actor_id(signed: dict[str, Any]) -> None:
    bundle = copy.deepcopy(signed)
    for entry in bundle["key_directory"].values():
        entry["actor_id"] = ""
    assert _failed(bundle) == ("actor_signatures", "event.actor_mismatch")


def test_empty_sidecar_object(plain: dict[str, Any]) -> None:
    bundle = {**plain, "actor_signature_sidecar": {}}
    assert _failed(bundle) == ("actor_signature_sidecar", "bundle.sidecar_malformed")


def test_empty_inclusion_object(plain: dict[str, Any]) -> None:
    bundle = {**plain, "merkle_inclusion": {}}
    bundle["bundle_hash"] = bundle_hash(bundle)
    assert _failed(bundle) == ("merkle_inclusion", "bundle.inclusion_malformed")


def test_empty_actor_signature(signed: dict[str, Any]) -> None:
    bundle = copy.deepcopy(signed)
    bundle["events"][0]["actor_signature"] = {}
    bundle["bundle_hash"] = bundle_hash(bundle)
    assert _failed(bundle) == ("actor_signatures", "event.malformed")


def test_empty_swarm_enforcement_object() -> None:
    # Only the snapshot section differs from a stamped swarm bundle both verifiers accept under
    # their swarm-strict profiles (signed designation, snapshot present); it sits outside
    # bundle_hash, so nothing else needs redoing.
    swarm = swarm_bundle()
    assert strict_verifier().verify(swarm).verdict == "verified"
    assert peer_swarm_verified(swarm)
    bundle = {**swarm, "swarm_enforcement": {}}
    assert peer_swarm_verified(bundle)  # the peer reads {} as no snapshot (skipped)
    step = strict_verifier().verify(bundle).failed_step
    assert step is not None
    assert (step.name, step.code) == ("swarm_snapshot", "bundle.swarm_snapshot_mismatch")
