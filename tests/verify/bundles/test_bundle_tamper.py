"""Any single change to a stamped bundle is rejected, and by the step responsible for that part.

Two properties over every path of 2.0.0 and 3.0.0 bundles (values, keys, element order, proof
hashes, indexes, sizes, signature bytes, the embedded contract, normalized inputs, the policy
snapshot):

1. a plain mutation is caught: by ``bundle_hash`` for the hashed parts, by ``sth_signature`` for
   the tree head, by ``actor_signatures`` for the key directory (or the bundle is unreadable);
2. the same mutation with every hash repaired (events re-chained, actor signatures re-made,
   ``bundle_hash`` recomputed) is still caught, now by the deeper step that owns the part.

Outside every check by design, so not mutated: ``exported_at`` (export metadata), the tree head's
``key_id`` and optional ``algorithm`` (unsigned; dropping them changes nothing, trust comes from
the caller's keys) and a proof node's ``position``
(left/right comes from the index, docs/formats.md §4) in the repaired property.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path as _FilePath
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.verify.bundles.test_bundle_support import OUTPUTS, reseal, stamp, verifier

_KNOWN_CODES = {
    entry["code"]
    for entry in json.loads(
        (_FilePath(__file__).resolve().parents[3] / "specs" / "error-codes.json").read_text()
    )["codes"]
}
_BUNDLES = [*stamp(OUTPUTS).values(), *stamp(OUTPUTS, actor=True).values()]
_SKIP_TOP = {"exported_at"}
Path = tuple[Any, ...]


def _paths(value: Any, prefix: Path = ()) -> list[Path]:
    out: list[Path] = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


def _allowed(path: Path, repaired: bool) -> bool:
    if path[0] in _SKIP_TOP or path in (("signed_tree_head", "key_id"), ("signed_tree_head",)):
        return False
    if path[0] == "key_directory" and len(path) == 2:
        return False  # dropping "revoked_at": null is the same entry (no end of validity)
    if repaired:
        if path[0] in (
            "bundle_hash",
            "signed_tree_head",
            "key_directory",
            "spec_version",
            "deal_id",
        ):
            return False  # covered by the plain property; repairing would not apply
        if path[0] == "merkle_inclusion" and (len(path) == 1 or path[-2] == "proof"):
            return False  # drops/renames log_id (optional) or a node's position (informative)
        if path[-1] == "position" or (path[-1] == "hash" and path[0] == "events"):
            return False
        if path[0] == "events" and len(path) == 2:
            return False  # dropping or renaming an event's last key: resealing restores it
        if path[0] == "events" and len(path) >= 3 and path[2] in ("prev_hash", "actor_signature"):
            return False  # resealing rewrites these by construction
    return True


def _mutate(value: Any, kind: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 + kind
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value[:-1] + ("x" if not value.endswith("x") else "y") if value else "x"
    if value is None:
        return [0, "", {}][kind % 3]
    if isinstance(value, list):
        if len(value) >= 2 and kind % 2 == 0:
            return [value[1], value[0], *value[2:]]  # order
        return value[:-1] if value else [None]
    if isinstance(value, dict):
        if not value:
            return {"x": 1}
        keys = list(value)
        if kind % 2 == 0:
            return {k: v for k, v in value.items() if k != keys[-1]}  # drop a key
        return {(k + "_" if k == keys[0] else k): v for k, v in value.items()}  # rename a key
    raise AssertionError(type(value))


def _apply(bundle: dict[str, Any], path: Path, kind: int) -> dict[str, Any]:
    out = copy.deepcopy(bundle)
    parent: Any = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = _mutate(parent[path[-1]], kind)
    return out


_PLAIN = {
    "parse": {"bundle.malformed", "bundle.unsupported_version"},
    "bundle_hash": {"bundle.hash_mismatch", "canonical.non_finite"},
    "sth_signature": {"treehead.signature_bad", "treehead.malformed"},
}
_ACTOR_CODES = {
    "event.key_unknown",
    "event.key_not_valid",
    "event.actor_mismatch",
    "event.signature_bad",
    "bundle.sidecar_malformed",
    "key.bad_base64",
    "key.wrong_length",
    "key.not_on_curve",
    "key.non_canonical",
    "key.weak",
}


def _draw(data: st.DataObject, repaired: bool) -> tuple[dict[str, Any], Path, int]:
    bundle = data.draw(st.sampled_from(_BUNDLES))
    paths = [p for p in _paths(bundle) if _allowed(p, repaired)]
    return bundle, data.draw(st.sampled_from(paths)), data.draw(st.integers(0, 5))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_single_change_is_rejected(data: st.DataObject) -> None:
    bundle, path, kind = _draw(data, repaired=False)
    result = verifier().verify(_apply(bundle, path, kind))
    assert not result.verified
    step = result.failed_step
    assert step is not None, (path, result.to_json())
    if path[0] == "key_directory":
        assert (step.name, step.code in _ACTOR_CODES) == ("actor_signatures", True), path
    elif path[0] == "signed_tree_head":
        assert step.name == "sth_signature", path
        assert step.code in _PLAIN["sth_signature"], path
    else:
        assert step.name in ("parse", "bundle_hash"), (path, step)
        assert step.code in _PLAIN[step.name], (path, step)


_REPAIRED = {
    # part of the bundle -> steps that may own a change there once every hash is repaired
    "events": {"event_chain", "cross_reference", "adapter_replay", "proof_binding"},
    "proofs": {"proof_binding"},
    "merkle_inclusion": {"merkle_inclusion", "cross_reference"},
}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_changes_with_repaired_hashes_are_still_rejected(data: st.DataObject) -> None:
    bundle, path, kind = _draw(data, repaired=True)
    try:
        forged = reseal(_apply(bundle, path, kind))
    except (KeyError, TypeError, AttributeError):
        return  # the change broke the event shape so badly that it cannot be resealed
    result = verifier().verify(forged)
    assert not result.verified, path
    step = result.failed_step
    assert step is not None, (path, result.to_json())
    assert step.name in _REPAIRED[path[0]], (path, step)
    assert step.code in _KNOWN_CODES, (path, step)
