"""Tree heads and proofs in their wire form, shared by the log routes and publication.

Every head handed out was signed by the log's writer at integration and recorded
(docs/adr/0024): a GET only reads what was recorded, on the reader threads.
"""

from __future__ import annotations

from typing import Any

from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.errors import RegistryError
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify.json.strict import load_object

__all__ = ["inclusion_json", "largest_head", "recorded_head"]


def recorded_head(log: TransparencyLog, tree_size: int) -> dict[str, Any]:
    """The most recent recorded signed tree head of ``tree_size`` leaves (one indexed read).

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


def largest_head(view: ReadView) -> dict[str, Any]:
    """The recorded signed tree head of the largest size (docs/adr/0024: never signed here)."""
    found = view.log.largest_head("sth")
    return recorded_head(view.log, 0 if found is None else found.tree_size)


def inclusion_json(
    view: ReadView | RegistryState, leaf_index: int, tree_size: int
) -> dict[str, Any]:
    """The ``merkle_inclusion`` object (docs/formats.md §4) of a leaf in a tree of ``tree_size``."""
    return view.log.inclusion_proof(leaf_index, tree_size).to_json(view.log.log_id)
