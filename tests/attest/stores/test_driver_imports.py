"""Each store speaks its own database (docs/adr/0020-each-store-its-dialect.md): the SQLite driver
is imported by the SQLite store alone, psycopg by the PostgreSQL store alone. Every other module
reaches a database through the store interface and catches the project's store errors."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("verify", "attest", "registry", "cli", "witness")
# driver -> the one module allowed to import it
OWNER = {"sqlite3": "attest/stores/sqlite.py", "psycopg": "attest/stores/postgres.py"}


def _imported(tree: ast.AST) -> set[str]:
    """The top-level names of every module ``tree`` imports (at any depth: lazy imports too)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_each_driver_is_imported_by_its_store_only() -> None:
    offenders: list[str] = []
    scanned = 0
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            scanned += 1
            drivers = _imported(ast.parse(path.read_text(encoding="utf-8"))) & set(OWNER)
            offenders += [f"{where} imports {d}" for d in sorted(drivers) if where != OWNER[d]]
    assert scanned > 100  # the scan saw the packages
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_lazy_and_dotted_imports() -> None:
    tree = ast.parse("def f():\n    import psycopg.pq\n    from sqlite3 import Connection\n")
    assert _imported(tree) == {"psycopg", "sqlite3"}
