"""The audit's fast paths agree with the slow ones (docs/formats.md §5).

* ``fact_hash_and_parents`` / ``parse_fact``: the quick pass (combined regex, the hashed body
  written directly) gives the same FactHash, derived_from and error (code and message) as the
  field-by-field checks followed by ``jcs``; hashes are also checked against ``rfc8785``, an
  independent RFC 8785 encoder.
* ``check_records``: the same findings as reading each record with ``parse_fact``.
* ``_graph_scan``: peeling the graph first leaves ``find_cycles`` unchanged; dangling pairs are
  the ones a plain scan finds, in the same order.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
import rfc8785
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.lineage import facts
from affidavit.verify.lineage.audit import _graph_scan, audit, check_records, examine
from affidavit.verify.lineage.facts import (
    HASHED_FIELDS,
    fact_hash_and_parents,
    fact_hash_of,
    parse_fact,
)
from affidavit.verify.lineage.walk import StoredRecord, find_cycles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.verify.lineage.test_lineage import ABSENT, _Records, make_fact


class _Str(str):
    """A str subclass: valid to the checks, but not a JSON type to jcs."""


H1, H2 = "a" * 64, "0123456789abcdef" * 4

# Each pool: (values the checks accept, flawed or odd ones); documents mostly draw the former.
_URIS = (
    [
        "urn:x:a",
        "urn:x:\u00e9t\u00e9",
        "urn:x:\U0001f600",
        'urn:x:"q\\',
        "urn:x:\ud800",
        "https://e.com/" + "p" * 2030,
        _Str("urn:x:s"),
    ],
    ["https://e.com/" + "p" * 2040, "no uri", "", "urn:x:a\n", 5, None],
)
_RELATIONS = (["memory:role", "a.b:c_d-e"], ["nocolon", "memory:role\n", "\u00e9:x", 3])
_SCOPES = (["local", "team", "company", "public", _Str("team")], ["secret", ["team"]])
_CONFIDENCES = (
    [0.5, 1, 0, 0.949, 0.0, 1.0, -0.0, 1e-7, 5e-324, 0.1 + 0.2],
    [True, 2, -1, math.nan, math.inf, "0.5", None],
)
_TS = (
    ["2026-01-01T00:00:00Z", "2026-12-31T23:59:60.123456789Z"],
    ["2026-13-01T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00Z\n", 20260101],
)
_VALUES = (
    [
        ("string", "s"),
        ("number", 7),
        ("text", '\u00e9\U0001f600\x00\x1f"\\'),
        ("ref", "\ud800"),
        ("datetime", _Str("s")),
        ("number", 0),
        ("number", -5),
        ("number", 2**53 - 1),
        ("number", 2**53),
        ("number", -(2**53)),
        ("number", 1.5),
        ("number", 1e21),
        ("number", 1e-7),
        ("number", -0.0),
        ("number", 100.0),
        ("number", math.nan),
        ("number", math.inf),
        ("boolean", True),
        ("boolean", False),
        ("null", None),
        (_Str("text"), "t"),
    ],
    [
        ("bogus", 1),
        ("number", True),
        ("boolean", 1),
        ("null", 0),
        ("text", [1]),
        ("string", {"a": 1}),
        ("number", "1"),
        # whole floats RFC 8785 writes as integers past 2^53: refused (docs/formats.md "Facts")
        ("number", 1e16),
        ("number", -(2.0**53)),
        ("number", 9.999999999999999e20),
    ],
)
# "content" is the default and outside the hash (docs/formats.md "Facts"), so a str subclass
# spelling it is dropped before jcs sees it: accepted, by the slow path.
_INTERPRET = ([None, "content", "instruction", _Str("content")], ["other", 5])
_DERIVED = (
    [[H1, H2], None, [], [H1], [{"hash": H1, "fact_id": "f1"}], [{"hash": H2}], [_Str(H1)]],
    [
        [H1, H1],
        [H1.upper()],
        [H1 + "0"],
        [H1 + ","],
        [{"hash": H1, "fact_id": 5}],
        [{"hash": "x"}],
        [H1, 7],
        H1,
        [H2] * 1025,
    ],
)
_IDS = ([None, "fact-1"], ["", 7])
_SIGNATURES = (
    [None, {"alg": "Ed25519", "key_id": "k", "sig": "AAAA"}],
    [{"alg": "Ed25519", "key_id": "k", "sig": "not b64!"}, {"alg": "RS256"}],
)


def _pick(draw: st.DrawFn, pools: tuple[list[Any], list[Any]]) -> Any:
    good, flawed = pools
    roll = draw(st.integers(0, 39))
    if roll == 0:
        return draw(st.sampled_from(flawed))
    return draw(st.sampled_from(good if roll < 10 else good[:2]))  # mostly ordinary values


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """Fact-like documents: mostly valid, with every kind of flaw and tricky value mixed in."""
    kind, v = _pick(draw, _VALUES)
    value: dict[str, Any] = {"type": kind, "v": v}
    interpret_as = _pick(draw, _INTERPRET)
    if interpret_as is not None:
        value["interpret_as"] = interpret_as
    if draw(st.integers(0, 29)) == 0:
        value["extra"] = 1
    if draw(st.integers(0, 29)) == 0:
        del value["v"]
    document: dict[str, Any] = {
        "entity": _pick(draw, _URIS),
        "relation": _pick(draw, _RELATIONS),
        "value": value if draw(st.integers(0, 29)) else "not an object",
        "source": _pick(draw, _URIS),
        "scope": _pick(draw, _SCOPES),
        "confidence": _pick(draw, _CONFIDENCES),
        "ts": _pick(draw, _TS),
    }
    for name, pools in (("derived_from", _DERIVED), ("id", _IDS), ("signature", _SIGNATURES)):
        choice = _pick(draw, pools)
        if choice is not None:
            document[name] = choice
    if draw(st.integers(0, 29)) == 0:
        del document[draw(st.sampled_from(HASHED_FIELDS))]
    return document


def _slow(document: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The reference: field-by-field checks, signature, then jcs (the code before the fast path)."""
    doc = facts._document(document, "doc")
    derived = facts._checks(doc, "doc")
    if "signature" in doc:
        facts._signature(doc["signature"], "doc")
    return fact_hash_of(doc), derived


def _outcome(function: Any, document: dict[str, Any]) -> tuple[Any, ...]:
    try:
        return ("ok", *function(document))
    except errors.AffidavitError as e:
        return ("error", e.code, e.message, e.details)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_fast_path_matches_the_field_by_field_checks(document: dict[str, Any]) -> None:
    expected = _outcome(_slow, document)
    assert _outcome(lambda d: fact_hash_and_parents(d, what="doc"), document) == expected
    assert _outcome(lambda d: _hash_and_parents(parse_fact(d, what="doc")), document) == expected
    if expected[0] == "ok":  # an independent RFC 8785 encoder agrees on the FactHash
        hashed = {name: document[name] for name in HASHED_FIELDS}
        hashed["value"] = facts._hashed_value(hashed["value"])
        if all(type(hashed[name]) is str for name in ("entity", "source", "relation", "scope")):
            assert hashlib.sha256(rfc8785.dumps(hashed)).hexdigest() == expected[1]


_ORDINARY: dict[str, Any] = {
    "entity": "urn:x:a",
    "relation": "memory:role",
    "value": {"type": "number", "v": 7},
    "source": "urn:s:1",
    "scope": "team",
    "confidence": 0.5,
    "ts": "2026-01-01T00:00:00Z",
    "derived_from": [H1, H2],
    "id": "f-1",
}
_FLAWS = [
    *[("entity", v) for v in _URIS[1]],
    *[("source", v) for v in _URIS[1]],
    *[("relation", v) for v in _RELATIONS[1]],
    *[("scope", v) for v in _SCOPES[1]],
    *[("confidence", v) for v in _CONFIDENCES[1]],
    *[("ts", v) for v in _TS[1]],
    *[("value", {"type": k, "v": v}) for k, v in _VALUES[1]],
    *[("value", {"type": "text", "v": "x", "interpret_as": v}) for v in _INTERPRET[1]],
    ("value", {"type": "text", "v": "x", "extra": 1}),
    ("value", {"type": "text"}),
    ("value", {"type": "text", "v": "x" * (1024 * 1024 + 1)}),
    ("value", ["text", "x"]),
    *[("derived_from", v) for v in _DERIVED[1]],
    *[("id", v) for v in _IDS[1]],
    *[("signature", v) for v in _SIGNATURES[1]],
]


@pytest.mark.parametrize(("name", "flaw"), _FLAWS)
def test_each_single_flaw_is_refused_with_the_slow_message(name: str, flaw: Any) -> None:
    document = {**_ORDINARY, name: flaw}
    expected = _outcome(_slow, document)
    assert expected[0] == "error"
    assert _outcome(lambda d: fact_hash_and_parents(d, what="doc"), document) == expected
    assert _outcome(lambda d: _hash_and_parents(parse_fact(d, what="doc")), document) == expected
    assert _outcome(_slow, _ORDINARY)[0] == "ok"


def _hash_and_parents(fact: facts.Fact) -> tuple[str, tuple[str, ...]]:
    return fact.hash, fact.derived_from


@pytest.mark.parametrize(
    ("value", "confidence"),
    [
        ({"type": "number", "v": 12}, 0.949),
        ({"type": "text", "v": 'x\u00e9"\\\x01'}, 1),
        ({"type": "boolean", "v": False, "interpret_as": "instruction"}, 0),
        ({"type": "null", "v": None}, 0.25),
        ({"type": "number", "v": -2.5}, 0.5),
    ],
)
def test_usual_facts_take_the_quick_path(value: dict[str, Any], confidence: float) -> None:
    document = {
        "entity": "urn:x:a",
        "relation": "memory:role",
        "value": value,
        "source": "urn:s:1",
        "scope": "team",
        "confidence": confidence,
        "ts": "2026-01-01T00:00:00Z",
        "derived_from": [H1, H2],
    }
    quick = facts._quick(document)
    assert quick is not None, "the quick pass should accept an ordinary fact"
    derived, body = quick
    assert derived == (H1, H2)
    hashed = {name: document[name] for name in HASHED_FIELDS}
    assert body == rfc8785.dumps(hashed) == jcs(hashed)


@pytest.mark.parametrize("number", [1e-7, 1.0, -0.0, 2**53, 1e21])
def test_numbers_jcs_must_write_leave_the_body_to_jcs(number: float) -> None:
    document = {
        "entity": "urn:x:a",
        "relation": "memory:role",
        "value": {"type": "number", "v": number},
        "source": "urn:s:1",
        "scope": "team",
        "confidence": 1,
        "ts": "2026-01-01T00:00:00Z",
    }
    assert facts._quick(document) == ((), None)


def test_check_records_gives_the_parse_fact_findings() -> None:
    good = make_fact("good", ABSENT)
    body = jcs(dict(good.document))
    bodies = [
        body,
        b"{not json",
        b'{"a": 1, "a": 2}',
        b"[1, 2]",
        jcs({**good.document, "derived_from": ["NOT-HEX"]}),
        jcs({**good.document, "derived_from": [ABSENT, ABSENT]}),
        jcs({**good.document, "confidence": 2}),
        jcs({**good.document, "signature": {"alg": "none"}}),
        body.replace(b'"type":"text","v":"good"', b'"type":"number","v":9007199254740993'),
    ]
    records = [StoredRecord(good.hash, raw, f"r{i}") for i, raw in enumerate(bodies)]
    fast = check_records((r.key, r.body, r.where) for r in records)
    slow = examine(records)
    assert fast == [item[:5] for item in slow]
    codes = [item[4][0].code if item[4] else None for item in fast]
    assert codes == [
        None,
        "lineage.fact_malformed",
        "lineage.fact_malformed",
        "lineage.fact_malformed",
        "lineage.reference_malformed",
        "lineage.reference_malformed",
        "lineage.fact_malformed",
        "lineage.fact_malformed",
        "lineage.fact_malformed",
    ]
    assert fast[-1][4][0].details["cause"] == "canonical.unsafe_integer"
    # The signed path (parse_fact) and the plain one give the same report but the counts.
    plain = audit(_Records(records)).to_json()
    signed = audit(_Records(records), check_signature=lambda fact: "unsigned").to_json()
    assert signed.pop("signatures") == {"signed": 0, "unsigned": 1, "bad": 0}
    assert plain.pop("signatures") is None
    assert plain == signed


_NODES = [c * 64 for c in "0123456789ab"]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(_NODES[:9]),  # the last three are only ever named: dangling
        st.lists(st.sampled_from(_NODES), max_size=4, unique=True).map(tuple),
        max_size=9,
    )
)
def test_graph_scan_keeps_every_cycle_and_finds_dangling(graph: dict[str, tuple[str, ...]]) -> None:
    rest, dangling = _graph_scan(graph)  # type: ignore[arg-type]
    assert find_cycles(rest) == find_cycles(graph)
    assert set(rest) <= set(graph)
    assert dangling == [(k, p) for k, parents in graph.items() for p in parents if p not in graph]


def test_graph_scan_peels_an_acyclic_graph_completely() -> None:
    graph = {_NODES[0]: (), _NODES[1]: (_NODES[0],), _NODES[2]: (_NODES[1], _NODES[0], ABSENT)}
    rest, dangling = _graph_scan(graph)  # type: ignore[arg-type]
    assert rest == {}
    assert dangling == [(_NODES[2], ABSENT)]
    cyclic = {**graph, _NODES[0]: (_NODES[2],), _NODES[3]: (_NODES[3],), _NODES[4]: (_NODES[2],)}
    rest, _ = _graph_scan(cyclic)  # type: ignore[arg-type]
    assert set(rest) == {_NODES[0], _NODES[1], _NODES[2], _NODES[3]}
