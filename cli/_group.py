"""The click side of the ``affidavit`` command: the root group, :class:`LazyGroup`, the one line
a failure prints (:func:`format_error`, style.md §11), and the groups whose verbs live in several
modules (``adapter``, ``log``, ``verify``), each a table. A verb's module is imported when it runs
(docs/adr/0022-click-alone.md).
"""

from __future__ import annotations

import importlib
from typing import Any, NoReturn

import click
from affidavit.verify import errors
from affidavit.verify.errors import AffidavitError

__all__ = [
    "ADAPTER_COMMANDS",
    "LOG_COMMANDS",
    "SUBCOMMANDS",
    "VERIFY_COMMANDS",
    "LazyGroup",
    "adapter",
    "affidavit",
    "format_error",
    "log",
    "usage_error",
    "verify",
]


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use, and where every failure is one line
    ``error: <code>: <message>`` and its exit code: an :class:`AffidavitError`, an ``OSError``
    (``io.unreadable``) or a usage mistake click's parser caught (``usage.*``). ``--help``, and a
    group called without a command, still print click's help.
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
    """What the parser caught, as one ``usage.*`` error (one line, not click's three)."""
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


def format_error(error: AffidavitError) -> str:
    """``error: <code>: <message>``, the line every failure prints to stderr (style.md §11)."""
    return f"error: {error.code}: {error.message}"


def _fail(ctx: click.Context, error: AffidavitError) -> NoReturn:
    click.echo(format_error(error), err=True)
    ctx.exit(error.exit_code)


# verb -> (module, attribute), per group (each group's help says what its verbs do).
ADAPTER_COMMANDS: dict[str, tuple[str, str]] = {
    "attest": ("affidavit.cli.adapter.publish", "attest"),
    "bump": ("affidavit.cli.adapter.authoring", "bump"),
    "diff": ("affidavit.cli.adapter.authoring", "diff"),
    "lifecycle": ("affidavit.cli.adapter.publish", "lifecycle"),
    "lint": ("affidavit.cli.adapter.authoring", "lint"),
    "list": ("affidavit.cli.adapter.publish", "list_command"),
    "manifest": ("affidavit.cli.adapter.publish", "manifest"),
    "pin": ("affidavit.cli.adapter.pins", "pin"),
    "pins": ("affidavit.cli.adapter.pins", "pins"),
    "scaffold": ("affidavit.cli.adapter.authoring", "scaffold"),
}

LOG_COMMANDS: dict[str, tuple[str, str]] = {
    "append": ("affidavit.cli.log.group", "append"),
    "consistency": ("affidavit.cli.log.group", "consistency"),
    "head": ("affidavit.cli.log.group", "head"),
    "init": ("affidavit.cli.log.group", "init"),
    "keys": ("affidavit.cli.log.group", "keys"),
    "monitor": ("affidavit.cli.log.group", "monitor"),
    "proof": ("affidavit.cli.log.group", "proof"),
    "prove": ("affidavit.cli.log.group", "prove"),  # hidden: log proof --inclusion
    "rotate-key": ("affidavit.cli.log.group", "rotate_key"),
    "tiles": ("affidavit.cli.log.group", "tiles"),
    "vkey": ("affidavit.cli.log.group", "vkey"),
}

VERIFY_COMMANDS: dict[str, tuple[str, str]] = {
    "anchor": ("affidavit.cli.verify.primitives", "anchor"),
    "attestation": ("affidavit.cli.verify.bundle", "attestation"),
    "bundle": ("affidavit.cli.verify.bundle", "bundle"),
    "checkpoint": ("affidavit.cli.verify.primitives", "checkpoint"),
    "dsse": ("affidavit.cli.verify.primitives", "dsse"),
    "inclusion": ("affidavit.cli.verify.primitives", "inclusion"),
    "receipt": ("affidavit.cli.receipt", "verify_command"),
    "scitt": ("affidavit.cli.verify.primitives", "scitt"),
    "tlog-proof": ("affidavit.cli.verify.primitives", "tlog_proof"),
}

adapter = LazyGroup(
    "adapter",
    lazy=ADAPTER_COMMANDS,
    help="Author, lint, publish and pin AdapterContracts.",
)
log = LazyGroup(
    "log",
    lazy=LOG_COMMANDS,
    help="Append-only RFC 6962 transparency log: heads, C2SP tiles, checkpoints, proofs, monitor.",
)
verify = LazyGroup(
    "verify",
    lazy=VERIFY_COMMANDS,
    help="Verify offline: bundle (ProofPack), attestation, anchor (receipts and RFC 3161 tokens),"
    " checkpoint, inclusion (Merkle proofs), dsse (envelopes), receipt (transformation"
    " receipts), scitt (transparent statements) and tlog-proof (C2SP proofs under a policy).",
)

# name -> (module, attribute); each area adds its own line. Kept sorted.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "adapter": ("affidavit.cli._group", "adapter"),
    "canon": ("affidavit.cli.canon", "canon"),
    "export": ("affidavit.cli.export", "export"),
    "facts": ("affidavit.cli.facts.group", "facts"),
    "hash": ("affidavit.cli.canon", "hash_command"),
    "keys": ("affidavit.cli.keys", "keys"),
    "log": ("affidavit.cli._group", "log"),
    "lookup": ("affidavit.cli.verify.primitives", "lookup"),
    "receipt": ("affidavit.cli.receipt", "receipt"),
    "registry": ("affidavit.cli.registry", "registry"),
    "scitt": ("affidavit.cli.scitt", "scitt"),
    "stamp": ("affidavit.cli.stamp", "stamp"),
    "transform": ("affidavit.cli.transform", "transform"),
    "verify": ("affidavit.cli._group", "verify"),
    "witness": ("affidavit.cli.witness", "witness"),
}


@click.group(
    cls=LazyGroup, lazy=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="affidavit", prog_name="affidavit")
def affidavit() -> None:
    """Affidavit: canonical hashing, signing, transparency logs and offline verification."""
