"""Every command's ``--help`` is for people reading a terminal (issue 22, style.md §11).

A walk of the click tree (lazy groups included): each command's help and each option's help has
no markup left from docstrings (rst double backticks and roles, markdown backticks and bold),
which click prints as is, and every command's ``--help`` runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest
from affidavit.cli.main import affidavit
from click.testing import CliRunner

# ``x``, `x`, **x**, :func:`x`, .. directive::
MARKUP = re.compile(r"`|\*\*|:[a-z]+:`|^\.\. ", re.MULTILINE)
# Help owned by a module another change is rewriting; each to be cleaned there.
ELSEWHERE = frozenset({"log monitor --vkey"})


def _commands() -> Iterator[tuple[str, click.Command]]:
    def visit(command: click.Command, words: list[str]) -> Iterator[tuple[str, click.Command]]:
        yield " ".join(words), command
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from visit(sub, [*words, name])

    yield from visit(affidavit, [])


COMMANDS = dict(_commands())


def _texts(command: click.Command) -> Iterator[tuple[str, str]]:
    yield "", command.help or ""
    yield "", command.short_help or ""
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            yield f" {param.opts[0]}", param.help or ""


def test_no_markup_in_any_help() -> None:
    found = [
        f"affidavit {words}{where}: {MARKUP.search(text)[0]!r} in {text[:80]!r}"  # type: ignore[index]
        for words, command in COMMANDS.items()
        for where, text in _texts(command)
        if MARKUP.search(text) and f"{words}{where}" not in ELSEWHERE
    ]
    assert not found, "\n".join(found)


def test_the_check_finds_markup() -> None:
    assert MARKUP.search("see ``log vkey``")
    assert MARKUP.search("see `log vkey`")
    assert MARKUP.search(":func:`x`")
    assert not MARKUP.search("NAME... in order (see affidavit log vkey --help)")


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_every_help_runs(words: str) -> None:
    result = CliRunner().invoke(affidavit, [*words.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: affidavit")


# --- the rest of the command-line contract, walked the same way (issue 22, style.md §11, §16)

LEAVES = {
    words: command
    for words, command in COMMANDS.items()
    if words and (not isinstance(command, click.Group) or command.invoke_without_command)
}
# The trust option group (cli/_trust.py, docs/adr/0016-one-trust-input.md) with its aliases.
TRUST = frozenset({
    "--public-key-base64", "--log-key-base64", "--public-key", "--publisher-doc", "--log-key",
    "--trusted-keys", "--vkey", "--fetch-key", "--strict",
})  # fmt: skip
# Options spelled like trust options with another meaning (ADR 0016 names its verbs):
# the adapter publication verbs trust one publisher key, matched against the manifest's
# publisher (docs/formats.md §3); registry import checks a dump against the registry's own log
# key; log monitor follows one log, named by its verifier key (--vkey).
OWN_MEANING = frozenset({
    "adapter manifest verify", "adapter manifest verify-entry", "adapter pin",
    "adapter pins check", "registry import", "log monitor",
})  # fmt: skip


def _options(command: click.Command) -> set[str]:
    return {
        name
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }


def test_every_command_takes_json() -> None:
    missing = [words for words, command in LEAVES.items() if "--json" not in _options(command)]
    assert not missing, missing


def test_required_options_are_marked() -> None:
    unmarked = [
        f"{words} {param.opts[0]}"
        for words, command in LEAVES.items()
        for param in command.params
        if isinstance(param, click.Option)
        and param.required
        and not re.search(
            r"[\[;] ?required\]", (param.get_help_record(click.Context(command)) or ("", ""))[1]
        )
    ]
    assert not unmarked, unmarked


def test_text_for_people_is_the_default() -> None:
    """JSON comes from ``--json``; a ``--format`` choice never defaults to it."""
    json_default = [
        words
        for words, command in LEAVES.items()
        for param in command.params
        if isinstance(param, click.Option) and "--format" in param.opts and param.default == "json"
    ]
    assert json_default == []


def test_every_verb_taking_trust_takes_the_whole_group() -> None:
    partial = {
        words: sorted(TRUST - _options(command))
        for words, command in LEAVES.items()
        if _options(command) & TRUST and words not in OWN_MEANING
    }
    assert {words: missing for words, missing in partial.items() if missing} == {}
    assert {"verify bundle", "verify dsse", "verify receipt", "verify anchor"} <= set(partial)


@pytest.mark.parametrize("words", sorted(LEAVES))
def test_every_usage_mistake_is_one_line(words: str) -> None:
    result = CliRunner().invoke(affidavit, [*words.split(), "--no-such-flag", "--json"])
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert re.fullmatch(r"error: usage\.no_such_option: .*--no-such-flag.*\n", result.stderr)
