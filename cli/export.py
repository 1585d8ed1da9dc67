"""``affidavit export intoto``: an artefact as a signed in-toto Statement in a DSSE envelope
(:mod:`affidavit.attest.intoto.export` has the predicate types).
"""

from __future__ import annotations

import json

import click
from affidavit.attest.files import atomic_write
from affidavit.cli._common import emit, json_option, read_json, signing_key_option

__all__ = ["export"]


@click.group("export")
def export() -> None:
    """Export artefacts in other ecosystems' formats (in-toto / DSSE)."""


@export.command("intoto")
@click.argument("source", metavar="SOURCE")
@signing_key_option
@click.option(
    "--out", "out_file", required=True, metavar="FILE", help="Where to write the envelope."
)
@click.option(
    "--kind",
    type=click.Choice(("bundle", "entry", "audit")),
    help="What SOURCE is (default: told by its shape).",
)
@json_option
def intoto(source: str, key_file: str, out_file: str, kind: str | None, as_json: bool) -> None:
    """Sign SOURCE (bundle, manifest entry or facts audit report) as an in-toto Statement."""
    from affidavit.attest.intoto.export import statement_for  # noqa: PLC0415 - lazy
    from affidavit.attest.intoto.sign import keyid_of, sign_statement  # noqa: PLC0415 - lazy
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy
    from affidavit.verify.dsse.envelope import envelope_json  # noqa: PLC0415 - lazy

    document = read_json(source)
    key = load_signing_key(key_file)
    kind, statement = statement_for(document, kind)
    envelope = sign_statement(statement, key)
    text = json.dumps(envelope_json(envelope), separators=(",", ":")) + "\n"
    atomic_write(out_file, text.encode("ascii"))
    predicate, subjects = statement["predicateType"], statement["subject"]
    names = ", ".join(f"{s['name']} sha256:{s['digest']['sha256']}" for s in subjects)
    emit(
        as_json,
        {
            "kind": kind,
            "predicateType": predicate,
            "subject": subjects,
            "keyid": keyid_of(key),
            "out": out_file,
        },
        f"wrote {out_file}: {predicate} about {names}",
    )
