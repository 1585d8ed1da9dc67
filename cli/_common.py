"""Shared pieces of the CLI: reading inputs, writing JSON, the --json and --format options."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from affidavit.verify import errors
from affidavit.verify.jsonio import DEFAULT_MAX_BYTES, load_object, loads

__all__ = [
    "emit_json",
    "json_option",
    "read_input",
    "read_json",
    "read_json_object",
]

F = TypeVar("F", bound=Callable[..., Any])


def json_option(f: F) -> F:
    """``--json``: one JSON document on stdout, whatever the command's default."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document to stdout."
    )(f)


def read_input(source: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Read ``source`` (a path, or ``-`` for stdin) with a size cap, never more than cap + 1 bytes.

    Raises:
        FileReadError: the file cannot be read.
        JsonTooLarge: the input is over ``max_bytes``.
    """
    try:
        if source == "-":
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(max_bytes + 1)
    except OSError as e:
        raise errors.FileReadError(f"{source}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise errors.JsonTooLarge(f"{source}: over the size limit of {max_bytes} bytes")
    return data


def read_json(source: str) -> Any:
    """Read and strictly parse one JSON document from a path or ``-``."""
    return _with_source(source, loads)


def read_json_object(source: str, *, what: str = "document") -> dict[str, Any]:
    """Read a JSON object from a path or ``-``; anything else is ``json.wrong_type``."""
    document: dict[str, Any] = _with_source(source, lambda data: load_object(data, what=what))
    return document


def _with_source(source: str, parse: Callable[[bytes], Any]) -> Any:
    data = read_input(source)
    try:
        return parse(data)
    except errors.JsonError as e:
        e.message = f"{source}: {e.message}"
        e.details.setdefault("source", source)
        raise


def emit_json(document: Any) -> None:
    """Write ``document`` as indented JSON (key order kept) and a newline to stdout."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))
