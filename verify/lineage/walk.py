"""Provenance walks over any fact store (docs/formats.md §5; seed 002 §20.6.2).

>>> from affidavit.verify.lineage.walk import MemoryFactSource, walk
>>> from affidavit.verify.lineage.facts import parse_fact
>>> base = {"entity": "urn:x:a", "relation": "memory:role", "value": {"type": "text", "v": "a"},
...         "source": "urn:src:1", "scope": "team", "confidence": 1, "ts": "2026-01-01T00:00:00Z"}
>>> parent = parse_fact(base)
>>> child = parse_fact({**base, "entity": "urn:x:b", "derived_from": [parent.hash]})
>>> result = walk(MemoryFactSource([parent, child]), child.hash, depth=1)
>>> [node.exists for node in result.nodes], result.truncated
([True, True], False)

The walk goes breadth-first along ``derived_from``, each fact once at its shortest distance. A fact
the caller may not read is shown exactly as an absent one, ``{hash, exists: false}``, and never
expanded. Past a :class:`WalkLimits` bound the walk stops and says ``truncated: true``. Cycles (seed
002 §20.6.1 rule 2) are refused on insert (:func:`closing_parent`) and found by an audit
(:func:`find_cycles`).

>>> find_cycles({"a": ("b",), "b": ("a",), "c": ("a", "x")})
[('a', 'b')]
>>> data = (b'{"entity": "urn:x:a", "relation": "memory:role", '
...     b'"value": {"type": "null", "v": null}, "source": "urn:s:1", "scope": "public", '
...     b'"confidence": 0.5, "ts": "2026-01-01T00:00:00Z"}\\n')
>>> [record.where for record in JsonlFactSource(data, "facts.jsonl").records()]
['line 1']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar

from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import Fact, FactHash, is_fact_hash, parse_fact

__all__ = [
    "DEFAULT_DEPTH",
    "MAX_DEPTH",
    "FactSource",
    "JsonlFactSource",
    "MemoryFactSource",
    "SignatureStatus",
    "StoredRecord",
    "WalkEdge",
    "WalkLimits",
    "WalkNode",
    "WalkResult",
    "check_depth",
    "closing_parent",
    "find_cycles",
    "split_record",
    "walk",
]

DEFAULT_DEPTH: Final = 3  # seed 002 §20.6.2: default 3
MAX_DEPTH: Final = 5  # seed 002 §20.6.2: max 5

SignatureStatus = Literal["signed", "unsigned", "bad"]
_EDGE_BYTES: Final = 2 * 64 + 40  # {"derived_fact_id":"…","source_hash":"…"},
_ABSENT_BYTES: Final = 64 + 30  # {"hash":"…","exists":false},


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """How much one walk may return: nodes, bytes of JSON (estimated from the nodes and edges it
    holds), and wall-clock seconds. Beyond any of them the walk stops and is ``truncated``."""

    max_nodes: int = 10_000
    max_bytes: int = 4 * 1024 * 1024
    max_seconds: float = 2.0


UNLIMITED: Final = WalkLimits(max_nodes=2**62, max_bytes=2**62, max_seconds=float("inf"))


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One stored fact as the store holds it, for audits: the key it is filed under (``None``
    when the store keeps no key, e.g. a plain JSON Lines file), its raw bytes, and where it is."""

    key: str | None
    body: bytes
    where: str


class FactSource(Protocol):
    """Anything that holds facts: a JSON Lines export, the SQLite store, a dict in a test."""

    def get(self, fact_hash: FactHash) -> Fact | None:
        """The fact filed under ``fact_hash``, or None; its ``hash`` is recomputed, so a tampered
        store may return one whose ``hash`` differs from ``fact_hash``."""
        ...

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        """The facts filed under any of ``fact_hashes`` (absent ones left out), by key: one
        query per walk level."""
        ...

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        """The keys of the facts whose derived_from names ``fact_hash``."""
        ...

    def records(self) -> Iterator[StoredRecord]:
        """Every stored fact, raw, in storage order (for audits)."""
        ...


class MemoryFactSource:
    """A :class:`FactSource` over facts held in memory, filed under their FactHash."""

    def __init__(self, facts: Iterable[Fact]) -> None:
        self._facts: dict[FactHash, Fact] = {}
        self._children: dict[FactHash, list[FactHash]] = {}
        for fact in facts:
            self._facts.setdefault(fact.hash, fact)
        for fact in self._facts.values():
            for parent in fact.derived_from:
                self._children.setdefault(parent, []).append(fact.hash)

    def get(self, fact_hash: FactHash) -> Fact | None:
        return self._facts.get(fact_hash)

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        return {h: self._facts[h] for h in fact_hashes if h in self._facts}

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        return tuple(self._children.get(fact_hash, ()))

    def records(self) -> Iterator[StoredRecord]:
        for index, (key, fact) in enumerate(self._facts.items()):
            yield StoredRecord(key=key, body=jcs(dict(fact.document)), where=f"fact {index}")


@dataclass(frozen=True, slots=True)
class WalkNode:
    """A node of a walk. ``fact is None`` means absent *or* hidden: the two are one state."""

    hash: FactHash
    depth: int
    fact: Fact | None
    signature: SignatureStatus | None = None

    @property
    def exists(self) -> bool:
        """True when the fact is present and readable."""
        return self.fact is not None

    def to_json(self) -> dict[str, Any]:
        """``{id, entity, relation, value, confidence, exists: true}`` (plus ``signature`` when
        checked) or ``{hash, exists: false}``."""
        if self.fact is None:
            return {"hash": self.hash, "exists": False}  # docs/formats.md §5: hidden == absent
        out: dict[str, Any] = {
            "id": self.hash,
            "entity": self.fact.entity,
            "relation": self.fact.relation,
            "value": self.fact.value.to_json(),
            "confidence": self.fact.confidence,
            "exists": True,
        }
        if self.signature is not None:
            out["signature"] = self.signature
        return out


@dataclass(frozen=True, slots=True)
class WalkEdge:
    """``derived_fact_id`` was derived from ``source_hash`` (docs/formats.md §5)."""

    derived_fact_id: FactHash
    source_hash: FactHash

    def to_json(self) -> dict[str, str]:
        """``{derived_fact_id, source_hash}``."""
        return {"derived_fact_id": self.derived_fact_id, "source_hash": self.source_hash}


@dataclass(frozen=True, slots=True)
class WalkResult:
    """A provenance walk: nodes in breadth-first order (root first), edges in discovery order."""

    root: FactHash
    depth_limit: int
    nodes: tuple[WalkNode, ...]
    edges: tuple[WalkEdge, ...]
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        """``{root_fact_id, depth_limit, nodes, edges, truncated}`` (docs/formats.md §5)."""
        return {
            "root_fact_id": self.root,
            "depth_limit": self.depth_limit,
            "nodes": [node.to_json() for node in self.nodes],
            "edges": [edge.to_json() for edge in self.edges],
            "truncated": self.truncated,
        }


def check_depth(depth: int) -> int:
    """Return ``depth`` when it is within 0..5.

    Raises:
        ``graph_depth_exceeded``: outside 0..MAX_DEPTH (seed 002 §20.8).
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise errors.LineageError(
            "graph_depth_exceeded",
            f"depth {depth} is outside 0..{MAX_DEPTH}",
            details={"depth": depth, "max": MAX_DEPTH},
        )
    return depth


def walk(
    source: FactSource,
    root: str,
    *,
    depth: int = DEFAULT_DEPTH,
    readable_scopes: frozenset[str] | None = None,
    check_signature: Callable[[Fact], SignatureStatus] | None = None,
    limits: WalkLimits = UNLIMITED,
    clock: Callable[[], float] = time.monotonic,
) -> WalkResult:
    """Walk ``root``'s provenance up to ``depth`` derivation hops.

    ``readable_scopes=None`` means every scope is readable. ``check_signature`` marks each readable
    node signed/unsigned/bad. ``clock`` is read only when ``limits.max_seconds`` is finite.

    Raises:
        ``graph_depth_exceeded``: depth outside 0..5.
        ``usage.invalid``: ``root`` is not a 64-character lowercase hex FactHash.
        ``fact_not_found``: the root is not in the store.
        ``lineage.root_forbidden``: the root's scope is not readable (no data is returned).
        ``lineage.fact_hash_mismatch``: a stored fact does not hash to the key it is filed under.
    """
    check_depth(depth)
    if not is_fact_hash(root):
        raise errors.UsageError("the root must be a 64-character lowercase hex FactHash")
    root_hash = FactHash(root)
    root_fact = source.get(root_hash)
    if root_fact is None:
        raise errors.LineageError(
            "fact_not_found", f"fact {root} not found", details={"fact": root}
        )
    _check_key(root_hash, root_fact)
    if readable_scopes is not None and root_fact.scope not in readable_scopes:
        # seed 002 §20.6.2: unauthorized root -> 403 with no node or edge data
        raise errors.LineageError(
            "lineage.root_forbidden", f"fact {root} is in a scope you may not read"
        )

    def visible(fact: Fact | None) -> Fact | None:
        if fact is None or (readable_scopes is not None and fact.scope not in readable_scopes):
            return None  # docs/formats.md §5: a hidden fact looks exactly like a missing one
        return fact

    def node(fact_hash: FactHash, level: int, fact: Fact | None) -> WalkNode:
        status = check_signature(fact) if (check_signature and fact is not None) else None
        return WalkNode(hash=fact_hash, depth=level, fact=fact, signature=status)

    timed = limits.max_seconds != float("inf")  # the clock is read only for a time budget
    deadline = clock() + limits.max_seconds if timed else 0.0
    nodes = [node(root_hash, 0, root_fact)]
    size = _node_bytes(nodes[0])
    edges: list[WalkEdge] = []
    seen = {root_hash}
    frontier = [root_fact]
    truncated = False
    for level in range(1, depth + 1):
        wanted: list[FactHash] = []
        room = limits.max_nodes - len(nodes)
        for fact in frontier:
            for parent in fact.derived_from:
                if parent not in seen:  # shortest path wins: breadth-first meets it first
                    if len(wanted) >= room:
                        truncated = True  # node budget spent: this parent is not shown
                        continue
                    seen.add(parent)
                    wanted.append(parent)
                edges.append(WalkEdge(derived_fact_id=fact.hash, source_hash=parent))
        frontier = []
        spent = False  # the byte or time budget ran out during this level
        for offset in range(0, len(wanted), _LOAD_CHUNK):
            chunk = wanted[offset : offset + _LOAD_CHUNK]
            if timed and clock() > deadline:
                spent = True
                break
            found = source.get_many(chunk)
            for key, loaded in found.items():
                _check_key(key, loaded)
            for parent in chunk:
                parent_fact = visible(found.get(parent))
                parent_node = node(parent, level, parent_fact)
                grown = size + _node_bytes(parent_node) + _EDGE_BYTES
                if grown > limits.max_bytes:
                    spent = True
                    break
                size = grown
                nodes.append(parent_node)
                if parent_fact is not None:
                    frontier.append(parent_fact)
            if spent:
                break
        truncated = truncated or spent
        if truncated or not frontier:
            break
    else:
        truncated = any(fact.derived_from for fact in frontier)
    if truncated:  # edges only between nodes the result holds
        shown = {n.hash for n in nodes}
        edges = [e for e in edges if e.source_hash in shown and e.derived_fact_id in shown]
    return WalkResult(
        root=root_hash,
        depth_limit=depth,
        nodes=tuple(nodes),
        edges=tuple(edges),
        truncated=truncated,
    )


_LOAD_CHUNK: Final = 512


def _node_bytes(node: WalkNode) -> int:
    """The node's share of the response: its JSON size (exact for the fact's own fields)."""
    if node.fact is None:
        return _ABSENT_BYTES
    return len(jcs(node.to_json())) + 2


def _check_key(fact_hash: FactHash, fact: Fact) -> None:
    if fact.hash != fact_hash:
        # docs/formats.md §1 "verify over what you received": never trust the store's key
        raise errors.LineageError(
            "lineage.fact_hash_mismatch",
            f"the fact filed under {fact_hash} hashes to {fact.hash}: the store was altered "
            "(run facts audit)",
            details={"key": fact_hash, "recomputed": fact.hash},
        )


H = TypeVar("H", bound=str)


def closing_parent(
    fact: H, parents: Sequence[H], children_of: Callable[[H], Iterable[H]]
) -> H | None:
    """The first of ``parents`` through which adding ``fact -> parents`` would close a cycle.

    In an acyclic graph (the store's invariant) a new cycle runs through ``fact``: some parent is
    ``fact`` or a fact that already names it, directly or transitively. So the walk goes down from
    ``fact``: cheap for the usual fact nobody names yet.
    """
    wanted = set(parents)
    if fact in wanted:
        return fact
    seen = {fact}
    frontier = [fact]
    while frontier:
        nxt: list[H] = []
        for node in frontier:
            for child in children_of(node):
                if child in seen:
                    continue
                if child in wanted:
                    return next(p for p in parents if p == child)
                seen.add(child)
                nxt.append(child)
        frontier = nxt
    return None


def find_cycles(graph: Mapping[str, Sequence[str]]) -> list[tuple[str, ...]]:
    """Every cycle's members (strongly connected components of size > 1, and self-loops), each
    sorted, in sorted order; dangling edges are ignored. Iterative Tarjan (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[tuple[str, ...]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            parents = graph[node]
            advanced = False
            while position < len(parents):
                parent = parents[position]
                position += 1
                if parent not in graph:
                    continue
                if parent not in index:
                    work.append((node, position))
                    work.append((parent, 0))
                    advanced = True
                    break
                if parent in on_stack:
                    low[node] = min(low[node], index[parent])
            if advanced:
                continue
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    cycles.append(tuple(sorted(component)))
            if work:
                caller = work[-1][0]
                low[caller] = min(low[caller], low[node])
    return sorted(cycles)


_MAX_LINE: Final = 4 * 1024 * 1024


class Lines(Protocol):
    """What :class:`JsonlFactSource` reads: ``bytes``, or a read-only ``mmap.mmap`` of a file."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., /) -> int: ...


def split_record(document: Any) -> tuple[str | None, Any]:
    """Split one parsed line into ``(stored key or None, fact document)``."""
    if isinstance(document, dict) and set(document) == {"fact_hash", "fact"}:
        return document["fact_hash"], document["fact"]
    return None, document


class JsonlFactSource:
    """A read-only :class:`FactSource` over the bytes (or a read-only ``mmap``) of a JSON Lines
    file named ``name``: each non-blank line an export record ``{"fact_hash": H, "fact": {...}}``
    filed under ``H``, or a plain fact filed under its FactHash. The first lookup indexes the lines.

    Raises (from :meth:`get` and :meth:`children`, which build the index on first use):
        ``lineage.store_invalid``: a line is not a fact or export record (the walk refuses to
            guess), or longer than 4 MiB.
    """

    def __init__(self, data: Lines, name: str) -> None:
        self.data = data
        self.path = name
        self._index: dict[str, tuple[int, int]] | None = None
        self._children: dict[str, list[FactHash]] | None = None

    def get(self, fact_hash: FactHash) -> Fact | None:
        index = self._ensure_index()
        where = index.get(fact_hash)
        if where is None:
            return None
        offset, length = where
        line = self.data[offset : offset + length]
        return self._parse_line(line, where=f"offset {offset}")[1]

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        return {h: fact for h in fact_hashes if (fact := self.get(h)) is not None}

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        if self._children is None:
            children: dict[str, list[FactHash]] = {}
            for number, _offset, line in self._lines():
                key, fact = self._parse_line(line, where=f"line {number}")
                for parent in fact.derived_from:
                    children.setdefault(parent, []).append(FactHash(key))
            self._children = children
        return tuple(self._children.get(fact_hash, ()))

    def records(self) -> Iterator[StoredRecord]:
        """Every line as a raw record, keyed by its ``fact_hash`` if any (a line that is not JSON
        too, unkeyed, so that an audit reports it)."""
        for number, _offset, line in self._lines():
            key: str | None = None
            body = line
            try:
                key_value, document = split_record(loads(line))
                if key_value is not None:
                    key = key_value if isinstance(key_value, str) else repr(key_value)
                    body = jcs(document)
            except (errors.ParseError, errors.CanonicalError):
                pass
            yield StoredRecord(key=key, body=body, where=f"line {number}")

    def _lines(self) -> Iterator[tuple[int, int, bytes]]:
        data, offset, number = self.data, 0, 0
        while offset < len(data):
            end = data.find(b"\n", offset) + 1 or len(data)
            number += 1
            if end - offset > _MAX_LINE:
                raise errors.LineageError(
                    "lineage.store_invalid", f"{self.path}: line {number} is too long"
                )
            line = data[offset:end]
            if line.strip():
                yield number, offset, line
            offset = end

    def _parse_line(self, line: bytes, *, where: str) -> tuple[str, Fact]:
        try:
            key, document = split_record(loads(line))
            fact = parse_fact(document, what=f"{self.path} {where}")
        except (errors.ParseError, errors.LineageError, errors.CanonicalError) as e:
            raise errors.LineageError(
                "lineage.store_invalid",
                f"{self.path} {where}: {e.message}",
                details={"cause": e.code},
            ) from e
        if key is None:
            return fact.hash, fact
        if not is_fact_hash(key):
            raise errors.LineageError(
                "lineage.store_invalid", f"{self.path} {where}: fact_hash is not a FactHash"
            )
        return str(key), fact

    def _ensure_index(self) -> dict[str, tuple[int, int]]:
        if self._index is None:
            index: dict[str, tuple[int, int]] = {}
            for number, offset, line in self._lines():
                key, _fact = self._parse_line(line, where=f"line {number}")
                index.setdefault(key, (offset, len(line)))
            self._index = index
        return self._index
