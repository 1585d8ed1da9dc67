"""The ``affidavit`` command. Subcommands load lazily so ``affidavit verify ...`` starts fast.

Exit codes (style.md §11): 0 ok, 1 verification failed or findings, 2 unreadable input or usage,
3 refused by policy. Every failure prints one line, ``error: <code>: <message>``, to stderr.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

import click
from affidavit.verify.errors import AffidavitError, FileReadError

__all__ = ["affidavit", "main"]

# name -> "module:attribute"; each area adds its own line. Kept sorted.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "adapter": ("affidavit.cli.adapter", "adapter"),
    "canon": ("affidavit.cli.canon", "canon"),
    "facts": ("affidavit.cli.facts", "facts"),
    "hash": ("affidavit.cli.canon", "hash_command"),
    "keys": ("affidavit.cli.keys", "keys"),
    "log": ("affidavit.cli.log", "log"),
    "registry": ("affidavit.cli.registry", "registry"),
    "stamp": ("affidavit.cli.stamp", "stamp"),
    "verify": ("affidavit.cli.verify", "verify"),
}


class _LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (keeps cold start small)."""

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
            _fail(ctx, FileReadError(f"{e.filename or 'input'}: {e.strerror or e}"))


def _fail(ctx: click.Context, error: AffidavitError) -> NoReturn:
    click.echo(f"error: {error.code}: {error.message}", err=True)
    ctx.exit(error.exit_code)


@click.group(
    cls=_LazyGroup, lazy=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="affidavit", prog_name="affidavit")
def affidavit() -> None:
    """Affidavit: canonical hashing, signing, transparency logs and offline verification."""


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point."""
    affidavit.main(args=argv if argv is not None else sys.argv[1:], prog_name="affidavit")
    sys.exit(0)  # pragma: no cover - click exits itself
