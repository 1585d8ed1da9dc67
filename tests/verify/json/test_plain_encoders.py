"""Plain code in the root of trust (issue 32, docs/adr/0021-plain-encoders.md).

The canonical encoders use the standard library's public API only: no private interpreter
entry point (``json.encoder.c_make_encoder``), no sentinel-marked text, no placeholders; and the
json room imports its names plainly (no PEP 562 ``__getattr__``). Their bytes are checked against
``rfc8785`` and ``json.dumps`` in test_canonical.py; this file holds the shape rule and the
refusals the plain encoders must keep.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from typing import Any, Final

import pytest
from affidavit.verify.json import canonical
from affidavit.verify.json.canonical import jcs, py_compact, py_spaced

from tests.conftest import raises_code

VERIFY: Final = Path(__file__).resolve().parents[3] / "verify"
# Reaching into the json module's encoder internals (undocumented, CPython-specific).
_PRIVATE_JSON: Final = frozenset({"encoder", "scanner", "decoder"})
# Outside this redesign's area, with the reason (docs/adr/0021-plain-encoders.md, "Left").
_ALLOWED: Final = {
    "lineage/facts.py": "the lineage quick pass writes a fact's jcs text itself (lineage's area)",
}


def _private_json_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            if node.attr == "c_make_encoder":
                found.append(f"{node.lineno}: c_make_encoder")
            elif (
                isinstance(node.value, ast.Name)
                and node.value.id == "json"
                and node.attr in _PRIVATE_JSON
            ):
                found.append(f"{node.lineno}: json.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in {
            "_json",
            *(f"json.{name}" for name in _PRIVATE_JSON),
        }:
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import) and any(a.name == "_json" for a in node.names):
            found.append(f"{node.lineno}: import _json")
    return found


def test_no_module_of_the_verify_library_uses_json_internals() -> None:
    uses = {
        str(path.relative_to(VERIFY)): found
        for path in sorted(VERIFY.rglob("*.py"))
        if (found := _private_json_uses(path)) and str(path.relative_to(VERIFY)) not in _ALLOWED
    }
    assert not uses, uses


def test_the_json_room_imports_its_names_plainly() -> None:
    room = importlib.import_module("affidavit.verify.json")
    assert "__getattr__" not in vars(room)  # no PEP 562 lazy names
    missing = [name for name in room.__all__ if name not in vars(room)]
    assert not missing, missing


def test_the_json_room_has_no_fast_path_module() -> None:
    assert not (VERIFY / "json" / "_fastpath.py").exists()
    assert importlib.util.find_spec("affidavit.verify.json._fastpath") is None


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


@pytest.mark.parametrize("encode", [py_compact, py_spaced], ids=["py-compact", "py-spaced"])
def test_py_forms_refuse_a_cycle_as_unsupported_type(encode: Any) -> None:
    with raises_code("canonical.unsupported_type"):
        encode(_cycle())
    with raises_code("canonical.unsupported_type"):
        encode({1: "x", "a": "y"})  # keys json.dumps cannot sort


@pytest.mark.parametrize(
    ("value", "code"),
    [
        # The whole value is checked before a byte is written, one object's keys before its
        # members, its members last first: the first refusal is the same on every call.
        ({"a": 2**60, "b": float("nan")}, "canonical.non_finite"),
        ({"b": float("nan"), "a": 2**60}, "canonical.unsafe_integer"),
        ({"a": [2**60], 1: "x"}, "canonical.non_string_key"),
        ({"a": "\ud800", "b": object()}, "canonical.unsupported_type"),
        ({"a": "\ud800", "b": 2**60}, "canonical.unsafe_integer"),
    ],
)
def test_jcs_reports_the_first_refusal_of_its_check(value: object, code: str) -> None:
    with raises_code(code):
        jcs(value)


def test_jcs_checks_a_deep_value_to_its_bottom() -> None:
    # The check is a loop, not a recursion: a refusal past the interpreter's recursion limit is
    # still that refusal, not "nested too deeply".
    value: object = [2**60]
    for _ in range(5000):
        value = [value]
    with raises_code("canonical.unsafe_integer"):
        jcs(value)


@pytest.mark.parametrize("kind", [tuple, list])
def test_jcs_writes_tuples_as_arrays(kind: type) -> None:
    assert jcs({"a": kind([1, "x", None])}) == b'{"a":[1,"x",null]}'


class _Text(str):
    pass


class _Object(dict[str, Any]):
    pass


@pytest.mark.parametrize("value", [_Text("t"), _Object(), 1 + 0.5j, b"x"])
def test_jcs_accepts_only_the_exact_json_types(value: object) -> None:
    with raises_code("canonical.unsupported_type"):
        jcs({"v": value})


def test_the_encoders_are_the_modules_public_names() -> None:
    assert {"jcs", "py_compact", "py_spaced", "es6_number"} <= set(canonical.__all__)
    assert not {"py_marked", "unmark", "ITEM_MARK", "KEY_MARK"} & set(vars(canonical))
