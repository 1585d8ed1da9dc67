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

__all__ = ["SUBCOMMANDS", "LazyGroup", "affidavit"]


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (keeps cold start small).

    It also turns any :class:`AffidavitError` into one line on stderr and its exit code, and an
    ``OSError`` into ``io.unreadable`` (exit 2): no command ever ends in a traceback for bad input.
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

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AffidavitError as e:
            _fail(ctx, e)
        except OSError as e:
            _fail(
                ctx,
                errors.ParseError("io.unreadable", f"{e.filename or 'input'}: {e.strerror or e}"),
            )


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
    "receipt": ("affidavit.cli.receipt", "receipt"),
    "registry": ("affidavit.cli.registry", "registry"),
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
