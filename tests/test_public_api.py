"""The public API: ``affidavit.verify.__all__``, and the README example that uses only it."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import affidavit.verify

from tests.conftest import ROOT


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## As a library", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "README.md lost its library example"
    return match.group(1)


def test_every_public_name_resolves_and_all_matches_the_map() -> None:
    assert affidavit.verify.__all__ == sorted(affidavit.verify._HOME)
    for name in affidavit.verify.__all__:
        assert getattr(affidavit.verify, name) is not None, name


def test_readme_example_uses_only_the_public_api() -> None:
    tree = ast.parse(_readme_example())
    imported = [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    ours = [(mod, name) for mod, name in imported if mod and mod.startswith("affidavit")]
    assert ours, "the example imports nothing from affidavit"
    for module, name in ours:
        assert module == "affidavit.verify", module
        assert name in affidavit.verify.__all__, name
    assert len(_readme_example().strip().splitlines()) <= 12


def test_readme_example_runs_and_verifies() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _readme_example()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.stdout.startswith("verified ["), done.stdout
    assert "('merkle_inclusion', 'ok')" in done.stdout
