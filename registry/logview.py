"""Tree heads and proofs in their wire form, shared by the log routes and publication.

Every head handed out was signed by the log's writer at integration, over durably committed
leaves, and recorded (docs/adr/0024): a GET only reads, on the reader threads, what was recorded
(or the heads the writer holds in memory, :meth:`~affidavit.registry.sequencer.Sequencer.current`).

Signing proves the tree extends the last signed head first (docs/adr/0005); when it does not, the
registry is marked unhealthy (:func:`signing`) and every route that serves a head answers 503
``log.unhealthy``.
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

__all__ = ["inclusion_json", "recorded_head", "signed_by_current_key", "signing"]

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


def signed_by_current_key(log: TransparencyLog, note: str) -> bool:
    """Whether the log's own signature line on ``note`` is by its current key (not a key it
    rotated away from, docs/adr/0011)."""
    signatures = parse_note(note).signatures
    own = signatures[0] if signatures else None
    return own is not None and own.key_id == key_id_c2sp(own.name, log.public_key.raw)


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
