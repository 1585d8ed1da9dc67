"""The hashes a bundle is checked against, recomputed (docs/formats.md §4), each with the plain
encoder of its form (docs/adr/0021-plain-encoders.md).

>>> bundle = {"deal_id": "d", "proofs": [], "events": [], "merkle_inclusion": None}
>>> import hashlib, json  # a legacy bundle (no spec_version): py-spaced of these four fields
>>> bundle_hash(bundle) == hashlib.sha256(json.dumps(bundle, sort_keys=True).encode()).hexdigest()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from affidavit.verify.json.canonical import py_compact, py_spaced, sha256_hex

__all__ = ["bundle_hash", "proof_hash"]


def bundle_hash(unverified_bundle: Mapping[str, Any]) -> str:
    """Recompute ``bundle_hash`` (docs/formats.md §4): py-compact of ``{spec_version, deal_id,
    proofs, events, merkle_inclusion}``, or for a legacy bundle (no ``spec_version``) py-spaced
    without it.
    """
    body = {
        k: unverified_bundle.get(k) for k in ("deal_id", "proofs", "events", "merkle_inclusion")
    }
    if "spec_version" in unverified_bundle:
        body["spec_version"] = unverified_bundle["spec_version"]
        return sha256_hex(py_compact(body))
    return sha256_hex(py_spaced(body))


def proof_hash(proof: Any) -> str:
    """``H(py-compact(proof))``: what an Affidavit PROOF_READY event lists in ``proof_hashes``."""
    return sha256_hex(py_compact(proof))
