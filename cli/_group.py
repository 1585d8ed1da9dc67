"""The click side of the ``affidavit`` command: the root group and the lazy group class.

Kept apart from :mod:`affidavit.cli.main` so that ``affidavit verify bundle`` can start without
importing click at all (see ``main()``); everything else comes through here.
"""

from __future__ import annotations

import importlib
from typing import Any, NoReturn

import click
from affidavit.cli._errors import format_error
from affidavit.verify import errors
from affidavit.verify.errors import AffidavitError

__all__ = ["SUBCOMMANDS", "LazyGroup", "affidavit", "usage_error"]


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (keeps cold start small).

    It also turns any :class:`AffidavitError` into one line on stderr and its exit code, an
    ``OSError`` into ``io.unreadable`` (exit 2), and a usage mistake click's parser catches into
    ``usage.*`` (exit 2, :func:`usage_error`): no command ever ends in a traceback for bad input,
    and every failure is ``error: <code>: <message>``. ``--help``, and a group called without a
    command, still print click's help.
    """

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy:
            module_name, attribute = self._lazy[cmd_name]
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):  # pragma: no cover - wiring bug
                raise TypeError(f"{module_name}:{attribute} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:  # this group's own options (``affidavit --bogus``)
            if isinstance(e, click.exceptions.NoArgsIsHelpError):
                raise
            click.echo(format_error(usage_error(e)), err=True)
            raise click.exceptions.Exit(2) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise  # a group called without a command: its help, as click prints it
        except click.UsageError as e:
            _fail(ctx, usage_error(e))
        except AffidavitError as e:
            _fail(ctx, e)
        except OSError as e:
            _fail(
                ctx,
                errors.ParseError("io.unreadable", f"{e.filename or 'input'}: {e.strerror or e}"),
            )


def usage_error(e: click.UsageError) -> errors.UsageError:
    """What the parser caught, as one ``usage.*`` error: the same line as every other failure
    (style.md §11) instead of click's usage, hint and message on three lines."""
    if isinstance(e, click.MissingParameter):
        code = "usage.missing_argument"
    elif isinstance(e, click.exceptions.NoSuchCommand):
        code = "usage.no_such_command"
    elif isinstance(e, click.NoSuchOption):
        code = "usage.no_such_option"
    else:  # a bad value, an extra argument, an option without its value
        code = "usage.invalid"
    command = e.ctx.command_path if e.ctx is not None else "affidavit"
    message = f"{e.format_message().rstrip('.')} (see '{command} --help')"
    return errors.UsageError(message, code=code, details={"command": command})


def _fail(ctx: click.Context, error: AffidavitError) -> NoReturn:
    click.echo(format_error(error), err=True)
    ctx.exit(error.exit_code)


# name -> (module, attribute); each area adds its own line. Kept sorted.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "adapter": ("affidavit.cli.adapter.group", "adapter"),
    "canon": ("affidavit.cli.canon", "canon"),
    "export": ("affidavit.cli.export", "export"),
    "facts": ("affidavit.cli.facts.group", "facts"),
    "hash": ("affidavit.cli.canon", "hash_command"),
    "keys": ("affidavit.cli.keys", "keys"),
    "log": ("affidavit.cli.log.group", "log"),
    "lookup": ("affidavit.cli.lookup", "lookup"),
    "receipt": ("affidavit.cli.receipt", "receipt"),
    "registry": ("affidavit.cli.registry", "registry"),
    "scitt": ("affidavit.cli.scitt", "scitt"),
    "stamp": ("affidavit.cli.stamp", "stamp"),
    "transform": ("affidavit.cli.transform", "transform"),
    "verify": ("affidavit.cli.verify.group", "verify"),
    "witness": ("affidavit.cli.witness", "witness"),
}


@click.group(
    cls=LazyGroup, lazy=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="affidavit", prog_name="affidavit")
def affidavit() -> None:
    """Affidavit: canonical hashing, signing, transparency logs and offline verification."""
