"""Every command's ``--help`` is for people reading a terminal (issue 22, style.md §11).

A walk of the click tree (lazy groups included): each command's help and each option's help has
no markup left from docstrings (rst double backticks and roles, markdown backticks and bold),
which click prints as is, and every command's ``--help`` runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

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
# key; log monitor follows one log, named by its verifier key (--vkey); facts walk and audit
# trust fact signers by key id (--trusted-keys: key files or folders, each key named by its id).
OWN_MEANING = frozenset({
    "adapter manifest verify", "adapter manifest verify-entry", "adapter pin",
    "adapter pins check", "registry import", "log monitor", "facts walk", "facts audit",
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


# --- one vocabulary (issue 33): the same concept has the same visible name in every room

# Each concept, its one visible name, and the spellings known to mean it; an option under any of
# them that --help shows counts (AliasedOption's hidden old spellings do not).
CONCEPTS: dict[str, tuple[str, frozenset[str]]] = {
    "signing key": ("--key", frozenset({"--key", "--sign-with", "--signing-key", "--private-key"})),
    "trusted keys": (
        "--trusted-keys",
        frozenset({"--trusted-keys", "--trusted-key", "--trust", "--keys-dir"}),
    ),
    "fact store": ("--store", frozenset({"--store", "--db", "--database", "--fact-store"})),
    "data folder": ("--data-dir", frozenset({"--data-dir", "--data", "--state-dir", "--state"})),
    "output format": ("--json", frozenset({"--json", "--format", "--output-format", "--output"})),
}
# A fact store named by a positional argument instead of --store (the room: facts, receipt fact).
STORE_ARGUMENTS = frozenset({"database", "db", "store"})


def _visible(param: click.Option) -> list[str]:
    hidden = set(getattr(param, "aliases", ()))
    return [name for name in (*param.opts, *param.secondary_opts) if name not in hidden]


def _is_folder(param: click.Parameter) -> bool:
    return isinstance(param.type, click.Path) and not param.type.file_okay


def _means(concept: str, name: str, param: click.Option) -> bool:
    """Whether ``name`` of ``param`` names ``concept`` (a --state file is a state file; a
    --format without a json choice draws a picture, it does not pick the machine form)."""
    if name not in CONCEPTS[concept][1]:
        return False
    if concept == "data folder" and name == "--state":
        return _is_folder(param)
    if concept == "output format" and name != "--json":
        shown = getattr(param.type, "shown", getattr(param.type, "choices", ()))
        return "json" in shown
    return True


def vocabulary() -> dict[str, dict[str, list[str]]]:
    """``{concept: {visible spelling: [commands]}}`` over the whole click tree."""
    found: dict[str, dict[str, list[str]]] = {concept: {} for concept in CONCEPTS}
    for words, command in LEAVES.items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for name in _visible(param):
                    for concept in CONCEPTS:
                        if _means(concept, name, param):
                            found[concept].setdefault(name, []).append(words)
            elif (
                isinstance(param, click.Argument)
                and param.name in STORE_ARGUMENTS
                and words.split()[0] in {"facts", "receipt"}
            ):
                found["fact store"].setdefault(f"positional {param.name}", []).append(words)
    return found


def test_one_visible_name_per_concept() -> None:
    found = vocabulary()
    stray = {
        concept: {name: where for name, where in names.items() if name != CONCEPTS[concept][0]}
        for concept, names in found.items()
    }
    assert {concept: names for concept, names in stray.items() if names} == {}
    # The check is not vacuous: each concept's one name is in use.
    assert all(CONCEPTS[concept][0] in names for concept, names in found.items())


def test_the_vocabulary_check_finds_a_second_name() -> None:
    @click.command()
    @click.option("--sign-with")
    @click.option("--trusted-key")
    @click.option("--state", type=click.Path(file_okay=False))
    @click.option("--format", type=click.Choice(["text", "json"]))
    def old(**_: object) -> None: ...

    params = [p for p in old.params if isinstance(p, click.Option)]
    meant = {
        concept for concept in CONCEPTS for p in params for n in p.opts if _means(concept, n, p)
    }
    assert meant == {"signing key", "trusted keys", "data folder", "output format"}


def _isatty_calls() -> list[str]:
    """Every ``.isatty()`` call in the CLI's source, as ``file:line text``."""
    import affidavit.cli

    root = Path(affidavit.cli.__file__).parent
    return [
        f"{path.relative_to(root)}:{number} {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ".isatty()" in line
    ]


# The terminal checks that do not choose what is printed: the progress line (stderr only) and
# canon's closing newline for the prompt (the canonical bytes are the same either way).
ISATTY_ALLOWED = ("_batch.py:", "canon.py:")


def test_no_output_format_depends_on_a_terminal() -> None:
    choosing = [call for call in _isatty_calls() if not call.startswith(ISATTY_ALLOWED)]
    assert choosing == []


@pytest.mark.parametrize("verb", ["scaffold", "lint", "bump", "diff"])
def test_adapter_authoring_prints_text_into_a_pipe(verb: str, tmp_path: Path) -> None:
    """CliRunner's stdout is not a terminal: no flag is text, --json the seed's document."""
    runner = CliRunner()
    made = runner.invoke(affidavit, ["adapter", "scaffold", "--id", "acme.x.v0", "--out",
                                     str(tmp_path), "--json"])  # fmt: skip
    assert made.exit_code == 0, made.output
    contract = str(tmp_path / "adapter_contract.json")
    args = {
        "scaffold": ["--id", "acme.y.v0", "--out", str(tmp_path / "y")],
        "lint": [contract],
        "bump": [contract, "--version", "0.2.0"],
        "diff": [contract, contract],
    }[verb]
    text = runner.invoke(affidavit, ["adapter", verb, *args])
    assert text.exit_code == 0, text.output
    assert not text.stdout.lstrip().startswith("{"), text.stdout
    if verb != "scaffold":
        again = [contract, "--version", "0.3.0"] if verb == "bump" else args
        as_json = runner.invoke(affidavit, ["adapter", verb, *again, "--json"])
        assert as_json.exit_code == 0, as_json.output
        assert as_json.stdout.startswith("{")


def test_group_help_promises_only_its_verbs() -> None:
    """``keys --help`` names no verb it lacks; ``verify --help`` names every verb it has."""
    keys = COMMANDS["keys"]
    assert isinstance(keys, click.Group)
    promised = set(re.findall(r"\b(generate|inspect|list|rotate|revoke|import|export)\b",
                              (keys.help or "").lower()))  # fmt: skip
    assert promised <= set(keys.list_commands(click.Context(keys)))
    verify = COMMANDS["verify"]
    assert isinstance(verify, click.Group)
    missing = [
        name
        for name in verify.list_commands(click.Context(verify))
        if name not in (verify.help or "")
    ]
    assert missing == []


def _help_of(param: click.Option, command: click.Command) -> str:
    return (param.get_help_record(click.Context(command)) or ("", ""))[1]


def test_required_only_where_every_path_needs_it() -> None:
    """A group's option marked [required] is needed by each of its subcommands too (stamp batch
    needs no --adapter-output, --deal-id or --out)."""
    overstated = [
        f"{words} {param.opts[0]}"
        for words, command in COMMANDS.items()
        if isinstance(command, click.Group) and command.invoke_without_command
        for param in command.params
        if isinstance(param, click.Option)
        and re.search(r"[\[;] ?required\]", _help_of(param, command))
        for sub in command.list_commands(click.Context(command))
        if param.opts[0] not in _options(COMMANDS[f"{words} {sub}"])
    ]
    assert overstated == []
