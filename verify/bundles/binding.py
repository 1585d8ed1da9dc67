"""Step ``cross_reference``: what the signed log covers of this bundle (docs/formats.md §4
"Cross-reference", docs/adr/0008-actor-keys-and-events-after-finality.md).

>>> consequence_binding([])
'no_consequence_authorization_claimed'

Three questions in one step (as the peer's five-step contract has it): the root fields equal the
signed head's; the proven leaf recomputes from exactly one finality event, the last one
(``details.leaf_binding``); every consequence identity named is an authorized one
(``details.consequence_binding``, computed from the event bytes alone, so it fails the bundle
with or without an anchor).
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.events import FINALITY_EVENT_TYPES, leaf_data
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.results import StepResult

if TYPE_CHECKING:
    from affidavit.verify.bundles.views import BundleView, Event, Inclusion
    from affidavit.verify.crypto.treehead import SignedTreeHead

__all__ = [
    "bind_leaf",
    "consequence_binding",
    "cross_reference",
]

STEP: Final = "cross_reference"
BOUND, UNBOUND, AMBIGUOUS, NO_ANCHOR = (
    "bound",
    "anchor_unbound",
    "anchor_ambiguous",
    ("no_anchor_claimed"),
)
NONE_CLAIMED: Final = "no_consequence_authorization_claimed"
NOT_DISPATCHED: Final = "consequence_authorized_not_dispatched"
CONSEQUENCE_BOUND: Final = "consequence_bound"
MISMATCH: Final = "consequence_identity_mismatch"
AUTHORIZATION_TYPE: Final = "CONSEQUENCE_AUTHORIZED"
_REFERENCE_KEYS: Final = ("consequence_identity_hash", "identity_hash")  # first present wins


def consequence_binding(events: Sequence[Event]) -> str:
    """The consequence-identity status of well-formed (chain-checked) events."""
    authorized: set[str] = set()
    referenced: list[str] = []
    for event in events:
        payload = event.payload
        if event.event_type == AUTHORIZATION_TYPE:
            identity = payload.get("identity_hash")
            # Only an authorized decision confers authority; a denial is not a reference either.
            if isinstance(identity, str) and identity and payload.get("decision") == "authorized":
                authorized.add(identity)
            continue
        for key in _REFERENCE_KEYS:
            value = payload.get(key)
            if isinstance(value, str) and value:
                referenced.append(value)
                break
    if not authorized:
        return NONE_CLAIMED
    if not referenced:
        return NOT_DISPATCHED
    if any(value not in authorized for value in referenced):
        return MISMATCH
    return CONSEQUENCE_BOUND


def bind_leaf(events: Sequence[Event], inclusion: Inclusion) -> tuple[str, int | None]:
    """(leaf-binding status, index of the one event the claimed leaf recomputes from)."""
    if not inclusion.leaf_claimed:
        return NO_ANCHOR, None
    target = inclusion.claimed_leaf
    if target is None:  # claimed, but not 64 lowercase hex
        return UNBOUND, None
    # The bound event of a bundle that verifies is its last (nothing may follow it): look from
    # the end, and hash one leaf, not every event's.
    for index in range(len(events) - 1, -1, -1):
        if hmac.compare_digest(leaf_hash(leaf_data(events[index].raw)), target):
            break
    else:
        return UNBOUND, None
    # Two events have the same leaf bytes exactly when their five leaf fields are equal (a string
    # has one py-compact form): an earlier event with the same fields recomputes the leaf too.
    fields = _leaf_fields(events[index])
    if any(_leaf_fields(other) == fields for other in events[:index]):
        return AMBIGUOUS, None
    return BOUND, index


def _leaf_fields(event: Event) -> tuple[str, ...]:
    """What :func:`~.events.leaf_data` encodes of ``event`` (docs/formats.md §4 "Merkle log")."""
    return event.deal_id, event.hash, event.event_id, event.event_type, event.timestamp


def cross_reference(
    bundle: BundleView, inclusion_step: StepResult, sth: SignedTreeHead | None
) -> StepResult:
    """Step ``cross_reference`` of chain-checked events (module docstring); ``sth`` is the tree
    head the ``sth_signature`` step vouches for (None when it failed)."""
    events = bundle.events.items
    inclusion = bundle.inclusion
    leaf_status, bound = bind_leaf(events, inclusion)
    details: dict[str, Any] = {
        "leaf_binding": leaf_status,
        "consequence_binding": consequence_binding(events),
    }
    if details["consequence_binding"] == MISMATCH:
        error: errors.AffidavitError = errors.BundleError(
            "bundle.consequence_identity_mismatch",
            "an event names a consequence identity that no CONSEQUENCE_AUTHORIZED event of the "
            "bundle authorized",
        )
        return StepResult.failed(STEP, error, **details)
    proof = inclusion.proof
    if proof is None or inclusion_step.status != "ok":
        return StepResult.not_checked(STEP, "no verified inclusion proof", **details)
    if sth is not None:
        # An absent merkle_inclusion.log_id claims no log; a present one must be the head's.
        log_id = inclusion.log_id if inclusion.log_id_claimed else sth.log_id
        claims: tuple[tuple[str, Any, Any], ...] = (
            ("merkle_root", proof.root_hash.hex(), sth.root_hash),
            ("tree_size", proof.tree_size, sth.tree_size),
            ("log_id", log_id, sth.log_id),
        )
        for field, claimed, signed in claims:
            if claimed != signed:
                differs = errors.BundleError(
                    "bundle.root_not_signed",
                    f"merkle_inclusion.{field} is not the signed tree head's",
                )
                return StepResult.failed(STEP, differs, expected=signed, actual=claimed, **details)
    if leaf_status == AMBIGUOUS:
        error = errors.BundleError(
            "bundle.leaf_ambiguous", "the proven leaf recomputes from several events"
        )
        return StepResult.failed(STEP, error, **details)
    if bound is None or events[bound].event_type not in FINALITY_EVENT_TYPES:
        what = "no event" if bound is None else f"a {events[bound].event_type} (not finality) event"
        error = errors.BundleError(
            "bundle.leaf_unbound", f"the proven leaf recomputes from {what} of this bundle"
        )
        return StepResult.failed(STEP, error, actual=proof.leaf_hash.hex(), **details)
    event = events[bound]
    details["covered_events"] = bound + 1
    details["events_after_finality"] = len(events) - bound - 1
    if details["events_after_finality"]:
        error = errors.BundleError(
            "bundle.events_after_finality",
            f"{details['events_after_finality']} event(s) follow the logged "
            f"{event.event_type} event {event.event_id!r}; nothing signed covers them",
        )
        return StepResult.failed(STEP, error, **details)
    if sth is None:
        return StepResult.not_checked(
            STEP,
            "leaf bound to a finality event, but no signed tree head to compare the root with",
            **details,
        )
    return StepResult.ok(STEP, event_id=event.event_id, event_type=event.event_type, **details)
