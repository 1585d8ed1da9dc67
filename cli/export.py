"""``affidavit export intoto``: an artefact as a signed in-toto Statement in a DSSE envelope.

SOURCE is a stamped bundle (-> ``https://affidavit.dev/attestation/decision/v1``), a signed
manifest entry (-> ``.../manifest-entry/v1``) or a ``facts audit --json`` report
(-> ``.../fact-audit/v1``), told apart by shape unless ``--kind`` says
(:mod:`affidavit.attest.intoto.export`). The envelope (DSSE envelope.md, standard JSON, one line)
is written atomically to ``--out``; verify it with ``affidavit verify dsse`` (and ``--bundle`` to
cross-check a decision against its bundle).

Exit codes: 0 written; 1 the source does not verify against itself (``bundle.hash_mismatch``,
``entry.hash_mismatch``: nothing is signed); 2 unreadable input, unknown or ambiguous kind
(``predicate.kind_unknown``, ``predicate.kind_ambiguous``), a source without what its predicate
needs, or bad usage.
"""

from __future__ import annotations

import json

import click
from affidavit.attest.files import atomic_write
from affidavit.cli._common import emit_json, json_option, read_json

__all__ = ["export"]


@click.group("export")
def export() -> None:
    """Export artefacts in other ecosystems' formats (in-toto / DSSE)."""


@export.command("intoto")
@click.argument("source", metavar="SOURCE")
@click.option(
    "--key", "key_file", required=True, metavar="KEYFILE", help="Ed25519 private key (PEM)."
)
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
    if as_json:
        emit_json(
            {
                "kind": kind,
                "predicateType": statement["predicateType"],
                "subject": statement["subject"],
                "keyid": keyid_of(key),
                "out": out_file,
            }
        )
    else:
        names = ", ".join(
            f"{s['name']} sha256:{s['digest']['sha256']}" for s in statement["subject"]
        )
        click.echo(f"wrote {out_file}: {statement['predicateType']} about {names}")
