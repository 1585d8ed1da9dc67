"""The ``--json`` schemas are complete: the click tree against specs/output/ and the tests.

Every command with ``--json`` (a walk of the click tree, lazy groups included) has a schema,
every schema names such a command, every schema is valid draft 2020-12 and its ``$ref`` resolve,
and every command is checked by a test under tests/ (``assert_output_schema("<command>", ...)``,
tests/schemas.py): a new command cannot ship without both. Also: a document that breaks its
schema fails the check, and a refused command prints no JSON at all (its error shape).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from affidavit.cli.main import affidavit

from tests.cli.test_output_schemas import VECTORS, cli, run
from tests.schemas import (
    OUTPUT_BASE,
    ROOT,
    SHARED_SCHEMAS,
    assert_output_schema,
    load_schema,
    output_errors,
    output_schema_names,
    schema_path,
    unresolved_refs,
)

# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "hash {tmp}/missing.json",  # io.unreadable
        "log init {tmp}/log.db --key {tmp}/missing.key --log-id x",
        "verify checkpoint {tmp}/missing.txt --vkey not-a-vkey",
        "adapter lint {vectors}/contracts/reject-not-object.json",  # json.wrong_type
        "facts walk nothex --store {tmp}/missing.jsonl",  # usage.invalid
    ],
)
def test_a_refused_command_prints_no_json(tmp_path: Path, line: str) -> None:
    # The error shape of --json: a command that refuses its input or usage prints nothing on
    # stdout, one line "error: <code>: <message>" on stderr, and exits 2 (docs: style.md §11).
    result = run(line.format(tmp=tmp_path, vectors=VECTORS), "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert re.fullmatch(r"error: [a-z][a-z0-9_]*(\.[a-z0-9_]+)*: .+\n", result.stderr)


# -- completeness -----------------------------------------------------------------------------

_CALL = re.compile(r"""assert_output_schema\(\s*["']([a-z][a-z0-9 -]*)["']""")


def _json_commands() -> tuple[list[str], list[str]]:
    """Every command (group or leaf) of the click tree with a ``--json`` option, by its words
    after ``affidavit``, lazy groups included; and the entries that could not be loaded."""
    found: list[str] = []
    broken: list[str] = []

    def visit(command: click.Command, words: list[str]) -> None:
        if any(isinstance(p, click.Option) and "--json" in p.opts for p in command.params):
            found.append(" ".join(words))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                try:
                    sub = command.get_command(ctx, name)
                except Exception as e:  # a wiring bug is reported with the others, not raised
                    broken.append(f"{' '.join([*words, name])} ({type(e).__name__}: {e})")
                    continue
                if sub is None:
                    broken.append(f"{' '.join([*words, name])} (listed but not found)")
                    continue
                visit(sub, [*words, name])

    visit(affidavit, [])
    return sorted(found), broken


def _checked_commands() -> set[str]:
    """The commands named by an ``assert_output_schema("<command>", ...)`` call under tests/."""
    named: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        named.update(_CALL.findall(path.read_text(encoding="utf-8")))
    return named


def test_the_tree_walk_finds_groups_and_lazy_commands() -> None:
    commands, _ = _json_commands()
    # a group with its own --json, a lazy group's verb, verbs of nested and plain groups
    expected = {"stamp", "stamp batch", "log head", "adapter manifest verify", "registry keys list"}
    assert expected <= set(commands)
    assert {"transform apply", "facts export", "log vkey"} <= set(commands)  # issue 22


def test_every_json_command_has_a_schema() -> None:
    commands, broken = _json_commands()
    assert not broken, "commands that cannot be loaded: " + "; ".join(broken)
    missing = [
        f"{c} -> {schema_path(c).relative_to(ROOT)}"
        for c in commands
        if not schema_path(c).is_file()
    ]
    assert not missing, "commands with --json but no output schema: " + "; ".join(missing)


def test_every_schema_names_a_command() -> None:
    commands, broken = _json_commands()
    names = {"-".join(c.split()) for c in commands}
    stale = [f"specs/output/{n}.schema.json" for n in output_schema_names() if n not in names]
    unloaded = f" (commands that cannot be loaded: {'; '.join(broken)})" if broken else ""
    assert not stale, "output schemas of no command with --json: " + "; ".join(stale) + unloaded


def test_every_schema_is_valid_and_its_refs_resolve() -> None:
    problems = []
    for name in [*output_schema_names(), *sorted(SHARED_SCHEMAS)]:
        schema = load_schema(name)
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            problems.append(f"{name}: $schema is not draft 2020-12")
        if schema.get("$id") != f"{OUTPUT_BASE}{name}.schema.json":
            problems.append(f"{name}: $id is not {OUTPUT_BASE}{name}.schema.json")
        if not schema.get("title") or not schema.get("description"):
            problems.append(f"{name}: no title or description")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            problems.append(f"{name}: {e.message}")
        problems += [f"{name}: $ref {ref} resolves to nothing" for ref in unresolved_refs(schema)]
    assert not problems, "; ".join(problems)


def test_every_json_command_is_checked_by_a_test() -> None:
    commands, _ = _json_commands()
    checked = _checked_commands()
    unchecked = [c for c in commands if c not in checked]
    assert not unchecked, (
        'commands with --json that no test checks with assert_output_schema("<command>", '
        "output): " + "; ".join(unchecked)
    )
    unknown = sorted(checked - set(commands))
    assert not unknown, "assert_output_schema names no command with --json: " + "; ".join(unknown)


def test_an_output_that_breaks_its_schema_fails() -> None:
    document = cli("hash", VECTORS / "canonical" / "escapes.input.json")
    assert_output_schema("hash", document)
    for broken in (
        {**document, "extra": 1},  # an undeclared property
        {k: v for k, v in document.items() if k != "sha256"},  # a required one missing
        {**document, "sha256": document["sha256"].upper()},  # not lowercase hex
        {**document, "ok": False},  # always true here
    ):
        assert output_errors("hash", broken)
        with pytest.raises(AssertionError, match="hash --json output does not match its schema"):
            assert_output_schema("hash", broken)
    # through a $ref into the one result (defs.schema.json): a failed result says why, and
    # nothing the command's schema does not list is allowed beside it
    step = {"name": "rollback", "status": "failed", "code": "tlog.rollback", "message": "m"}
    result: dict[str, Any] = {
        "verify_result_version": "1.0.0", "kind": "monitor", "source": "u", "verdict": "failed",
        "verified": False, "steps": [step], "code": "tlog.rollback", "message": "m",
    }  # fmt: skip
    assert not output_errors("log monitor", result)
    assert output_errors("log monitor", {k: v for k, v in result.items() if k != "code"})
    assert output_errors("log monitor", {**result, "extra": 1})
    assert output_errors("log monitor", {**result, "verdict": "verified"})
