"""The public surface is ``__all__``, checked (docs/adr/0019-public-surface.md, issue 22).

(a) Every package of the five opens with a docstring and lists its public names in ``__all__``,
    and every listed name resolves (the site's Python API page is made from these lists).
(b) Private by default: an import in one package of a name from another names something the
    room it comes from lists in ``__all__`` (or ``affidavit.verify`` does), or a module of that
    room, or the function a module is named after (``from ...lineage.walk import walk``); never
    a ``_``-prefixed module or name. The rooms below the front doors are internal and list
    nothing (issue 32): a name is imported from the module that defines it, which lists it in
    its own ``__all__``. The one exception is the PEP 562 helper the front doors share.
(c) No dead names: a module-level function, class or constant that no code, tool, benchmark,
    demo script or ``__all__`` names outside its own definition is an error (a name only its
    own tests use is dead too: delete both).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import pkgutil
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
PACKAGES: Final = ("verify", "attest", "registry", "cli", "witness")
_WORD: Final = re.compile(r"\w+")
# The lazy-names helper (PEP 562) that the package front doors share (no room below them uses it);
# it lives in the lowest layer so that every package may import it.
SHARED_PRIVATE: Final = {("affidavit.verify", "_lazy_names")}


def _packages() -> Iterator[ModuleType]:
    for name in PACKAGES:
        top = importlib.import_module(f"affidavit.{name}")
        yield top
        for info in pkgutil.walk_packages(top.__path__, f"{top.__name__}."):
            if info.ispkg:
                yield importlib.import_module(info.name)


def _sources() -> Iterator[tuple[str, Path]]:
    """(top package, file) for every module of the five packages."""
    for name in PACKAGES:
        for path in sorted((ROOT / name).rglob("*.py")):
            yield name, path


@functools.cache
def _is_package(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


PUBLIC_LIBRARY: Final = set(importlib.import_module("affidavit.verify").__all__)


@functools.cache
def _is_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@functools.cache
def _listed(module: str) -> frozenset[str]:
    """What may be imported from ``module`` by another package: what its room lists in
    ``__all__``, or, in an internal room (one that lists nothing), what the module lists."""
    imported = importlib.import_module(module)
    parent = module.rsplit(".", 1)[0]
    if not _is_package(module) and parent.count(".") > 1:  # a room's module
        room = importlib.import_module(parent)
        if getattr(room, "__all__", ()):
            imported = room
    return frozenset(getattr(imported, "__all__", ()))


@pytest.mark.parametrize("package", list(_packages()), ids=lambda m: m.__name__)
def test_every_package_says_what_it_is_and_lists_its_names(package: ModuleType) -> None:
    assert (package.__doc__ or "").strip(), f"{package.__name__} has no docstring"
    names = getattr(package, "__all__", None)
    assert names is not None, f"{package.__name__} has no __all__"
    assert len(set(names)) == len(names), f"{package.__name__}.__all__ repeats a name"
    for name in names:
        assert getattr(package, name, None) is not None, f"{package.__name__}.{name}"


def _cross_package_imports() -> Iterator[tuple[str, int, str, str]]:
    for top, path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module):
                continue
            parts = node.module.split(".")
            if parts[0] != "affidavit" or len(parts) < 2 or parts[1] == top:
                continue
            for alias in node.names:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                yield where, node.module, alias.name, top


def test_packages_import_from_each_other_only_what_is_listed() -> None:
    unlisted = []
    for where, module, name, _ in _cross_package_imports():
        if (module, name) in SHARED_PRIVATE:
            continue
        private = any(part.startswith("_") for part in (*module.split("."), name))
        allowed = (
            name in _listed(module)
            or name in PUBLIC_LIBRARY
            or module.rsplit(".", 1)[-1] == name  # a module's namesake function
            or (_is_package(module) and _is_module(f"{module}.{name}"))
        )
        if private or not allowed:
            unlisted.append(f"{where} from {module} import {name}")
    assert not unlisted, "imports of names their room does not list in __all__:\n" + "\n".join(
        unlisted
    )


def _definitions(path: Path) -> Iterator[tuple[int, str]]:
    """Module-level names a module defines; decorated ones are registered by their decorator."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not node.decorator_list:
                yield node.lineno, node.name
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and not target.id.startswith("__"):
                    yield node.lineno, target.id


def _own_all(tree: ast.Module) -> set[str]:
    """The names a module lists in its own ``__all__`` (a listing is not a use)."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value:
                return {
                    element.value
                    for element in ast.walk(node.value)
                    if isinstance(element, ast.Constant) and isinstance(element.value, str)
                }
    return set()


def test_no_module_level_name_is_dead() -> None:
    texts = {path: path.read_text(encoding="utf-8") for _, path in _sources()}
    code = Counter(_WORD.findall("\n".join(texts.values())))
    around = set(
        _WORD.findall(
            "\n".join(
                path.read_text(encoding="utf-8", errors="replace")
                for folder in ("tools", "bench", "demo")
                for path in (ROOT / folder).rglob("*")
                if path.is_file() and path.suffix in {".py", ".sh"}
            )
            + (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        )
    )
    dead = []
    for path, text in texts.items():
        listed = _own_all(ast.parse(text))
        for line, name in _definitions(path):
            # its definition, and its own __all__'s listing, are not uses
            uses = code[name] - 1 - (name in listed)
            if uses <= 0 and name not in around:
                dead.append(f"{path.relative_to(ROOT)}:{line} {name}")
    assert not dead, "defined and used nowhere (delete it, and its tests):\n" + "\n".join(dead)
