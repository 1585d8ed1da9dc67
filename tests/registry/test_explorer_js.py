"""The explorer's JavaScript under node's test runner (issue 36).

tests/registry/explorer_js/*.test.cjs load registry/explorer/subjects.js and explorer.js as the
page does (page.cjs) and judge their trust decisions (RFC 9162 proofs, signed notes, the pin,
the registry's answer, the verdict, the index rules of docs/formats.md §11) against data our
Python code builds. They are what ``make mutation`` runs per mutant with StrykerJS; here they run
once, with the system's Node.js (.ci/run installs it). The fixtures they read are committed;
this checks they are what make_fixtures.py writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.registry.explorer_js import make_fixtures

HERE = Path(__file__).resolve().parent / "explorer_js"


def test_the_committed_fixtures_are_what_the_python_code_builds() -> None:
    assert (HERE / "fixtures.json").read_text() == make_fixtures.text(), (
        "regenerate: python -m tests.registry.explorer_js.make_fixtures"
    )
    assert (HERE / "subjects.json").read_text() == make_fixtures.subjects_text(), (
        "regenerate: python -m tests.registry.explorer_js.make_fixtures"
    )
    assert (HERE / "canonical.json").read_text() == make_fixtures.canonical_text(), (
        "regenerate: python -m tests.registry.explorer_js.make_fixtures"
    )


def test_the_explorer_js_tests_pass_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (apt-get install nodejs; CI installs it)")
    done = subprocess.run(
        [node, "--test", "--test-reporter=tap", *sorted(str(p) for p in HERE.glob("*.test.cjs"))],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "\n# fail 0" in done.stdout, done.stdout[-2000:]
