"""Provenance walks, cycles, audits and the JSON Lines source (docs/formats.md §5, seed 002
§20.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.lineage.audit import DANGLING, audit
from affidavit.verify.lineage.facts import Fact, FactHash, parse_fact
from affidavit.verify.lineage.walk import (
    JsonlFactSource,
    MemoryFactSource,
    StoredRecord,
    closing_parent,
    find_cycles,
    walk,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

ABSENT = FactHash("e" * 64)


def make_fact(name: str, *parents: str | Fact, scope: str = "team", **extra: Any) -> Fact:
    """A small valid fact named ``name`` derived from ``parents`` (facts or hashes)."""
    document: dict[str, Any] = {
        "entity": "urn:test:" + "_".join(name.split()),
        "relation": "test:derived",
        "value": {"type": "text", "v": name},
        "source": "urn:test:source",
        "scope": scope,
        "confidence": 0.5,
        "ts": "2026-01-01T00:00:00Z",
        **extra,
    }
    if parents:
        document["derived_from"] = [p.hash if isinstance(p, Fact) else p for p in parents]
    return parse_fact(document)


def chain(length: int) -> list[Fact]:
    """f0 <- f1 <- ... (each derived from the one before); the last is the newest."""
    facts = [make_fact("f0")]
    for index in range(1, length):
        facts.append(make_fact(f"f{index}", facts[-1]))
    return facts


# Walks ------------------------------------------------------------------------------------


def test_default_depth_is_three_and_truncation_is_reported() -> None:
    facts = chain(6)
    result = walk(MemoryFactSource(facts), facts[-1].hash)
    assert result.depth_limit == 3
    assert [n.hash for n in result.nodes] == [f.hash for f in reversed(facts[2:])]
    assert result.truncated is True
    full = walk(MemoryFactSource(facts), facts[-1].hash, depth=5)
    assert len(full.nodes) == 6
    assert full.truncated is False


def test_depth_zero_is_the_root_alone() -> None:
    facts = chain(2)
    result = walk(MemoryFactSource(facts), facts[-1].hash, depth=0)
    assert [n.hash for n in result.nodes] == [facts[-1].hash]
    assert result.edges == ()
    assert result.truncated is True


@pytest.mark.parametrize("depth", [6, -1, 100])
def test_depth_beyond_five_is_graph_depth_exceeded(depth: int) -> None:
    facts = chain(2)
    with raises_code("graph_depth_exceeded") as caught:
        walk(MemoryFactSource(facts), facts[-1].hash, depth=depth)
    assert caught.value.code == "graph_depth_exceeded"
    assert caught.value.exit_code == 2


def test_shortest_path_wins() -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    c = make_fact("c", b)
    root = make_fact("root", c, a)  # a is at distance 1 and 3
    result = walk(MemoryFactSource([a, b, c, root]), root.hash, depth=5)
    depths = {n.hash: n.depth for n in result.nodes}
    assert depths == {root.hash: 0, c.hash: 1, a.hash: 1, b.hash: 2}
    assert len(result.nodes) == 4  # each fact once
    assert {(e.derived_fact_id, e.source_hash) for e in result.edges} == {
        (root.hash, c.hash),
        (root.hash, a.hash),
        (c.hash, b.hash),
        (b.hash, a.hash),
    }


def test_walk_json_shape() -> None:
    parent = make_fact("p")
    root = make_fact("r", parent, ABSENT)
    document = walk(MemoryFactSource([parent, root]), root.hash, depth=1).to_json()
    assert list(document) == ["root_fact_id", "depth_limit", "nodes", "edges", "truncated"]
    assert document["nodes"][0] == {
        "id": root.hash,
        "entity": "urn:test:r",
        "relation": "test:derived",
        "value": {"type": "text", "v": "r"},
        "confidence": 0.5,
        "exists": True,
    }
    assert document["nodes"][2] == {"hash": ABSENT, "exists": False}
    assert document["edges"][1] == {"derived_fact_id": root.hash, "source_hash": ABSENT}


def test_hidden_fact_is_identical_to_an_absent_one() -> None:
    grandparent = make_fact("gp")
    secret = make_fact("secret", grandparent, scope="company")
    root = make_fact("root", secret)
    hidden = walk(
        MemoryFactSource([grandparent, secret, root]),
        root.hash,
        readable_scopes=frozenset({"team"}),
    )
    absent = walk(MemoryFactSource([grandparent, root]), root.hash)
    assert hidden == absent
    assert jcs(hidden.to_json()) == jcs(absent.to_json())
    assert all(n.hash != grandparent.hash for n in hidden.nodes)  # never expanded


def test_hidden_fact_at_the_depth_limit_does_not_leak_truncation() -> None:
    secret = make_fact("secret", make_fact("beyond"), scope="local")
    root = make_fact("root", secret)
    hidden = walk(
        MemoryFactSource([secret, root]), root.hash, depth=1, readable_scopes=frozenset({"team"})
    )
    absent = walk(MemoryFactSource([root]), root.hash, depth=1)
    assert hidden.truncated is absent.truncated is False
    assert hidden == absent


def test_unreadable_root_is_refused_with_no_data() -> None:
    root = make_fact("root", scope="company")
    with raises_code("lineage.root_forbidden") as caught:
        walk(MemoryFactSource([root]), root.hash, readable_scopes=frozenset({"team"}))
    assert caught.value.exit_code == 3
    assert caught.value.details == {}


def test_unknown_root_is_fact_not_found() -> None:
    with raises_code("fact_not_found") as caught:
        walk(MemoryFactSource([]), ABSENT)
    assert caught.value.code == "fact_not_found"


@pytest.mark.parametrize("root", ["E" * 64, "abc", ""])
def test_malformed_root_is_a_usage_error(root: str) -> None:
    with pytest.raises(errors.UsageError):
        walk(MemoryFactSource([]), root)


class _Tampered(MemoryFactSource):
    """Files one fact under the hash of another: what an edited store looks like."""

    def __init__(self, key: FactHash, fact: Fact) -> None:
        super().__init__([])
        self._key, self._fact = key, fact

    def get(self, fact_hash: FactHash) -> Fact | None:
        return self._fact if fact_hash == self._key else None

    def get_many(self, fact_hashes: Any) -> dict[FactHash, Fact]:
        return {self._key: self._fact} if self._key in fact_hashes else {}


def test_walk_refuses_a_fact_filed_under_another_hash() -> None:
    with raises_code("lineage.fact_hash_mismatch") as caught:
        walk(_Tampered(ABSENT, make_fact("x")), ABSENT)
    assert caught.value.exit_code == 1
    root = make_fact("root", ABSENT)

    class _TamperedParent(_Tampered):
        def get(self, fact_hash: FactHash) -> Fact | None:
            return root if fact_hash == root.hash else super().get(fact_hash)

    with raises_code("lineage.fact_hash_mismatch"):
        walk(_TamperedParent(ABSENT, make_fact("x")), root.hash)


def test_walk_survives_cycles_in_a_store() -> None:
    # derived_from is outside FactHash, so a store can hold a cycle: the walk must still end.
    a = make_fact("a")
    b = make_fact("b", a)
    a_cyclic = make_fact("a", b)  # same content as a, so the same hash, now naming b
    assert a_cyclic.hash == a.hash
    result = walk(MemoryFactSource([a_cyclic, b]), a.hash, depth=5)
    assert {n.hash for n in result.nodes} == {a.hash, b.hash}


def test_signature_status_is_added_to_readable_nodes_only() -> None:
    root = make_fact("root", ABSENT)
    result = walk(MemoryFactSource([root]), root.hash, check_signature=lambda fact: "unsigned")
    assert result.to_json()["nodes"][0]["signature"] == "unsigned"
    assert result.to_json()["nodes"][1] == {"hash": ABSENT, "exists": False}


# Cycle detection ----------------------------------------------------------------------------


def test_find_cycles_reports_components_and_self_loops() -> None:
    graph = {"a": ("b",), "b": ("c",), "c": ("a",), "d": ("d",), "e": ("a", "zz"), "f": ()}
    assert find_cycles(graph) == [("a", "b", "c"), ("d",)]
    assert find_cycles({"a": ("b",), "b": ()}) == []


def test_find_cycles_on_a_long_chain_does_not_recurse() -> None:
    size = 50_000
    graph = {str(i): (str(i + 1),) for i in range(size)}
    assert find_cycles(graph) == []
    graph[str(size)] = ("0",)
    assert find_cycles(graph)[0][0] == "0"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_closing_parent_agrees_with_find_cycles(edges: list[tuple[int, int]]) -> None:
    # Insert edges one node at a time, refusing those closing a cycle: the result stays acyclic,
    # and every refusal really would have made one.
    graph: dict[str, list[str]] = {}
    for child, parent in edges:
        node, target = str(child), str(parent)

        def children_of(h: str) -> list[str]:
            return [c for c, ps in graph.items() if h in ps]

        via = closing_parent(node, [target], children_of)
        trial = {k: tuple(v) for k, v in graph.items()}
        trial[node] = (*trial.get(node, ()), target)
        trial.setdefault(target, ())
        assert (via is not None) == bool(find_cycles(trial))
        if via is None:
            graph.setdefault(node, []).append(target)
            graph.setdefault(target, [])
    assert find_cycles({k: tuple(v) for k, v in graph.items()}) == []


# Audits ------------------------------------------------------------------------------------


class _Records(MemoryFactSource):
    def __init__(self, records: list[StoredRecord]) -> None:
        super().__init__([])
        self._records = records

    def records(self) -> Any:
        return iter(self._records)


def _record(fact: Fact | dict[str, Any], key: str | None = None, where: str = "r") -> StoredRecord:
    document = dict(fact.document) if isinstance(fact, Fact) else fact
    return StoredRecord(key=key if key is not None else None, body=jcs(document), where=where)


def test_clean_audit_reports_dangling_as_information() -> None:
    facts = chain(3)
    dangling = make_fact("d", ABSENT)
    report = audit(MemoryFactSource([*facts, dangling]))
    assert report.ok
    assert report.facts == 4
    assert [(i.code, i.severity, i.fact) for i in report.info] == [
        (DANGLING, "info", dangling.hash)
    ]


def test_audit_finds_altered_content() -> None:
    fact = make_fact("x")
    altered = {**fact.document, "value": {"type": "text", "v": "changed"}}
    report = audit(_Records([_record(altered, key=fact.hash)]))
    assert [f.code for f in report.findings] == ["lineage.fact_hash_mismatch"]


def test_audit_finds_an_altered_key() -> None:
    fact = make_fact("x")
    report = audit(_Records([_record(fact, key="0" * 64)]))
    assert [f.code for f in report.findings] == ["lineage.fact_hash_mismatch"]


def test_audit_finds_cycles() -> None:
    a = make_fact("a")
    b = make_fact("b", a)
    a_cyclic = make_fact("a", b)
    report = audit(_Records([_record(a_cyclic, key=a.hash), _record(b, key=b.hash)]))
    assert [f.code for f in report.findings] == ["lineage.cycle_found"]
    assert sorted(report.findings[0].details["members"]) == sorted([a.hash, b.hash])


def test_audit_finds_malformed_references_and_facts() -> None:
    fact = make_fact("x")
    bad_ref = {**fact.document, "derived_from": ["NOT-HEX"]}
    bad_fact = {**fact.document, "scope": "everywhere"}
    records = [
        _record(bad_ref, where="one"),
        _record(bad_fact, where="two"),
        StoredRecord(key=None, body=b"{not json", where="three"),
    ]
    report = audit(_Records(records))
    assert [(f.code, f.where) for f in report.findings] == [
        ("lineage.reference_malformed", "one"),
        ("lineage.fact_malformed", "two"),
        ("lineage.fact_malformed", "three"),
    ]


def test_audit_finds_changed_derived_from() -> None:
    a = make_fact("a")
    again = make_fact("a", ABSENT)
    report = audit(_Records([_record(a), _record(again)]))
    assert [f.code for f in report.findings] == ["lineage.derived_from_changed"]


def test_audit_counts_signatures() -> None:
    facts = chain(2)
    statuses = iter(["signed", "bad"])
    report = audit(MemoryFactSource(facts), check_signature=lambda fact: next(statuses))  # type: ignore[arg-type,return-value]
    assert report.signatures == {"signed": 1, "unsigned": 0, "bad": 1}
    assert [f.code for f in report.findings] == ["lineage.signature_bad"]


# JSON Lines source ----------------------------------------------------------------------------


def _write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _source(path: Path) -> JsonlFactSource:
    return JsonlFactSource(path.read_bytes(), str(path))


def test_jsonl_source_reads_plain_and_export_lines(tmp_path: Path) -> None:
    facts = chain(3)
    lines: list[Any] = [
        dict(facts[0].document),
        {"fact_hash": facts[1].hash, "fact": dict(facts[1].document)},
    ]
    lines.append(dict(facts[2].document))
    source = _source(_write_jsonl(tmp_path / "f.jsonl", lines))
    result = walk(source, facts[2].hash, depth=5)
    assert [n.hash for n in result.nodes] == [f.hash for f in reversed(facts)]
    assert tuple(source.children(facts[0].hash)) == (facts[1].hash,)
    assert audit(source).ok


def test_jsonl_source_refuses_a_corrupt_line_when_walking(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(jcs(dict(make_fact("a").document)) + b"\n{oops\n")
    with raises_code("lineage.store_invalid", match="line 2"):
        walk(_source(path), make_fact("a").hash)
    report = audit(_source(path))
    assert [(f.code, f.where) for f in report.findings] == [("lineage.fact_malformed", "line 2")]


def test_jsonl_export_record_with_a_wrong_key_is_caught(tmp_path: Path) -> None:
    fact = make_fact("a")
    altered = {**fact.document, "confidence": 0.9}
    path = _write_jsonl(tmp_path / "f.jsonl", [{"fact_hash": fact.hash, "fact": altered}])
    assert [f.code for f in audit(_source(path)).findings] == ["lineage.fact_hash_mismatch"]
    with raises_code("lineage.fact_hash_mismatch"):
        walk(_source(path), fact.hash)


def test_jsonl_lines_are_numbered_and_bounded() -> None:
    one, two = (jcs(dict(make_fact(name).document)) for name in ("a", "b"))
    source = JsonlFactSource(one + b"\n\n  \r\n" + two, "f.jsonl")  # no final newline
    assert [r.where for r in source.records()] == ["line 1", "line 4"]
    assert source.get(make_fact("b").hash) == make_fact("b")
    assert [r.where for r in JsonlFactSource(b"", "f.jsonl").records()] == []
    long = JsonlFactSource(one + b"\n" + b" " * (4 * 1024 * 1024) + b"\n", "f.jsonl")
    with raises_code("lineage.store_invalid", match="f.jsonl: line 2 is too long"):
        list(long.records())


# Bounded walks (nodes, bytes, time) -----------------------------------------------------------


def _fan(count: int, *, size: int = 10) -> tuple[list[Fact], Fact]:
    parents = [make_fact(f"p{i} " + "x" * size) for i in range(count)]
    return parents, make_fact("root", *parents)


def test_walk_stops_at_the_node_budget_and_says_truncated() -> None:
    from affidavit.verify.lineage.walk import WalkLimits

    parents, root = _fan(30)
    source = MemoryFactSource([*parents, root])
    full = walk(source, root.hash, depth=1)
    assert (len(full.nodes), full.truncated) == (31, False)
    capped = walk(source, root.hash, depth=1, limits=WalkLimits(max_nodes=10))
    assert capped.truncated is True
    assert len(capped.nodes) == 10
    assert [n.hash for n in capped.nodes] == [n.hash for n in full.nodes[:10]]
    shown = {n.hash for n in capped.nodes}
    assert all(e.source_hash in shown and e.derived_fact_id in shown for e in capped.edges)
    assert len(capped.edges) == 9


def test_walk_never_loads_more_than_it_may_show() -> None:
    from affidavit.verify.lineage.walk import WalkLimits

    parents, root = _fan(200)
    asked: list[int] = []

    class Counting(MemoryFactSource):
        def get_many(self, fact_hashes: Any) -> Any:
            asked.append(len(fact_hashes))
            return super().get_many(fact_hashes)

    walk(Counting([*parents, root]), root.hash, depth=1, limits=WalkLimits(max_nodes=25))
    assert sum(asked) == 24


def test_walk_stops_at_the_byte_budget() -> None:
    import json as _json

    from affidavit.verify.lineage.walk import WalkLimits

    parents, root = _fan(40, size=1000)
    source = MemoryFactSource([*parents, root])
    result = walk(source, root.hash, depth=1, limits=WalkLimits(max_bytes=8000))
    assert result.truncated is True
    assert 1 < len(result.nodes) < 10
    assert len(_json.dumps(result.to_json(), separators=(",", ":"))) <= 8000


def test_walk_stops_at_the_time_budget() -> None:
    from affidavit.verify.lineage.walk import WalkLimits

    facts = chain(6)
    ticks = iter(range(100))
    result = walk(
        MemoryFactSource(facts),
        facts[-1].hash,
        depth=5,
        limits=WalkLimits(max_seconds=2.5),
        clock=lambda: float(next(ticks)),
    )
    # the clock reads 0 at the start, then 1, 2, 3 before each level's load: two levels fit
    assert result.truncated is True
    assert [n.depth for n in result.nodes] == [0, 1, 2]


def test_walk_fills_its_node_budget_across_load_chunks() -> None:
    from affidavit.verify.lineage.walk import WalkLimits

    mids = []
    leaves: list[Fact] = []
    for i in range(4):
        mine = [make_fact(f"leaf {i} {j}") for j in range(400)]
        leaves += mine
        mids.append(make_fact(f"mid {i}", *mine))
    root = make_fact("root", *mids)
    source = MemoryFactSource([*leaves, *mids, root])
    result = walk(source, root.hash, depth=2, limits=WalkLimits(max_nodes=1200))
    assert result.truncated is True
    assert len(result.nodes) == 1200  # more than one load chunk (512) past level 1
