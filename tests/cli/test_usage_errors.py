"""Usage mistakes the parser catches are one line with a code, like every other failure.

``error: usage.<what>: <message>`` on stderr, nothing on stdout, exit 2 (style.md §11), whichever
command it is, with or without ``--json`` (a command that fails outright prints no JSON:
specs/output/error.schema.json), through the click group and through the console entry point
(``cli/main.py``). ``--help`` and a group called without a command still print click's help.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from affidavit.cli.main import affidavit
from affidavit.specs import read_spec
from click.testing import CliRunner

from tests.conftest import ROOT

GOOD = str(ROOT / "vectors" / "bundles" / "stamped-accepted-2.0.0.json")
_MAIN = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"

CASES = [
    ("verify bundle", "usage.missing_argument", "Missing argument 'INPUTS...'"),
    ("verify bundl", "usage.no_such_command", "No such command 'bundl'"),
    (f"verify bundle {GOOD} --bogus-flag", "usage.no_such_option", "--bogus-flag"),
    (f"verify bundle {GOOD} --jobs 0", "usage.invalid", "Invalid value for '--jobs'"),
    ("--bogus-flag", "usage.no_such_option", "--bogus-flag"),
    ("bogus", "usage.no_such_command", "No such command 'bogus'"),
    ("hash", "usage.missing_argument", "Missing argument"),
    ("hash a b", "usage.invalid", "unexpected extra argument"),
    ("log head", "usage.missing_argument", "Missing argument"),
    ("facts walk x", "usage.missing_argument", "Missing option '--store'"),
    ("adapter bogus", "usage.no_such_command", "No such command 'bogus'"),
    ("registry serve --port x", "usage.invalid", "Invalid value for '--port'"),
    ("canon --form nope -", "usage.invalid", "Invalid value for '--form'"),
]
_LINE = re.compile(r"error: (usage\.[a-z_]+): (.+)\n")


def _check(code: int, stdout: str, stderr: str, want: str, says: str) -> None:
    assert (code, stdout) == (2, ""), stderr
    match = _LINE.fullmatch(stderr)
    assert match, f"not one error line: {stderr!r}"
    assert match[1] == want
    assert says in match[2]
    assert "--help" in match[2]  # where to look next, on the same line


@pytest.mark.parametrize(
    ("line", "want", "says", "json_flag"),
    [
        (*case, json_flag)
        for case in CASES
        for json_flag in ([], ["--json"])
        if not (json_flag and case[0].startswith("--"))  # --json is not an option of the root
    ],
)
def test_a_usage_mistake_is_one_line_with_a_code(
    line: str, want: str, says: str, json_flag: list[str]
) -> None:
    result = CliRunner().invoke(affidavit, [*line.split(), *json_flag])
    _check(result.exit_code, result.stdout, result.stderr, want, says)


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "bundle"],
        ["verify", "bundle", GOOD, "--bogus-flag"],
        ["verify", "attestation", GOOD, "--jobs", "x", "--json"],
        ["verify", "bundl"],
    ],
)
def test_the_console_entry_point_too(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert _LINE.fullmatch(done.stderr), done.stderr


def test_the_usage_codes_are_listed() -> None:
    listed = {entry["code"] for entry in json.loads(read_spec("error-codes.json"))["codes"]}
    used = {want for _, want, _ in CASES}
    assert used <= listed
    assert used == {
        "usage.invalid",
        "usage.missing_argument",
        "usage.no_such_command",
        "usage.no_such_option",
    }


@pytest.mark.parametrize("argv", [["--help"], ["verify", "--help"], ["hash", "-h"]])
def test_help_is_unchanged(argv: list[str]) -> None:
    result = CliRunner().invoke(affidavit, argv)
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: ")
    assert "Options:" in result.stdout


def test_a_group_without_a_command_still_shows_its_help() -> None:
    result = CliRunner().invoke(affidavit, ["verify"])
    assert result.exit_code == 2
    assert "Usage: " in result.output
    assert "Commands:" in result.output
