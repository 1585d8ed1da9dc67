"""Shared pieces of the CLI: capped reads of a path or ``-`` (stdin), JSON output, and the options
that mean the same to every command."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click
from affidavit.attest.host import read_capped
from affidavit.verify import errors
from affidavit.verify.json.strict import DEFAULT_MAX_BYTES, load_object, loads

if TYPE_CHECKING:
    from affidavit.verify.results import Report, Result

__all__ = [
    "MAX_ARTEFACT_BYTES",
    "AliasedOption",
    "emit",
    "emit_json",
    "exit_with",
    "json_option",
    "labelled",
    "log_write_key_option",
    "option_group",
    "print_outcome",
    "read_artefact",
    "read_input",
    "read_json",
    "read_json_object",
    "signing_key_option",
]

F = TypeVar("F", bound=Callable[..., Any])

MAX_ARTEFACT_BYTES: Final = 1024 * 1024 * 1024  # a receipt's source, content or chunk: 1 GiB


class AliasedOption(click.Option):
    """An option whose old spellings (``aliases``, among its declarations) still parse but
    ``--help`` does not show (issue 33); tests/cli/test_help_texts.py reads ``aliases``."""

    def __init__(self, *args: Any, aliases: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.aliases = tuple(aliases)
        unknown = [name for name in self.aliases if name not in self.opts]
        if unknown:  # pragma: no cover - a declaration mistake, caught at import
            raise ValueError(f"aliases {unknown} are not declared")

    def _shown(self) -> click.Option:
        shown = copy.copy(self)
        shown.opts = [name for name in self.opts if name not in self.aliases]
        return shown

    def get_help_spec(self, ctx: click.Context) -> str:
        return click.Option.get_help_spec(self._shown(), ctx)

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return click.Option.get_error_hint(self._shown(), ctx)


def option_group(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator adding ``options`` in the order given (``--help`` lists them so)."""

    def add(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return add


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document to stdout."
)

# ``--api-key`` of the verbs that append to a log, local or a registry's (log append, receipt log,
# stamp): the registry's key for POST /v1/log/entries.
log_write_key_option = click.option(
    "--api-key",
    default=None,
    help="With a registry URL: an API key with scope log:write [default: $AFFIDAVIT_API_KEY].",
)


# ``--key KEYFILE`` of the verbs that sign with one Ed25519 key of the keyring.
signing_key_option = click.option(
    "--key", "key_file", required=True, metavar="KEYFILE", help="Ed25519 private key (PEM)."
)


def read_input(
    source: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    too_large: tuple[type[errors.AffidavitError], str] = (errors.ParseError, "json.too_large"),
) -> bytes:
    """Read ``source`` (a path, or ``-`` for stdin), never more than ``max_bytes`` + 1 bytes.
    Over the cap is ``too_large`` (the error class and code of what was being read, e.g.
    ``dsse.too_large``), ``{"limit": max_bytes}`` in its details.

    Raises:
        ``io.unreadable``: the file cannot be read.
        ``json.too_large``: the input is over ``max_bytes`` (unless ``too_large`` names another).
    """
    if source != "-":
        data = read_capped(source, max_bytes)
    else:
        try:
            data = sys.stdin.buffer.read(max_bytes + 1)
        except OSError as e:
            raise errors.ParseError("io.unreadable", f"{source}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        family, code = too_large
        message = f"{source}: larger than {max_bytes} bytes"
        raise family(code, message, details={"limit": max_bytes})
    return data


def read_artefact(source: str, *, max_bytes: int = MAX_ARTEFACT_BYTES) -> bytes:
    """:func:`read_input` for bytes that are not JSON (a receipt's source, content, chunks): over
    ``max_bytes`` is ``io.unreadable``, not ``json.too_large``.

    Raises:
        ``io.unreadable``: the file cannot be read, or it is over ``max_bytes``.
    """
    return read_input(source, max_bytes=max_bytes, too_large=(errors.ParseError, "io.unreadable"))


def read_json(source: str) -> Any:
    """Read and strictly parse one JSON document from a path or ``-``."""
    data = read_input(source)
    with labelled(source, detail=True):
        return loads(data)


def read_json_object(source: str, *, what: str = "document") -> dict[str, Any]:
    """Read a JSON object from a path or ``-``; anything else is ``json.wrong_type``."""
    data = read_input(source)
    with labelled(source, detail=True):
        return load_object(data, what=what)


@contextmanager
def labelled(
    source: str,
    family: type[errors.AffidavitError] = errors.ParseError,
    *codes: str,
    detail: bool = False,
) -> Iterator[None]:
    """Prefix ``source: `` to the message of a ``family`` error raised inside (of ``codes``
    only, when given), so a failure names the file it is about; ``detail``: also
    ``details["source"]``, unless set."""
    try:
        yield
    except family as e:
        if codes and e.code not in codes:
            raise
        e.message = f"{source}: {e.message}"
        if detail:
            e.details.setdefault("source", source)
        raise


def emit_json(document: Any) -> None:
    """``document`` as indented JSON (key order kept) on stdout."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def emit(as_json: bool, document: Any, *lines: object) -> None:
    """``document`` as JSON with ``--json`` (:func:`emit_json`), else ``lines`` for people."""
    if as_json:
        emit_json(document)
    for line in () if as_json else lines:
        click.echo(line)


def print_outcome(outcome: Result | Report, *, as_json: bool, **how: Any) -> None:
    """Print a verification's result or report (:func:`affidavit.cli.render.verdict.outcome_blocks`
    with ``how``) and exit with its verdict's code."""
    from affidavit.cli.render.verdict import outcome_blocks  # noqa: PLC0415 - only verify verbs

    for text, to_stderr in outcome_blocks(outcome, as_json=as_json, **how):
        click.echo(text, err=to_stderr)
    exit_with(outcome.exit_code)


def exit_with(code: int) -> None:
    """End the command with exit ``code`` when it is not 0."""
    if code:
        click.get_current_context().exit(code)
