"""Hostile shapes under the 64 MiB cap: the strict parser's work grows linearly with its input
(issue 35). Outcomes and codes are asserted, never wall time: a quadratic scan shows up as a run
that does not end (the inputs here would take hours), not as a flaky timing.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Final

import pytest
from affidavit.verify import errors
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.json.strict import DEFAULT_MAX_DEPTH, loads
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import budget
from tests.conftest import raises_code

MIB = 2**20


def _quote_heavy(size: int) -> bytes:
    """More than 128 brackets (two deep), then an unterminated string of escaped quotes."""
    head = b"[" + b"[]," * 130 + b'"'
    return head + b'\\"' * ((size - len(head)) // 2)


@pytest.mark.parametrize("size", [64 * 1024, 4 * MIB])
def test_quote_heavy_input_is_one_linear_scan(size: int) -> None:
    with raises_code("json.syntax"):
        loads(_quote_heavy(size))


def test_a_string_ending_in_a_backslash_is_scanned_to_its_end() -> None:
    document = b"[" * (DEFAULT_MAX_DEPTH + 1) + b'"' + b"\\"  # too deep before the string
    with raises_code("json.too_deep"):
        loads(document)
    with raises_code("json.syntax"):
        loads(b"[" + b"[]," * 130 + b'"[[[\\')


def _reference_depth(raw: bytes) -> tuple[int, bool]:
    """The deepest nesting outside strings, one byte at a time (a string that never ends runs
    to the end of the input), up to the first backslash outside a string, where a parser stops
    (a syntax error); and whether there is one."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        char = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == "\\":
            return deepest, True
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest, False


_PIECES = st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b'\\"', b"a", b",", b":", b"\n"])


@given(st.lists(_PIECES, max_size=400), st.integers(min_value=1, max_value=12))
@settings(max_examples=budget(300, 3000), deadline=None)
def test_depth_is_refused_exactly_when_the_reference_finds_it_too_deep(
    pieces: list[bytes], limit: int
) -> None:
    """Exact where the document can be read that far; past a stray backslash (a syntax error
    the parser stops at) any domain error is fine, never a traceback."""
    raw = b"".join(pieces)
    deepest, stray = _reference_depth(raw)
    try:
        loads(raw, max_depth=limit)
        refused = False
    except errors.ParseError as e:
        refused = e.code == "json.too_deep"
    if deepest > limit:
        assert refused, raw
    elif not stray:
        assert not refused, raw


# -- issue 35, hole 3: what one input may make, and only the work a verdict needs --------------


def _bundle(field: bytes, item: bytes, size: int) -> bytes:
    head = b'{"deal_id":"d","bundle_hash":"' + b"0" * 64 + b'",'
    head += b'"proofs":[],"events":[' if field == b"events" else b'"events":[],"proofs":['
    count = max(1, (size - len(head) - 2) // (len(item) + 1))
    return head + b",".join([item] * count) + b"]}"


_EVENT = (
    b'{"event_id":"e","event_type":"PROOF_READY","deal_id":"d","actor_id":"a",'
    b'"timestamp":"2026-01-01T00:00:00Z","payload":{},"prev_hash":"","hash":"' + b"0" * 64 + b'"}'
)
SHAPES = {
    "quote-heavy": (_quote_heavy(8 * MIB), "json.syntax"),
    "deep": (b"[" * (8 * MIB), "json.too_deep"),
    "wide-proofs": (_bundle(b"proofs", b"{}", 4 * MIB), "json.too_many_items"),
    # Long arrays of short scalars: one list slot (and, for most, one object) per two or three
    # bytes; every value counts toward the item cap, not only objects and arrays.
    "long-ints": (_bundle(b"proofs", b"1", 4 * MIB), "json.too_many_items"),
    "long-empty-strings": (_bundle(b"proofs", b'""', 4 * MIB), "json.too_many_items"),
    "long-short-strings": (_bundle(b"proofs", b'"ab"', 8 * MIB), "json.too_many_items"),
    "many-proofs": (
        _bundle(b"proofs", b'{"p":' + b"1" * 60 + b"}", 1 * MIB),
        "bundle.hash_mismatch",
    ),
    "many-events": (_bundle(b"events", _EVENT, 1 * MIB), "bundle.hash_mismatch"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_pathological_bundles_are_refused_within_a_memory_bound(name: str) -> None:
    data, code = SHAPES[name]
    verifier = BundleVerifier()
    tracemalloc.start()
    try:
        result = verifier.verify_bytes(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    step = result.failed_step
    assert step is not None
    assert step.code == code, result.to_json()
    # Measured (issue 35): at most ~9.4 bytes per input byte (many-events); refused shapes ~1-3.
    assert peak < 12 * len(data), f"{name}: peak {peak / len(data):.1f} bytes per input byte"


def test_the_item_cap_is_an_argument_and_counts_a_string_once() -> None:
    assert loads(b'["[[[{{{,:,"]', max_items=2) == ["[[[{{{,:,"]
    with raises_code("json.too_many_items") as caught:
        loads(b"[[], {}]", max_items=2)
    assert caught.value.details["limit"] == 2
    assert loads(b"[[], {}]", max_items=3) == [[], {}]


def test_the_item_cap_counts_every_value_and_key() -> None:
    # docs/formats.md §1: every object, array, string (keys too), number, true, false and null.
    document = b'[1, "a", null, true, false, -2.5e3, {"k": []}]'  # 10 items
    assert loads(document, max_items=10) == [1, "a", None, True, False, -2500.0, {"k": []}]
    with raises_code("json.too_many_items") as caught:
        loads(document, max_items=9)
    assert caught.value.details["column"] == 43  # the tenth item: []
    with raises_code("json.too_many_items"):
        loads(b"[" + b"1," * 99 + b"1]", max_items=100)
    assert loads(b"[" + b"1," * 98 + b"1]", max_items=100) == [1] * 99


def _items(value: object) -> int:
    """docs/formats.md §1: the items a value is read from, every value and every key."""
    if isinstance(value, dict):
        return 1 + sum(1 + _items(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_items(v) for v in value)
    return 1


_PLAIN_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _PLAIN_TEXT,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(_PLAIN_TEXT, children),
    max_leaves=40,
)


@given(value=_VALUES, spaced=st.booleans())
@settings(max_examples=budget(60, 600), deadline=None)
def test_the_item_cap_holds_exactly_at_every_limit(value: object, spaced: bool) -> None:
    """Property (issue 34): the counts are skipped for a document shorter than the cap (an item
    takes at least one byte); the verdict is the same either side of the document's length,
    refused exactly when the items are more than the cap."""
    data = json.dumps(value, separators=(", ", ": ") if spaced else (",", ":")).encode()
    count = _items(value)
    for limit in {1, count - 1, count, count + 1, len(data) - 1, len(data), len(data) + 1}:
        if limit < 1:
            continue
        if count > limit:
            with raises_code("json.too_many_items"):
                loads(data, max_items=limit)
        else:
            assert loads(data, max_items=limit) == value


_HOSTILE_PIECES: Final = (
    b"{},",
    b"[],",
    b"[",
    b"{",
    b'"\\"',
    b"\\",
    b'"a",',
    b"1,",
    b'{"a":',
    b"]",
)
_KNOWN_CODES: Final = frozenset(
    entry["code"]
    for entry in json.loads(
        (Path(__file__).resolve().parents[3] / "specs" / "error-codes.json").read_text()
    )["codes"]
)


@given(
    piece=st.sampled_from(_HOSTILE_PIECES),
    count=st.integers(min_value=1, max_value=200_000),
    where=st.sampled_from(["top", "proofs", "events", "deal_id", "payload"]),
)
@settings(max_examples=budget(12, 120), deadline=None)
def test_hostile_shapes_are_domain_outcomes_within_a_memory_bound(
    piece: bytes, count: int, where: str
) -> None:
    """Property (issue 35): a hostile run anywhere in a bundle ends in a result with a stable
    code, using memory within a small multiple of the input's bytes."""
    run = piece * count
    head = b'{"deal_id":"d","bundle_hash":"' + b"0" * 64 + b'",'
    documents = {
        "top": run,
        "proofs": head + b'"events":[],"proofs":[' + run + b"]}",
        "events": head + b'"proofs":[],"events":[' + run + b"]}",
        "deal_id": b'{"deal_id":"' + run + b'","proofs":[],"events":[],"bundle_hash":""}',
        "payload": head + b'"proofs":[],"events":[{"event_id":"e","payload":' + run + b"}]}",
    }
    data = documents[where]
    tracemalloc.start()
    try:
        result = BundleVerifier().verify_bytes(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    step = result.failed_step
    assert step is not None, (where, piece, count)
    assert step.code in _KNOWN_CODES, step.code
    # Measured: at most ~25.3 bytes per input byte, from one empty dict (64 bytes) and its list
    # slot per three bytes of "{}," under the item cap; past the cap it is refused unbuilt.
    assert peak < 28 * len(data) + 4 * MIB, (where, piece, count, peak / len(data))
