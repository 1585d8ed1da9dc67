"""``affidavit canon`` and ``affidavit hash``: canonical bytes and their SHA-256 (docs/formats.md
§1)."""

from __future__ import annotations

import sys

import click
from affidavit.cli._common import emit, emit_json, json_option, read_json
from affidavit.verify.json.canonical import FORMS, Form, canonical_bytes, sha256_hex

__all__ = ["canon", "hash_command"]

_form_option = click.option(
    "--form",
    type=click.Choice(FORMS),
    default="jcs",
    show_default=True,
    help="jcs (RFC 8785), py-compact or py-spaced (AiGentsy's json.dumps forms).",
)


@click.command("canon")
@_form_option
@json_option
@click.argument("source", metavar="FILE|-")
def canon(form: Form, as_json: bool, source: str) -> None:
    """Write the canonical bytes of a JSON document to stdout.

    Piped or redirected, the bytes are exact (no trailing newline); on a terminal a newline ends
    them, so the prompt starts on its own line.
    """
    encoded = canonical_bytes(read_json(source), form)
    if as_json:
        text, digest = encoded.decode("utf-8"), sha256_hex(encoded)
        emit_json({"ok": True, "form": form, "canonical": text, "sha256": digest})
        return
    sys.stdout.buffer.write(encoded + (b"\n" if sys.stdout.isatty() else b""))
    sys.stdout.buffer.flush()


@click.command("hash")
@_form_option
@json_option
@click.argument("source", metavar="FILE|-")
def hash_command(form: Form, as_json: bool, source: str) -> None:
    """Print the lowercase SHA-256 hex of a document's canonical bytes."""
    digest = sha256_hex(canonical_bytes(read_json(source), form))
    emit(as_json, {"ok": True, "form": form, "sha256": digest}, digest)
