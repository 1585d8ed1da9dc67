"""Tree heads and proofs in their wire form, shared by the log routes and publication.

Every head handed out is signed by the log over durably committed leaves and recorded by it
(:meth:`affidavit.attest.log.TransparencyLog.signed_tree_head`). The latest head is cached per tree
size, so polling ``/latest`` does not sign (or record) a new head until the log grows.
"""

from __future__ import annotations

from typing import Any

from affidavit.registry.state import RegistryState
from affidavit.verify import errors
from affidavit.verify.jsonio import load_object

__all__ = ["head_for_size", "inclusion_json", "latest_checkpoint", "latest_head"]


def latest_head(state: RegistryState) -> dict[str, Any]:
    """The signed tree head of the current size (signed once per size). Database thread only."""
    size = state.log.size
    cached = state.sth_cache.get(size)
    if cached is None:
        cached = state.log.signed_tree_head(state.clock()).to_json()
        state.sth_cache.clear()  # only the newest size is served from memory
        state.sth_cache[int(cached["tree_size"])] = cached
    return cached


def latest_checkpoint(state: RegistryState) -> str:
    """The C2SP checkpoint of the current size (signed once per size). Database thread only."""
    size = state.log.size
    note = state.checkpoint_cache.get(size)
    if note is None:
        note = state.log.checkpoint(timestamp=state.clock())
        state.checkpoint_cache.clear()
        state.checkpoint_cache[size] = note
    return note


def head_for_size(state: RegistryState, tree_size: int) -> dict[str, Any]:
    """The most recent recorded signed tree head of exactly ``tree_size`` leaves.

    Raises:
        RegistryNotFound: no head of that size was ever handed out.
    """
    cached = state.sth_cache.get(tree_size)
    if cached is not None:
        return cached
    found: dict[str, Any] | None = None
    since = 0
    while True:
        page = state.log.heads(since_seq=since)
        if not page:
            break
        for head in page:
            if head.kind == "sth" and head.tree_size == tree_size:
                found = load_object(head.document, what="recorded head")
        since = page[-1].seq
    if found is None:
        raise errors.RegistryNotFound(
            f"no signed tree head of size {tree_size} was handed out",
            details={"tree_size": tree_size},
        )
    return found


def inclusion_json(state: RegistryState, leaf_index: int, tree_size: int) -> dict[str, Any]:
    """The ``merkle_inclusion`` object (formats.md §4) of a leaf in a tree of ``tree_size``."""
    return state.log.inclusion_proof(leaf_index, tree_size).to_json(state.log.log_id)
