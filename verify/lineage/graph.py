"""Cycle checks on the derived_from graph (seed 002 §20.6.1 rule 2).

Edges point from a derived fact to the facts it was derived from. Because derived_from is outside
FactHash (docs/formats.md §5), two facts can name each other, and a fact can even name itself:
cycles
are possible and must be refused on insert and found by an audit.

>>> from affidavit.verify.lineage.graph import find_cycles
>>> find_cycles({"a": ("b",), "b": ("a",), "c": ("a", "x")})
[('a', 'b')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["closing_parent", "find_cycles"]

H = TypeVar("H", bound=str)


def closing_parent(
    fact: H, parents: Sequence[H], children_of: Callable[[H], Iterable[H]]
) -> H | None:
    """The first of ``parents`` through which adding ``fact -> parents`` would close a cycle.

    The graph before the insert must be acyclic (the store keeps that invariant). A new cycle then
    runs through ``fact``: some parent is ``fact`` itself or one of its descendants (the facts
    that already name it, directly or transitively, perhaps as a dangling reference). The walk
    goes down from ``fact``, which is cheap in the usual case of a fact nobody names yet.
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
    """Every cycle's members (strongly connected components of size > 1, and self-loops).

    Each component is returned sorted; the list is sorted. Iterative Tarjan, so a long chain
    does not hit the recursion limit. Edges to nodes outside ``graph`` (dangling) are ignored.
    """
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
