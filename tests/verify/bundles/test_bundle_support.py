"""Shared builders for the bundle tests and vectors: TEST-ONLY keys, a fixed time, resealing.

Everything here is deterministic: keys come from fixed labels (``derive_test_key``), the time is
fixed, and each call stamps into a fresh log, so the bundles are byte-identical run after run.
"""

from __future__ import annotations

import copy
import datetime
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.verify.bundles.events import event_hash, leaf_data, signing_payload
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.contracts.policy import AcceptancePolicy

WHEN = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
LOG_KEY = derive_test_key("affidavit vectors: log key (TEST-ONLY)", key_id="test-log-key")
OTHER_KEY = derive_test_key("affidavit vectors: untrusted key (TEST-ONLY)", key_id="other-key")
ACTOR_KEY = derive_test_key("affidavit vectors: actor key (TEST-ONLY)", key_id="actor-key-1")
LOG_ID = "affidavit-test-log"
ACTOR_ID = "agent-test-1"

POLICY = AcceptancePolicy.from_json(
    {
        "rules": [
            {
                "conditions": [
                    {"field": "signal_a", "op": "==", "value": True},
                    {"field": "signal_b", "op": "==", "value": True},
                ],
                "action": "auto_accept",
            },
            {
                "conditions": [{"field": "signal_a", "op": "==", "value": False}],
                "action": "auto_reject",
            },
        ],
        "default": "require_review",
    }
)
OUTPUTS: dict[str, Any] = {
    "accepted": {"signal_a": True, "signal_b": True},
    "review": {"signal_a": True, "signal_b": False},
    "rejected": {"signal_a": False, "signal_b": True},
    "invalid_output": {"signal_a": 1, "signal_b": True},
}


def contract(**changes: Any) -> dict[str, Any]:
    """The example contract with lifecycle changes (outside both hashes)."""
    return {**example_contract(), **changes}


def stamp(
    outputs: dict[str, Any],
    *,
    key: SigningKey = LOG_KEY,
    actor: bool = False,
    declaration: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Stamp ``{deal_id: raw output}`` into a fresh log; returns ``{deal_id: bundle}``."""
    folder = Path(tempfile.mkdtemp(prefix="affidavit-bundles-"))
    items = [StampItem(deal, declaration or contract(), raw) for deal, raw in outputs.items()]
    with TransparencyLog.create(folder / "log.db", key, LOG_ID) as log:
        bundles = stamp_bundles(
            log,
            items,
            POLICY,
            when=WHEN,
            actor_key=ACTOR_KEY if actor else None,
            actor_id=ACTOR_ID,
        )
    return {b["deal_id"]: b for b in bundles}


def reseal(
    bundle: dict[str, Any], *, anchor: bool = False, key: SigningKey = LOG_KEY
) -> dict[str, Any]:
    """After a change: recompute event hashes, the chain, actor signatures and ``bundle_hash``.

    With ``anchor`` the last event is appended to a fresh log and the bundle gets a new inclusion
    proof and head, so only the semantic change is left for a verifier to find.
    """
    out = copy.deepcopy(bundle)
    previous = ""
    for event in out["events"]:
        event["prev_hash"] = previous
        event["hash"] = event_hash(event)
        if "actor_signature" in event:
            key_id = event["actor_signature"]["key_id"]
            event["actor_signature"]["signature"] = ACTOR_KEY.sign_b64(
                signing_payload(event, key_id)
            )
        previous = event["hash"]
    if anchor:
        folder = Path(tempfile.mkdtemp(prefix="affidavit-reseal-"))
        with TransparencyLog.create(folder / "log.db", key, LOG_ID) as log:
            (index,) = log.append([leaf_data(out["events"][-1])])
            head = log.signed_tree_head(WHEN)
            out["merkle_inclusion"] = log.inclusion_proof(index, head.tree_size).to_json(LOG_ID)
            out["signed_tree_head"] = head.to_json()
    out["bundle_hash"] = bundle_hash(out)
    return out


def edit(bundle: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A deep copy of ``bundle`` with ``change`` applied (no resealing)."""
    out = copy.deepcopy(bundle)
    change(out)
    return out


def failed_step(result: Any) -> tuple[str, str | None]:
    """The (name, code) of a result's failed step; the result must have one."""
    step = result.failed_step
    assert step is not None, result.to_json()
    return step.name, step.code


def verifier() -> BundleVerifier:
    """A verifier that trusts the TEST-ONLY log key."""
    return BundleVerifier([LOG_KEY.public_key])


def test_support_stamps_verified_bundles() -> None:
    bundles = stamp({"d-1": OUTPUTS["accepted"]})
    assert verifier().verify(bundles["d-1"]).verdict == "verified"
    assert reseal(bundles["d-1"]) == bundles["d-1"]
