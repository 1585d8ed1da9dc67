"""Library text never names a command-line flag (style.md §17): every string literal under verify/
that is not a docstring (messages, step reasons, code descriptions) is free of ``--name``. A
sentence about a caller setting names the parameter (``require_signed``), and the command line
words it its own way (cli/render/verdict.py hints, Problem.render).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, nodes)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def flags_in(source: str) -> list[tuple[int, str]]:
    """(line, flag) for each flag name in a non-docstring string literal of ``source``."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [
        (node.lineno, flag)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for flag in FLAG.findall(node.value)
    ]


def test_no_string_in_verify_names_a_flag() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {flag}"
        for path in sorted((ROOT / "verify").rglob("*.py"))
        for line, flag in flags_in(path.read_text(encoding="utf-8"))
    ]
    assert not found, "library text names command-line flags:\n" + "\n".join(found)


def test_the_scan_finds_flags_in_messages_not_docstrings() -> None:
    source = '''"""Run it as ``verify bundle --json``."""
def f() -> str:
    """--strict is fine here."""
    raise ValueError(f"supply one with --public-key-base64 {1}")
NOTE = "a -- b, x--y, --, --A and -1 --2 are no flags"
'''
    assert flags_in(source) == [(4, "--public-key-base64")]
