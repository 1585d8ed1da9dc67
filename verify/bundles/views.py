"""Typed views of a bundle's parts, read once before the steps run (docs/formats.md §4).

>>> events = parse_events([{"event_id": "e1"}])
>>> events.items, events.problem.code, events.problem.message
((), 'event.malformed', 'events[0] lacks event_type')
>>> view_policy_layer({"policy_layer": {"sla": {"delivery_hours": 24}}})["sections"]
['sla']

The events, ``merkle_inclusion`` and signed tree head are read here once; the raw bundle stays
for what is hashed byte-exact (docs/formats.md §1). A part that does not parse keeps its error for
its step to report. The ProofPack v2 ``policy_layer`` (outside ``bundle_hash``) is parsed like
the peer's reader, for the report only. NamedTuples, not dataclasses: this is the ``verify
bundle`` path (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors

if TYPE_CHECKING:
    from affidavit.verify.crypto.treehead import SignedTreeHead

__all__ = [
    "ALLOWED_EVENT_KEYS",
    "EVENT_FIELDS",
    "HASHED_FIELDS",
    "NOTE",
    "BundleView",
    "Event",
    "Events",
    "Inclusion",
    "InclusionProof",
    "TreeHead",
    "parse_events",
    "view_policy_layer",
]

# docs/formats.md §4: the fields the event hash covers, and the eighth, the hash itself.
HASHED_FIELDS: Final = (
    "event_id",
    "event_type",
    "deal_id",
    "actor_id",
    "timestamp",
    "payload",
    "prev_hash",
)
EVENT_FIELDS: Final = (*HASHED_FIELDS, "hash")
# docs/formats.md §4 "Event": the eight fields, and a spec 3.0.0 ``actor_signature`` (its own
# signature covers the hashed fields). Any other key is covered by neither the event hash nor
# the log nor a signature: it is refused (``event.malformed``), never shown or passed on.
ALLOWED_EVENT_KEYS: Final = frozenset((*EVENT_FIELDS, "actor_signature"))


class Event(NamedTuple):
    """One event whose eight fields have their types (docs/formats.md §4); ``raw`` is the object
    as read, what gets hashed and signed."""

    event_id: str
    event_type: str
    deal_id: str
    actor_id: str
    timestamp: str
    payload: Mapping[str, Any]
    prev_hash: str
    hash: str
    raw: Mapping[str, Any]


class Events(NamedTuple):
    """``bundle.events`` read in order: ``items`` up to the first malformed event, and why that
    one is malformed (``event.malformed``; ``None`` when every event is well-formed)."""

    items: tuple[Event, ...]
    problem: errors.AffidavitError | None = None


def _shape_problem(event: Any, index: int) -> str | None:
    if not isinstance(event, dict):
        return f"events[{index}] is not an object"
    for name in EVENT_FIELDS:
        if name not in event:
            return f"events[{index}] lacks {name}"
        expected = dict if name == "payload" else str
        if not isinstance(event[name], expected):
            return (
                f"events[{index}].{name} must be {'an object' if expected is dict else 'a string'}"
            )
    unbound = [key for key in event if key not in ALLOWED_EVENT_KEYS]
    if unbound:
        names = ", ".join(repr(key) for key in unbound[:5])
        return f"events[{index}] has fields the event hash does not cover: {names}"
    return None


def _view(event: dict[str, Any]) -> Event:
    get: Callable[[str], Any] = event.get  # a missing field reads as None: never let through
    return Event(
        get("event_id"),
        get("event_type"),
        get("deal_id"),
        get("actor_id"),
        get("timestamp"),
        get("payload"),
        get("prev_hash"),
        get("hash"),
        event,
    )


def parse_events(raw_events: Sequence[Any]) -> Events:
    """Read each event's eight fields strictly, stopping at the first malformed one."""
    items: list[Event] = []
    for index, event in enumerate(raw_events):
        # Fast path (the common case, once per event of every bundle): plain JSON types.
        if type(event) is dict:
            view = _view(event)
            if (
                type(view.event_id) is str
                and type(view.event_type) is str
                and type(view.deal_id) is str
                and type(view.actor_id) is str
                and type(view.timestamp) is str
                and type(view.payload) is dict
                and type(view.prev_hash) is str
                and type(view.hash) is str
                and event.keys() <= ALLOWED_EVENT_KEYS
            ):
                items.append(view)
                continue
        problem = _shape_problem(event, index)  # the exact rule, and the first problem's words
        if problem is not None:
            return Events(tuple(items), errors.BundleError("event.malformed", problem))
        items.append(_view(event))
    return Events(tuple(items))


class InclusionProof(NamedTuple):
    """A well-formed ``merkle_inclusion`` (RFC 9162 §2.1.3): the proven leaf's hash, its index,
    the tree size, the audit path and the root, every hash as 32 raw bytes. Left or right comes
    from the index, never from a node's ``position`` (docs/formats.md §4)."""

    leaf_hash: bytes
    leaf_index: int
    tree_size: int
    path: tuple[bytes, ...]
    root_hash: bytes


class Inclusion(NamedTuple):
    """``merkle_inclusion`` as claimed: ``proof`` when every field is well-formed, else ``error``
    (both ``None`` without one). ``claimed_leaf`` is decoded even when another field is malformed:
    the leaf binding is reported either way (:mod:`.binding`)."""

    proof: InclusionProof | None = None
    error: errors.AffidavitError | None = None
    leaf_claimed: bool = False  # a (non-empty) leaf_hash is claimed, well-formed or not
    claimed_leaf: bytes | None = None
    log_id: Any = None
    log_id_claimed: bool = False


class TreeHead(NamedTuple):
    """``signed_tree_head`` as claimed, parsed strictly, its signature not yet checked: ``head``
    or ``error`` (both ``None`` without one)."""

    head: SignedTreeHead | None = None
    error: errors.AffidavitError | None = None


class BundleView(NamedTuple):
    """A bundle whose top level parsed (step 1), with its parts read once."""

    raw: Mapping[str, Any]  # the bundle as read: hashed byte-exact, and read by later steps
    deal_id: str
    events: Events
    inclusion: Inclusion
    tree_head: TreeHead


POLICY_SECTIONS: Final = ("sla", "mandate", "spawn", "attestation", "outcome")
NOTE: Final = (
    "recorded values outside bundle_hash: not covered by any hash or signature, not used in the "
    "verdict"
)


def view_policy_layer(bundle: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's ``policy_layer`` object, or None when the bundle has no ``policy_layer`` key."""
    if "policy_layer" not in bundle:
        return None
    layer = bundle["policy_layer"]
    view: dict[str, Any] = {"version": "1.0", "has_policy": False, "sections": []}
    if isinstance(layer, dict) and layer:
        view.update(version="2.0", has_policy=True)
        for name in POLICY_SECTIONS:
            value = layer.get(name)
            if isinstance(value, dict) and value:
                view[name] = value
                view["sections"].append(name)
        chain = layer.get("referral_chain")
        if isinstance(chain, list) and chain:
            view["referral_chain"] = chain
            view["sections"].append("referral_chain")
    view.update(covered_by_bundle_hash=False, used_in_verdict=False, note=NOTE)
    return view
