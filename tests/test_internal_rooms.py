"""No lazy-name machinery below the five front doors, and the rooms are internal (issue 32,
item 3; docs/adr/0003-cold-start.md and docs/adr/0022-click-alone.md, "Amendment (issue 32)").

Every sub-package of verify and attest, and registry's clients, is a room: its ``__init__`` is a
docstring that says so and lists nothing, and importing one loads none of its modules. Callers
import a name from the module that defines it. No sub-package at all (cli's command groups and
registry's routes included) defines a PEP 562 ``__getattr__`` or uses the front doors' helper.
The rooms are found on disk, so a new one is checked without being listed here."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRONT_DOORS = ("verify", "attest", "registry", "cli", "witness")
SUB_PACKAGES = sorted(
    init.parent.relative_to(ROOT).as_posix()
    for door in FRONT_DOORS
    for init in (ROOT / door).glob("*/__init__.py")
)
ROOMS = [p for p in SUB_PACKAGES if p.split("/")[0] in ("verify", "attest")] + ["registry/clients"]


def test_the_rooms_are_found() -> None:
    # the sixteen rooms issue 32 made internal: verify's eleven, attest's four, registry's clients
    assert len(ROOMS) == 16, ROOMS
    assert {"verify/bundles", "attest/log", "registry/clients"} <= set(ROOMS)


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_is_a_docstring_that_says_it_is_internal(room: str) -> None:
    tree = ast.parse((ROOT / room / "__init__.py").read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "This room is internal" in doc, room
    docstring, names = tree.body  # nothing else: no import, no __getattr__, no _HOME
    assert isinstance(docstring, ast.Expr)
    assert isinstance(names, ast.AnnAssign)
    assert ast.unparse(names) == "__all__: list[str] = []", room


@pytest.mark.parametrize("package", SUB_PACKAGES)
def test_no_sub_package_loads_names_lazily(package: str) -> None:
    source = (ROOT / package / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in defined, package
    assert "_lazy_names" not in source, package
    assert "_HOME" not in source, package


def test_importing_every_room_imports_none_of_their_modules() -> None:
    packages = [f"affidavit.{room.replace('/', '.')}" for room in ROOMS]
    code = (
        "import importlib, sys\n"
        f"for room in {packages!r}: importlib.import_module(room)\n"
        f"print(sorted(m for m in sys.modules if m.rsplit('.', 1)[0] in {packages!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"
