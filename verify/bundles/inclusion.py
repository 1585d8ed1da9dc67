"""A bundle's ``merkle_inclusion`` (docs/formats.md §4 "Merkle log"): read once, strictly, in
step 1, and checked in step 5 (RFC 9162 §2.1.3.2).

>>> inclusion_step(read_inclusion(None)).status
'not_checked'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.views import Inclusion, InclusionProof
from affidavit.verify.crypto.merkle import verify_inclusion
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.results import StepResult

__all__ = ["inclusion_step", "read_inclusion"]

_HEX_RUN: Final = re.compile(r"[a-f0-9]*")
_NO_INCLUSION: Final = Inclusion()


def _hex32(value: Any) -> bytes | None:
    """32 bytes from 64 lowercase hex characters; None for anything else."""
    if not is_hex64(value):
        return None
    return bytes.fromhex(value)


def read_inclusion(raw: Mapping[str, Any] | None) -> Inclusion:
    """Step 1, continued: read ``merkle_inclusion`` once (docs/formats.md §4), the claimed leaf
    hash decoded even when another field is malformed (the leaf binding reports it either way)."""
    if raw is None:
        return _NO_INCLUSION
    claimed = raw.get("leaf_hash")
    leaf = _hex32(claimed)
    proof: InclusionProof | None = None
    error: errors.AffidavitError | None = None
    try:
        proof = _inclusion_proof(raw, leaf)
    except errors.AffidavitError as e:
        error = e
    # proof, error, leaf_claimed, claimed_leaf, log_id, log_id_claimed (positional: per bundle)
    return Inclusion(proof, error, bool(claimed), leaf, raw.get("log_id"), "log_id" in raw)


def _inclusion_proof(inclusion: Mapping[str, Any], leaf: bytes | None) -> InclusionProof:
    """The proof's fields, strictly, in this order: ``proof``, each node, ``leaf_hash`` (already
    decoded: ``leaf``), ``leaf_index``, ``tree_size``, ``merkle_root``. Raises
    ``bundle.inclusion_malformed`` naming the first bad one."""

    def hex32(value: Any, what: str) -> bytes:
        decoded = _hex32(value)
        if decoded is None:
            raise errors.BundleError(
                "bundle.inclusion_malformed", f"{what} must be 64 lowercase hex characters"
            )
        return decoded

    def count(value: Any, what: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise errors.BundleError(
                "bundle.inclusion_malformed", f"{what} must be a non-negative integer"
            )
        return value

    raw_proof = inclusion.get("proof")
    if not isinstance(raw_proof, list):
        raise errors.BundleError(
            "bundle.inclusion_malformed", "merkle_inclusion.proof must be an array"
        )
    # left/right comes from the index, never from "position" (docs/formats.md §4)
    texts: list[Any] = [node.get("hash") if isinstance(node, dict) else node for node in raw_proof]
    joined = "".join(texts) if all(isinstance(t, str) and len(t) == 64 for t in texts) else None
    if joined is not None and _HEX_RUN.fullmatch(joined):  # every node well-formed: one pass
        nodes = bytes.fromhex(joined)
        proof = [nodes[start : start + 32] for start in range(0, len(nodes), 32)]
    else:  # name the first bad node
        proof = [hex32(text, f"proof[{i}]") for i, text in enumerate(texts)]
    if leaf is None:
        raise errors.BundleError(
            "bundle.inclusion_malformed", "leaf_hash must be 64 lowercase hex characters"
        )
    return InclusionProof(
        leaf,
        count(inclusion.get("leaf_index"), "leaf_index"),
        count(inclusion.get("tree_size"), "tree_size"),
        tuple(proof),
        hex32(inclusion.get("merkle_root"), "merkle_root"),
    )


def inclusion_step(inclusion: Inclusion) -> StepResult:
    """Step 5, ``merkle_inclusion``: RFC 9162 §2.1.3.2 (:mod:`~affidavit.verify.crypto.merkle`)
    over the proof read in step 1."""
    name = "merkle_inclusion"
    if inclusion.error is not None:
        return StepResult.failed(name, inclusion.error)
    proof = inclusion.proof
    if proof is None:
        return StepResult.not_checked(name, "the bundle carries no merkle_inclusion")
    try:
        verify_inclusion(
            proof.leaf_hash, proof.leaf_index, proof.tree_size, proof.path, proof.root_hash
        )
    except errors.AffidavitError as e:
        return StepResult.failed(name, e)
    return StepResult.ok(name, leaf_index=proof.leaf_index, tree_size=proof.tree_size)
