"""Every "Raises:" section names what really is raised (issue 22, style rule 9).

An error Affidavit raises on purpose is named by its code, as ``code.name`` (a family with a
wildcard, ``key.*``, when the codes are many), and every code named exists in
specs/error-codes.json. Other exceptions (``OSError``, ``FileExistsError``, a third party's) are
named by their class, which must exist (a builtin, a dotted name, or a name of the module itself)
and must not be one of Affidavit's families: those say where, the code says what. An item may also
refer to another docstring ("as :func:`f`", "See ...", "everything :func:`f` raises"), and a
remark in parentheses may follow a code.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.verify.errors import AffidavitError

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("verify", "attest", "registry", "cli", "witness")
CODES = frozenset(
    entry["code"]
    for entry in json.loads((ROOT / "specs" / "error-codes.json").read_text())["codes"]
)
_HEADER = re.compile(r"Raises(\s*\([^)]*\))?:\s*(?P<rest>.*)$")
_CODE = re.compile(r"``([^`]+)``")
_REFERENCE = re.compile(r"^(as |see |the same as |everything |whatever |:func:|:meth:)", re.I)


def raises_items(doc: str) -> Iterator[str]:
    """The head of each item of each "Raises:" section of ``doc`` (the text before its first
    ``": "``; an item's continuation lines are indented deeper)."""
    lines = doc.splitlines()
    for number, line in enumerate(lines):
        match = _HEADER.fullmatch(line.strip())
        if match is None:
            continue
        if match["rest"]:  # "Raises: ``x.y``: ..." on one line
            yield _head(match["rest"])
            continue
        base = None
        for item in lines[number + 1 :]:
            if not item.strip():
                break
            indent = len(item) - len(item.lstrip())
            if base is None:
                base = indent
            if indent < base:
                break
            if indent == base:
                yield _head(item.strip())


def _head(item: str) -> str:
    head = re.split(r":(\s|$)", item, maxsplit=1)[0]
    return head.rstrip(".")


def problems(head: str, module: str = "builtins") -> list[str]:
    """What is wrong with one item's head (empty: nothing); ``module`` is where it is written."""
    if _REFERENCE.match(head):
        return []
    head = re.sub(r"\s*\([^)]*\)", "", head)  # a remark in parentheses
    codes = _CODE.findall(head)
    if codes:
        rest = _CODE.sub("", head)
        found = [f"unknown code {c}" for c in codes if not _known(c)]
        if re.sub(r"\b(and|or)\b|[,;()\s]", "", rest):
            found.append(f"words beside the codes: {rest.strip()!r}")
        return found
    found = []
    for name in (n.strip() for n in head.split(",")):
        exception = _exception(name, module)
        if exception is None:
            found.append(f"{name!r} is not an exception class (name the code: ``x.y``)")
        elif issubclass(exception, AffidavitError):
            found.append(f"{name} is a family: name its code(s), ``x.y``")
    return found


def _known(code: str) -> bool:
    if code.endswith("*"):
        return any(c.startswith(code[:-1]) for c in CODES)
    return code in CODES


def _exception(name: str, module: str) -> type[BaseException] | None:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        found = getattr(importlib.import_module(module), name, getattr(builtins, name, None))
    elif re.fullmatch(r"[A-Za-z_][\w.]*\.[A-Za-z_]\w*", name):
        module, _, attribute = name.rpartition(".")
        try:
            found = getattr(importlib.import_module(module), attribute, None)
        except ImportError:
            found = None
    else:
        found = None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def docstrings() -> Iterator[tuple[str, str, str]]:
    """``(where, module, docstring)`` of every module, class and function of the five
    packages."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            module = ".".join(("affidavit", *parts[: -1 if parts[-1] == "__init__" else None]))
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, kinds):
                    doc = ast.get_docstring(node, clean=True)
                    if doc and "Raises" in doc:
                        line = getattr(node, "lineno", 1)
                        yield f"{path.relative_to(ROOT)}:{line}", module, doc


def test_every_raises_item_names_a_code_or_a_real_exception() -> None:
    found = [
        f"{where}: {problem}"
        for where, module, doc in docstrings()
        for head in raises_items(doc)
        for problem in problems(head, module)
    ]
    assert found == []


def test_the_sections_are_found() -> None:
    heads = [head for _, _, doc in docstrings() for head in raises_items(doc)]
    assert len(heads) > 400  # the parser reads the sections (a broken one finds none)


@pytest.mark.parametrize(
    ("head", "wrong"),
    [
        ("``io.unreadable``", False),
        ("``dsse.too_large`` (exit 2)", False),
        ("everything :func:`verify_note` raises", False),
        ("sqlite3.DatabaseError", False),
        ("``key.*``", False),
        ("``key.unrecognized``, ``key.weak``", False),
        ("OSError", False),
        ("FileExistsError, OSError", False),
        ("as :func:`load_witness_keys`", False),
        ("``no.such_code``", True),
        ("``nosuch.*``", True),
        ("LogStateInvalid", True),  # a class that does not exist
        ("UsageError", True),  # a family: name the code
        ("errors.UsageError", True),
        ("AffidavitError", True),
        ("ContractSchemaError, ContractHashMismatch, ...", True),
        ("``io.unreadable`` unless the file is there", True),
    ],
)
def test_the_rule_can_fail(head: str, wrong: bool) -> None:
    assert bool(problems(head)) is wrong, problems(head)


def test_items_are_read_with_their_continuations() -> None:
    doc = """Do it.

    Raises:
        ``io.unreadable``: the file cannot be read: it is
            missing (a continuation, never an item).
        OSError: the folder cannot be written.

    Returns: nothing.
    """
    import inspect

    assert list(raises_items(inspect.cleandoc(doc))) == ["``io.unreadable``", "OSError"]
