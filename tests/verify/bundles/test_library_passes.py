"""The per-bundle path does each piece of work once (issue 34, second pass), with the same result
as the plain rule it replaces: each shortcut here is checked against that rule written out.
"""

from __future__ import annotations

import hmac
import random
from collections.abc import Sequence
from typing import Any

import pytest
from affidavit.verify.bundles.binding import bind_leaf
from affidavit.verify.bundles.events import leaf_data
from affidavit.verify.bundles.inclusion import read_inclusion
from affidavit.verify.bundles.views import Event, Inclusion, parse_events
from affidavit.verify.crypto.merkle import leaf_hash

from tests.verify.bundles.test_bundle_support import OUTPUTS, stamp

SEED = 34


@pytest.fixture(scope="module")
def bundle() -> dict[str, Any]:
    return stamp(OUTPUTS)["accepted"]


def _every_leaf(events: Sequence[Event], inclusion: Inclusion) -> tuple[str, int | None]:
    """docs/formats.md §4 cross-reference, written out: hash every event's leaf, and the proven
    leaf is bound when exactly one recomputes it."""
    if not inclusion.leaf_claimed:
        return "no_anchor_claimed", None
    target = inclusion.claimed_leaf
    if target is None:
        return "anchor_unbound", None
    matches = [
        i for i, e in enumerate(events) if hmac.compare_digest(leaf_hash(leaf_data(e.raw)), target)
    ]
    if len(matches) == 1:
        return "bound", matches[0]
    return ("anchor_unbound" if not matches else "anchor_ambiguous"), None


def test_the_leaf_search_from_the_end_binds_as_hashing_every_leaf(bundle: dict[str, Any]) -> None:
    # bind_leaf hashes from the last event back and stops at the first match; an earlier event
    # with the same five leaf fields makes it ambiguous. Orders, repeats and drops of the events
    # (the bound one first, last, twice, absent) must bind exactly as hashing every leaf does.
    events = list(parse_events(bundle["events"]).items)
    inclusion = read_inclusion(bundle["merkle_inclusion"])
    rng = random.Random(SEED)
    seen = set()
    for trial in range(300):
        size = rng.randint(0, 6)
        drawn = [rng.choice(events) for _ in range(size)]
        got = bind_leaf(drawn, inclusion)
        assert got == _every_leaf(drawn, inclusion), f"seed {SEED}, trial {trial}"
        seen.add(got[0])
    assert seen == {"bound", "anchor_unbound", "anchor_ambiguous"}


def test_a_repeat_before_the_bound_event_is_ambiguous(bundle: dict[str, Any]) -> None:
    events = list(parse_events(bundle["events"]).items)
    inclusion = read_inclusion(bundle["merkle_inclusion"])
    assert bind_leaf(events, inclusion) == ("bound", len(events) - 1)
    assert bind_leaf([events[-1], *events], inclusion) == ("anchor_ambiguous", None)
    assert bind_leaf([events[-1], *events[:-1]], inclusion) == ("bound", 0)
    # one differing leaf field is another leaf: not a repeat
    (other,) = parse_events([{**events[-1].raw, "timestamp": "2000-01-01T00:00:00Z"}]).items
    assert bind_leaf([other, *events], inclusion) == ("bound", len(events))
