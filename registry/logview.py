"""Tree heads and proofs in their wire form, shared by the log routes and publication.

Every head handed out is signed by the log over durably committed leaves and recorded by it
(:meth:`affidavit.attest.log.transparency.TransparencyLog.signed_tree_head`). The latest head is
cached per tree
size, so polling ``/latest`` does not sign (or record) a new head until the log grows.

Signing proves the tree extends the last signed head first (docs/adr/0005); when it does not, the
registry is marked unhealthy and every route that needs a new head answers 503 ``log.unhealthy``.
Reads that need no signature (recorded heads, proofs) run on the reader threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from affidavit.attest.errors import LogError
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.errors import RegistryError
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify.crypto.checkpoint import parse_note
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.json.strict import load_object

__all__ = ["inclusion_json", "latest_checkpoint", "latest_head", "recorded_head", "signing"]

T = TypeVar("T")


def signing(state: RegistryState, sign: Callable[[], T]) -> T:
    """Sign only while healthy; a tree that contradicts a signed head marks the log unhealthy.

    Raises:
        ``log.unhealthy``: 503, now or from an earlier failure.
    """
    if state.unhealthy is None:
        try:
            return sign()
        except LogError as e:
            if e.code != "log.integrity":
                raise
            state.mark_unhealthy(e)
    raise LogError("log.unhealthy", state.unhealthy or "the log refuses to sign")


def latest_head(state: RegistryState) -> dict[str, Any]:
    """The signed tree head of the current size, signed once per size. Database thread only.

    One head per size, whoever signed it: another instance on the same database, or this one
    before a restart, is served as recorded (docs/adr/0013: every instance serves the same bytes).

    Raises:
        ``log.unhealthy``: the stored tree contradicts a signed head (503).
    """
    size = state.log.size
    cached = state.sth_cache.get(size)
    if cached is not None and state.unhealthy is None:
        return cached
    recorded = state.log.recorded_head("sth", size) if state.unhealthy is None else None
    document = load_object(recorded.document, what="recorded head") if recorded else None
    if document is not None and document.get("key_id") == state.log.key_id:  # not a rotated key
        cached = document
    else:
        cached = signing(state, lambda: state.log.signed_tree_head(state.clock()).to_json())
    state.sth_cache.clear()  # only the newest size is served from memory
    state.sth_cache[int(cached["tree_size"])] = cached
    return cached


def latest_checkpoint(state: RegistryState) -> str:
    """The C2SP checkpoint of the current size, signed once per size (the recorded one, with any
    cosignatures, when there is one). Database thread only."""
    size = state.log.size
    note = state.checkpoint_cache.get(size)
    if note is not None and state.unhealthy is None:
        return note
    recorded = state.log.recorded_head("checkpoint", size) if state.unhealthy is None else None
    if recorded is not None and _signed_by_current_key(state, str(recorded.document)):
        note = str(recorded.document)
    else:
        note = signing(state, lambda: state.log.checkpoint(timestamp=state.clock()))
    state.checkpoint_cache.clear()
    state.checkpoint_cache[size] = note
    return note


def _signed_by_current_key(state: RegistryState, note: str) -> bool:
    """Whether the log's own signature line on ``note`` is by its current key (not a key it
    rotated away from, docs/adr/0011)."""
    signatures = parse_note(note).signatures
    own = signatures[0] if signatures else None
    return own is not None and own.key_id == key_id_c2sp(own.name, state.log.public_key.raw)


def recorded_head(log: TransparencyLog, tree_size: int) -> dict[str, Any]:
    """The most recent recorded signed tree head of ``tree_size`` leaves (any thread's log): one
    indexed read (``log_heads_by_size``), however many heads were handed out (an integrator
    records one per batch).

    Raises:
        ``registry.not_found``: no head of that size was ever handed out.
    """
    found = log.recorded_head("sth", tree_size)
    if found is None:
        raise RegistryError(
            "registry.not_found",
            f"no signed tree head of size {tree_size} was handed out",
            details={"tree_size": tree_size},
        )
    document: dict[str, Any] = load_object(found.document, what="recorded head")
    return document


def inclusion_json(
    view: ReadView | RegistryState, leaf_index: int, tree_size: int
) -> dict[str, Any]:
    """The ``merkle_inclusion`` object (docs/formats.md §4) of a leaf in a tree of ``tree_size``."""
    return view.log.inclusion_proof(leaf_index, tree_size).to_json(view.log.log_id)
