"""The layer rule and no import cycles, read from the source (docs/architecture.md, docs/adr/0004).

Every module of ``affidavit.{verify,attest,registry,cli}`` is parsed with :mod:`ast`; every import
counts, wherever it sits: module level, inside a function (a lazy import is still a dependency,
only a later one), and under ``if TYPE_CHECKING:`` (an annotation-only import is still a
dependency of the code's meaning, and the cycle comes back the day it is needed at run time).

(a) One direction: cli -> registry -> attest -> verify. A package imports only itself and the
    packages below it; ``affidavit.verify`` also imports no network code (the run-time probe in
    tests/verify/test_offline_imports.py sees module-level imports; this sees the lazy ones too).
(b) No cycles inside a package: in the module-level graph, every strongly connected component
    has one module. A deliberate, unavoidable cycle would be listed in :data:`ALLOWED_CYCLES`
    with its reason (none is); :data:`PENDING_CYCLES` lists the ones whose fix is requested in
    files owned elsewhere. A listed cycle that no longer exists fails too, so the lists stay true.

How an import names a module (the usual reading, as import-linter does): ``import a.b.c`` and
``from a.b import c`` (``c`` a module) depend on ``a.b.c``; ``from a.b import name`` depends on
``a.b``. The implicit import of parent packages is not an edge: the package facades
(``affidavit.verify.__init__`` re-exports through PEP 562 and TYPE_CHECKING imports) would
otherwise put every module in one cycle. Importing a facade by name (``from affidavit.verify
import jcs`` inside the package) is an edge, and is caught. Imports by computed name
(``importlib.import_module`` over the lazy command table in cli._group and the PEP 562 table in
verify/__init__) are not seen; both tables name only modules of their own package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]

# Lowest first: a package may import only itself and the packages before it.
LAYERS: Final = (
    "affidavit.verify",
    "affidavit.attest",
    "affidavit.registry",
    "affidavit.witness",
    "affidavit.cli",
)
_FOLDERS: Final = {package: ROOT / package.split(".")[1] for package in LAYERS}

NETWORK: Final = (
    "httpx",
    "httpcore",
    "requests",
    "urllib3",
    "aiohttp",
    "urllib.request",
    "http.client",
    "socket",
    "ssl",
    "uvicorn",
    "starlette",
)

# A deliberate, unavoidable cycle: frozenset of its modules -> why it must stay. None today.
ALLOWED_CYCLES: Final[Mapping[frozenset[str], str]] = {}

# Cycles found by this test whose fix lies in files another part of this change owns: the fix is
# requested, and the entry goes when it lands (test_listed_cycles_still_exist then fails).
PENDING_CYCLES: Final[Mapping[frozenset[str], str]] = {}
_LISTED: Final = {**ALLOWED_CYCLES, **PENDING_CYCLES}


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module name, as written, and where."""

    source: str  # the importing module
    target: str  # the imported module (or the module a name is imported from)
    line: int


def module_files(folders: Mapping[str, Path]) -> dict[str, Path]:
    """Every module under each package folder, by dotted name (``__init__`` names the package)."""
    found: dict[str, Path] = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports_in(name: str, source: str, *, is_package: bool, known: Iterable[str]) -> list[Import]:
    """Every import in ``source`` (module ``name``), at any depth, resolved to module names."""
    modules = set(known)
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(Import(name, alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            for alias in node.names:
                child = f"{origin}.{alias.name}"
                found.append(Import(name, child if child in modules else origin, node.lineno))
    return found


def all_imports(files: Mapping[str, Path]) -> list[Import]:
    """:func:`imports_in` over every file."""
    return [
        found
        for name, path in files.items()
        for found in imports_in(
            name, path.read_text("utf-8"), is_package=path.name == "__init__.py", known=files
        )
    ]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _layer(name: str) -> int | None:
    for index, package in enumerate(LAYERS):
        if _within(name, package):
            return index
    return None


def upward(imports: Iterable[Import]) -> list[str]:
    """Imports that go up the layers (or from verify to network code), as readable lines."""
    bad = []
    for found in imports:
        here, there = _layer(found.source), _layer(found.target)
        if here is not None and there is not None and there > here:
            bad.append(f"{found.source}:{found.line} imports {found.target}")
        if here == 0 and any(_within(found.target, net) for net in NETWORK):
            bad.append(f"{found.source}:{found.line} imports network code {found.target}")
    return sorted(bad)


def graph_of(imports: Iterable[Import], known: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (the longest known prefix)."""
    modules = set(known)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for found in imports:
        target = found.target
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != found.source and _layer(target) == _layer(found.source):
            graph[found.source].add(target)
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(component: frozenset[str], graph: Mapping[str, set[str]]) -> str:
    edges = sorted(f"{a} -> {b}" for a in component for b in graph[a] if b in component)
    return "cycle: " + "; ".join(edges)


@pytest.fixture(scope="module")
def files() -> dict[str, Path]:
    return module_files(_FOLDERS)


@pytest.fixture(scope="module")
def imports(files: dict[str, Path]) -> list[Import]:
    return all_imports(files)


def test_every_package_is_read(files: dict[str, Path]) -> None:
    for package in LAYERS:
        assert package in files
    rooms = {name.split(".")[2] for name in files if name.count(".") >= 3}
    assert {"json", "crypto", "anchor", "contracts", "bundles", "lineage"} <= rooms
    assert {"log", "stores", "publishing", "routes", "clients", "adapter", "verify"} <= rooms


def test_imports_go_down_the_layers_only(imports: list[Import]) -> None:
    assert upward(imports) == []


def test_no_import_cycles(files: dict[str, Path], imports: list[Import]) -> None:
    graph = graph_of(imports, files)
    found = set(cycles(graph))
    unexpected = [_describe(c, graph) for c in sorted(found - set(_LISTED), key=sorted)]
    assert unexpected == []


def test_listed_cycles_still_exist(files: dict[str, Path], imports: list[Import]) -> None:
    found = set(cycles(graph_of(imports, files)))
    assert [sorted(c) for c in _LISTED if c not in found] == []


# -- the checker itself can fail --------------------------------------------------------------


def test_checker_reads_lazy_type_checking_and_relative_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from affidavit.cli.x import Y\n"
        "def f():\n    import httpx\n    from . import sibling\n    from .. import errors\n"
    )
    known = {"affidavit.verify.room.sibling", "affidavit.verify.errors"}
    found = imports_in("affidavit.verify.room.mod", source, is_package=False, known=known)
    assert {i.target for i in found} >= {
        "affidavit.cli.x",
        "httpx",
        "affidavit.verify.room.sibling",
        "affidavit.verify.errors",
    }
    assert upward(found) == [
        "affidavit.verify.room.mod:3 imports affidavit.cli.x",
        "affidavit.verify.room.mod:5 imports network code httpx",
    ]


def test_checker_finds_upward_imports() -> None:
    found = [
        Import("affidavit.attest.a", "affidavit.registry.b", 1),
        Import("affidavit.registry.b", "affidavit.cli.c", 2),
        Import("affidavit.cli.c", "affidavit.verify.d", 3),  # down: fine
        Import("affidavit.registry.b", "affidavit.attest.a", 4),  # down: fine
    ]
    assert upward(found) == [
        "affidavit.attest.a:1 imports affidavit.registry.b",
        "affidavit.registry.b:2 imports affidavit.cli.c",
    ]


def test_checker_finds_cycles() -> None:
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},  # a -> b -> c -> a
        "d": {"e"},
        "e": {"d"},  # d <-> e
        "f": {"a"},  # only into a cycle: not part of one
    }
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_checker_finds_a_cycle_through_a_function_level_import() -> None:
    known = {"affidavit.registry.state", "affidavit.registry.publication"}
    state = "def open():\n    from affidavit.registry import publication\n"
    publication = "from affidavit.registry.state import RegistryState\n"
    found = [
        *imports_in("affidavit.registry.state", state, is_package=False, known=known),
        *imports_in("affidavit.registry.publication", publication, is_package=False, known=known),
    ]
    assert cycles(graph_of(found, known)) == [frozenset(known)]
