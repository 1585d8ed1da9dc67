"""A JSON integer over 4,300 digits is the strict parser's one-line error at every CLI door.

CPython refuses to convert such an integer (``int_max_str_digits``); before the strict parser
named it, each of these commands printed a traceback and exited 1. Real processes, so a traceback
on stderr would show.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HUGE = "1" * 4301
COMMANDS = {
    "verify bundle": ["verify", "bundle", "{doc}"],
    "adapter lint": ["adapter", "lint", "{doc}"],
    "facts add": ["facts", "add", "{db}", "{doc}"],
    "hash": ["hash", "{doc}"],
}


def _affidavit() -> list[str]:
    return [str(Path(sys.executable).with_name("affidavit"))]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_huge_integer_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    doc = tmp_path / "doc.json"
    # One line: `facts add` reads JSON Lines.
    doc.write_text('{"adapter_id": "acme.x.v0", "n": ' + HUGE + "}\n")
    args = [a.format(doc=doc, db=tmp_path / "facts.db") for a in COMMANDS[command]]
    result = subprocess.run(
        [*_affidavit(), *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: json.number_too_large: ")
    assert "Traceback" not in result.stderr
    assert lines[0].endswith("(line 1, column 34)"), lines[0]
