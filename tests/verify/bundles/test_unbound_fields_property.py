"""A time, a key or a field that nothing signs decides nothing (issue 35): property.

From bundles whose verdicts are decided by signed, logged content (verified under caller-trusted
actor keys; failed because the caller's pinned key was revoked before the events; failed because
the signatures are only self-asserted; unanchored without a log key), hypothesis changes one
field anywhere (a value of any JSON type, a time, a deletion, an added key), then repairs what
anyone can repair (``sidecar_hash``, ``bundle_hash``), and verifies again. The verdict may stay or
get worse (verified > unanchored > failed), never better: nothing unbound can pass what failed.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any, Final

import pytest
from affidavit.verify.bundles.actor_trust import ActorTrust
from affidavit.verify.bundles.events import sidecar_hash, signing_payload
from affidavit.verify.bundles.hashing import bundle_hash
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.errors import CanonicalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import budget
from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_KEY,
    OUTPUTS,
    stamp,
)

KEY_ID: Final = "seller-key-1"
RANK: Final = {"verified": 2, "unanchored": 1, "failed": 0, "unreadable": 0}
DROP: Final = object()
# Outside bundle_hash and every signature and log (docs/formats.md §4 "Top level").
UNBOUND_TOP: Final = frozenset({"actor_signature_sidecar", "key_directory", "exported_at"})


def _directory(revoked_at: str | None) -> dict[str, Any]:
    return {
        KEY_ID: {
            "actor_id": ACTOR_ID,
            "public_key_base64": ACTOR_KEY.public_key.b64,
            "issued_at": "2026-01-01T00:00:00Z",
            "revoked_at": revoked_at,
        }
    }


def _with_sidecar(bundle: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(bundle)
    signatures = {
        event["hash"]: [
            {
                "actor_id": event["actor_id"],
                "key_id": KEY_ID,
                "public_key_base64": ACTOR_KEY.public_key.b64,
                "signature_base64": ACTOR_KEY.sign_b64(signing_payload(event, KEY_ID)),
                "intent": "evaluated_inference",
                "signed_at": event["timestamp"],
            }
        ]
        for event in out["events"]
    }
    sidecar: dict[str, Any] = {
        "sidecar_version": "0.0.1",
        "canonicalization": "canonical_event_for_signing_v1",
        "signature_alg": "Ed25519",
        "signatures_by_event_hash": signatures,
    }
    sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    out["actor_signature_sidecar"] = sidecar
    return out


def _requiring(revoked_at: str | None) -> BundleVerifier:
    trust = ActorTrust.from_directory(_directory(revoked_at))
    return BundleVerifier([LOG_KEY.public_key], actor_trust=trust, require_actor_signatures=True)


_PLAIN = stamp({"accepted": OUTPUTS["accepted"]})["accepted"]
_SIGNED = stamp({"accepted": OUTPUTS["accepted"]}, actor=True)["accepted"]
# name -> (bundle, verifier, the verdict it must have)
BASES: Final[dict[str, tuple[dict[str, Any], BundleVerifier, str]]] = {
    "trusted sidecar": (_with_sidecar(_PLAIN), _requiring(None), "verified"),
    "trusted inline": (_SIGNED, _requiring(None), "verified"),
    "revoked before the events": (
        _with_sidecar(_PLAIN),
        _requiring("2026-03-01T00:00:00Z"),  # the events are dated 2026-03-01T12:00:00Z
        "failed",
    ),
    "revoked before the events, inline": (_SIGNED, _requiring("2026-03-01T00:00:00Z"), "failed"),
    "self-asserted, required": (
        _with_sidecar(_PLAIN),
        BundleVerifier([LOG_KEY.public_key], require_actor_signatures=True),
        "failed",
    ),
    "no log key": (_SIGNED, BundleVerifier(), "unanchored"),
}

TIMES: Final = st.sampled_from(
    [
        "2025-01-01T00:00:00Z",
        "2026-01-15T00:00:00Z",
        "2026-02-28T23:59:59+01:00",
        "2026-03-01T12:00:00Z",
        "2027-01-01T00:00:00Z",
        "not a time",
    ]
)
VALUES: Final = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | TIMES,
    lambda children: (
        st.lists(children, max_size=2) | st.dictionaries(st.text(max_size=4), children, max_size=2)
    ),
    max_leaves=4,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


def _mutate(bundle: dict[str, Any], path: tuple[Any, ...], value: Any, added: str | None) -> Any:
    out = json.loads(json.dumps(bundle))
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    if added is not None and isinstance(
        parent.get(path[-1]) if isinstance(parent, dict) else None, dict
    ):
        parent[path[-1]][added] = None if value is DROP else value  # an added key
    elif value is DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    sidecar = out.get("actor_signature_sidecar")
    if isinstance(sidecar, dict):
        with contextlib.suppress(CanonicalError):  # an unencodable one keeps its old hash
            sidecar["sidecar_hash"] = sidecar_hash(sidecar)  # anyone can recompute it
    with contextlib.suppress(CanonicalError):
        out["bundle_hash"] = bundle_hash(out)  # so can bundle_hash
    return out


ENTRY_FIELDS: Final = ("signed_at", "intent", "actor_id", "signed_payload_canonical_keys")


def _everywhere(bundle: dict[str, Any], name: str, value: Any) -> None:
    """Set ``name`` in every sidecar entry (a back-dated signed_at must cover every event to
    matter), then repair both hashes as anyone can."""
    sidecar = bundle.get("actor_signature_sidecar")
    if not isinstance(sidecar, dict) or not isinstance(
        sidecar.get("signatures_by_event_hash"), dict
    ):
        return
    for entries in sidecar["signatures_by_event_hash"].values():
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                entry[name] = value
    with contextlib.suppress(CanonicalError):
        sidecar["sidecar_hash"] = sidecar_hash(sidecar)
    with contextlib.suppress(CanonicalError):
        bundle["bundle_hash"] = bundle_hash(bundle)


def test_the_bases_have_their_verdicts() -> None:
    for name, (bundle, verifier, verdict) in BASES.items():
        assert verifier.verify(bundle).verdict == verdict, name


@pytest.mark.parametrize("base", sorted(BASES))
@given(data=st.data())
@settings(
    max_examples=budget(60, 600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_no_change_of_an_unbound_field_makes_a_verdict_better(
    base: str, data: st.DataObject
) -> None:
    bundle, verifier, verdict = BASES[base]
    every = _paths(bundle)
    unbound = [p for p in every if p[0] in UNBOUND_TOP]  # signed by nothing: drawn half the time
    pool = unbound if unbound and data.draw(st.booleans(), label="unbound") else every
    path = data.draw(st.sampled_from(pool), label="path")
    value = DROP if data.draw(st.booleans(), label="drop") else data.draw(VALUES, label="value")
    added = data.draw(
        st.none() | st.sampled_from(["signed_at", "extra", "revoked_at"]), label="add"
    )
    mutated = _mutate(bundle, path, value, added)
    if data.draw(st.booleans(), label="every entry"):  # one field, in every signature entry
        name = data.draw(st.sampled_from(ENTRY_FIELDS), label="entry field")
        _everywhere(mutated, name, data.draw(TIMES | VALUES, label="entry value"))
    after = verifier.verify(mutated).verdict
    assert RANK[after] <= RANK[verdict], (base, path, value, added, after)
