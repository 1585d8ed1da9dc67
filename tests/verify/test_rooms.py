"""Each room of affidavit.verify: a docstring, and an ``__all__`` whose names resolve, lazily
(PEP 562, docs/adr/0003-cold-start.md): importing a room imports none of its modules. The json
room imports its names plainly (docs/adr/0021-plain-encoders.md): every command reads JSON."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

ROOMS = (
    "anchor",
    "bundles",
    "contracts",
    "crypto",
    "dsse",
    "json",
    "lineage",
    "receipts",
    "scitt",
    "tlog",
    "transforms",
)
LAZY_ROOMS = tuple(room for room in ROOMS if room != "json")
MODULES_OF_JSON = ("canonical", "forms", "strict")


@pytest.mark.parametrize("room", LAZY_ROOMS)
def test_every_public_name_resolves_from_its_home(room: str) -> None:
    package = importlib.import_module(f"affidavit.verify.{room}")
    assert (package.__doc__ or "").strip(), room
    assert package.__all__ == sorted(package._HOME), room
    for name in package.__all__:
        module = importlib.import_module(f"{package.__name__}.{package._HOME[name]}")
        assert getattr(package, name) is getattr(module, name), name
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018


def test_the_json_room_names_what_its_modules_define() -> None:
    package = importlib.import_module("affidavit.verify.json")
    assert (package.__doc__ or "").strip()
    assert len(set(package.__all__)) == len(package.__all__)
    homes = [importlib.import_module(f"{package.__name__}.{m}") for m in MODULES_OF_JSON]
    for name in package.__all__:  # each is a name of one of its modules, that very object
        assert any(getattr(home, name, None) is getattr(package, name) for home in homes), name
    assert not hasattr(package, "__getattr__")  # plain imports, no PEP 562 (ADR 0021)
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018


def test_importing_a_room_imports_none_of_its_modules() -> None:
    code = (
        "import sys, importlib\n"
        f"for room in {LAZY_ROOMS!r}: importlib.import_module('affidavit.verify.' + room)\n"
        "print(sorted(m for m in sys.modules if m.startswith('affidavit.verify.') "
        "and m.count('.') > 2))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
