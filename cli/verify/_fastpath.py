"""One option table, two parsers: the click-free fast path of ``affidavit verify bundle``.

Private to :mod:`affidavit.cli.verify.bundle` (docs/adr/0003-cold-start.md). A :class:`Command`
declares a command once: its options, its positional argument and the function that runs it.
From that one declaration :func:`click_command` builds the click command (help, usage errors,
every odd case) and :func:`parse` reads the common command lines without importing click.
:func:`run` is the fast path itself: it parses ``argv`` and runs the command, or returns ``None``
for anything it does not fully understand (``--help``, unknown or repeated options, a missing
value, a bad number, ``--``), and the caller hands the line to click. Both paths call the same
run function, so output and exit codes are the same bytes (tests/cli/test_cold_start.py).

What the trick buys, measured: ``affidavit verify bundle
vectors/bundles/stamped-accepted-2.0.0.json --public-key-base64 K`` as whole processes, median of
41 alternating runs after compiling the bytecode (bench/bench_verify.py's cold-start method;
Python 3.11, 2 cores): 39 ms through this fast path, 58 ms when the same command line goes
through the click group, 9.5 ms for ``python -c pass``. The fast path saves about 19 ms, two
fifths of the start-up above the bare interpreter; ``python -X importtime`` puts it on click
(about 15 ms cumulative under the tracer) and the group around it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.cli._errors import format_error
from affidavit.verify import errors

if TYPE_CHECKING:
    import click

__all__ = [
    "JOBS_RANGE",
    "Command",
    "Option",
    "click_command",
    "click_option",
    "echo",
    "parse",
    "run",
]

JOBS_RANGE: Final = (1, 64)


class Option(NamedTuple):
    """One command-line option. ``kind``: text, file, folder, path (file or folder), choice,
    jobs (1..64) or flag."""

    flag: str
    dest: str
    kind: str
    help: str
    multiple: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] = ()  # kind "choice": the first is the default
    aliases: tuple[str, ...] = ()  # other flags for the same option (kept for scripts)


class Command(NamedTuple):
    """A command declared once: both parsers are built from it."""

    name: str
    options: tuple[Option, ...]
    argument: str  # the positional argument's parameter name
    several: bool  # takes one or more positionals (else exactly one)
    run: Callable[..., int]  # called with every parameter as a keyword; returns the exit code
    help: str


def defaults(command: Command) -> dict[str, Any]:
    """The value of every option when it is not given (what click passes)."""
    values: dict[str, Any] = {}
    for option in command.options:
        if option.multiple:
            values[option.dest] = ()
        elif option.kind == "choice":
            values[option.dest] = option.choices[0]
        else:
            values[option.dest] = {"jobs": 1, "flag": False}.get(option.kind)
    return values


def _value(option: Option, text: str) -> Any:
    """``text`` converted as click would, or ``None`` where click would complain (fall back)."""
    if option.kind == "jobs":
        ok = text.isascii() and text.isdigit() and JOBS_RANGE[0] <= int(text) <= JOBS_RANGE[1]
        return int(text) if ok else None
    if option.kind == "file" and os.path.isdir(text):
        return None  # click.Path(dir_okay=False) refuses it: let click word the error
    if option.kind == "folder" and os.path.isfile(text):
        return None
    if option.kind == "choice" and text not in option.choices:
        return None
    return text


def parse(command: Command, argv: Sequence[str]) -> dict[str, Any] | None:
    """Parse ``argv`` (after ``verify <command>``) into the click keyword arguments.

    Returns ``None`` for anything not fully understood (``--help``, unknown or repeated flags,
    missing values, bad numbers, a missing input), so the caller hands the line to click.
    """
    by_flag = {name: opt for opt in command.options for name in (opt.flag, *opt.aliases)}
    values = defaults(command)
    positional: list[str] = []
    seen: set[str] = set()
    items, index = list(argv), 0
    while index < len(items):
        token = items[index]
        index += 1
        if token == "-" or not token.startswith("-"):  # noqa: S105 - "-" is stdin, not a secret
            positional.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        option = by_flag.get(flag)
        if option is None or (option.kind == "flag" and has_inline):
            return None  # --help, --, unknown flags, --json=...: click decides
        if option.kind == "flag":
            values[option.dest] = True
            continue
        if not has_inline:
            if index >= len(items):
                return None
            inline, index = items[index], index + 1
        value = _value(option, inline)
        if value is None or (not option.multiple and option.dest in seen):
            return None
        seen.add(option.dest)
        values[option.dest] = (*values[option.dest], value) if option.multiple else value
    if not positional or (len(positional) > 1 and not command.several):
        return None
    values[command.argument] = tuple(positional) if command.several else positional[0]
    return values


def run(command: Command, argv: Sequence[str]) -> int | None:
    """Run ``command`` without click; ``None`` when click must handle ``argv``.

    Failures print the group's one-line error (``error: <code>: <message>``, style.md §11) and
    exit with the error's code, as :class:`affidavit.cli._group.LazyGroup` does.
    """
    values = parse(command, argv)
    if values is None:
        return None
    try:
        return command.run(**values)
    except errors.AffidavitError as e:
        return _print_error(e)
    except OSError as e:
        return _print_error(
            errors.ParseError("io.unreadable", f"{e.filename or 'input'}: {e.strerror or e}")
        )


def _print_error(error: errors.AffidavitError) -> int:
    echo(format_error(error), err=True)
    return error.exit_code


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` for text, without click: the line, a newline, flushed."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


# -- the click side (built on first access, so the fast path never imports click) ---------------


def click_command(command: Command) -> click.Command:
    """The click command for ``command``, its options built from the same table."""
    import click  # noqa: PLC0415 - lazy: the fast path never imports click

    def callback(**values: Any) -> None:
        code = command.run(**values)
        if code:
            click.get_current_context().exit(code)

    params: list[click.Parameter] = [
        click.Argument([command.argument], nargs=-1 if command.several else 1, required=True)
    ]
    params.extend(click_option(option) for option in command.options)
    return click.Command(command.name, callback=callback, params=params, help=command.help)


def click_option(option: Option) -> click.Option:
    """The click option declared by ``option`` (its aliases included)."""
    import click  # noqa: PLC0415 - lazy: the fast path never imports click

    names = [option.flag, *option.aliases, option.dest]
    if option.kind == "flag":
        return click.Option(names, is_flag=True, help=option.help)
    types = {
        "jobs": click.IntRange(*JOBS_RANGE),
        "file": click.Path(dir_okay=False),
        "folder": click.Path(file_okay=False),
        "path": click.Path(),
        "choice": click.Choice(option.choices),
        "text": None,
    }
    extra: dict[str, Any] = {"default": 1} if option.kind == "jobs" else {}
    if option.kind == "choice":
        extra = {"default": option.choices[0], "show_default": True}
    return click.Option(
        names,
        type=types[option.kind],
        multiple=option.multiple,
        metavar=option.metavar,
        help=option.help,
        **extra,
    )
