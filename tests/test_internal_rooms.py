"""The sub-packages below attest's and registry's front doors are internal (issue 32, item 3):
each ``__init__`` is a docstring that says so and lists nothing, with no lazy-name machinery
(PEP 562 ``__getattr__``), and importing one loads none of its modules. Callers import a name
from the module that defines it (docs/adr/0022-click-alone.md, "Amendment (issue 32)")."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = (
    "attest/intoto",
    "attest/log",
    "attest/stores",
    "attest/publishing",
    "registry/clients",
)


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_is_a_docstring_that_says_it_is_internal(room: str) -> None:
    tree = ast.parse((ROOT / room / "__init__.py").read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "This room is internal" in doc, room
    docstring, names = tree.body  # nothing else: no import, no __getattr__, no _HOME
    assert isinstance(docstring, ast.Expr)
    assert isinstance(names, ast.AnnAssign)
    assert ast.unparse(names) == "__all__: list[str] = []", room


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
