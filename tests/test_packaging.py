"""Packaging: folders import only as affidavit.*, specs ship as data, module doctests hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys

import affidavit.verify
import pytest

from tests.conftest import ROOT

PACKAGES = [
    "affidavit.verify",
    "affidavit.attest",
    "affidavit.cli",
    "affidavit.registry",
    "affidavit.witness",
    "affidavit.specs",
]


@pytest.mark.parametrize("bare", ["verify", "attest", "cli", "registry", "witness", "specs"])
def test_bare_folder_names_do_not_import(bare: str) -> None:
    # Run from a neutral folder so the checkout root is not on sys.path.
    completed = subprocess.run(
        [sys.executable, "-c", f"import {bare}"],
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode != 0
    assert "ModuleNotFoundError" in completed.stderr


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        names.append(package)
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(module.__path__)]
    return names


def test_every_package_ships_py_typed() -> None:
    for package in PACKAGES:
        folder = ROOT / package.split(".")[1]
        assert (folder / "py.typed").exists(), package


def test_doctests_in_verify_and_specs() -> None:
    failures = 0
    tried = 0
    for name in _modules():
        if not name.startswith(("affidavit.verify", "affidavit.specs")):
            continue
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        failures += result.failed
        tried += result.attempted
    assert tried > 0
    assert failures == 0


def test_verify_package_version_is_importable() -> None:
    assert affidavit.verify.__all__
