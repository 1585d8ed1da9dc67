"""``affidavit verify scitt``: a SCITT Transparent Statement, offline (RFC 9943 §7.1).

::

    affidavit verify scitt FILE|- TRUST... [--issuer-key FILE]... [--verbose] [--json]

The receipts are verified under the log keys the caller trusts, given with the trust options
every verify verb takes (:mod:`affidavit.cli._trust`: ``--public-key-base64 K``, ``--public-key
FILE``, ``--trusted-keys DIR``, ``--vkey``...); at least one (fail closed). ``--issuer-key FILE``
(repeatable: an Ed25519 key in any trusted-key form, or a P-256 PEM, beside ``FILE.iss`` naming
the issuers it signs for) checks the statement's own signature too, under a key bound to the
``iss`` it names (``scitt.issuer_mismatch``, exit 1, when only another issuer's key verifies it;
no ``FILE.iss`` is usage, exit 2); without one that step is ``not_checked`` and the receipts
are relied on (RFC 9943 §7.1). The steps, the verdict and the ``--json`` document are the
library's (:func:`affidavit.verify.scitt.report.verify_transparent_statement`).

Exit codes: 0 verified; 1 not verified (a changed statement, receipt, proof or root; a receipt
under a key not trusted); 2 unreadable input (not strict CBOR, not a Transparent Statement) or
usage. ``--json`` prints one document (``specs/output/verify-scitt.schema.json``) for exit 0 and
1, and for an unreadable statement.
"""

from __future__ import annotations

from typing import Any

import click
from affidavit.cli._common import emit_json, json_option, read_input
from affidavit.cli._trust import read_trust, trust_options
from affidavit.cli.render.verdict import error_line, result_lines
from affidavit.cli.scitt import read_issuer_key
from affidavit.verify import errors

__all__ = ["scitt"]


@click.command("scitt")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option(
    "--issuer-key",
    "issuer_keys",
    multiple=True,
    metavar="FILE",
    help="The issuer's public key (Ed25519 in any key form, or P-256 PEM), beside FILE.iss naming"
    " the issuers it signs for: check the statement's signature too (repeatable).",
)
@click.option("--verbose", "-v", is_flag=True, help="List every step, also when verified.")
@json_option
def scitt(
    *,
    source: str,
    issuer_keys: tuple[str, ...],
    verbose: bool,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify a SCITT Transparent Statement: its receipts under trusted log keys."""
    from affidavit.verify.scitt.cbor import MAX_CBOR_BYTES  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.keys import CoseKey  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.report import verify_transparent_statement  # noqa: PLC0415

    trust = read_trust(**trust_options, needed_by="verify scitt")
    log_keys = [CoseKey.from_ed25519(key, "trusted") for key in trust.public_keys]
    issuers = [read_issuer_key(path) for path in issuer_keys]
    data = read_input(
        source, max_bytes=MAX_CBOR_BYTES, too_large=(errors.ScittError, "cbor.too_large")
    )
    result = verify_transparent_statement(
        data, log_keys=log_keys, issuer_keys=issuers, source=source
    )
    if as_json:
        emit_json({**result.document(), "trust": trust.to_json()})
    elif result.verdict == "unreadable":
        click.echo(error_line(result), err=True)
    else:
        lines = result_lines(result, detailed=verbose or not result.verified)
        statement = result.subject.get("statement") or {}
        lines.insert(1, f"  iss {statement.get('issuer')}, sub {statement.get('subject')}")
        lines.extend(
            f"  receipt {r['index']}: leaf {r['leaf_index']} of {r['tree_size']}, root {r['root']}"
            for r in result.subject.get("receipts", ())
            if r.get("verified")
        )
        click.echo("\n".join(lines))
    click.get_current_context().exit(result.exit_code)
