"""``affidavit verify anchor RECEIPT``: an anchor receipt and its RFC 3161 token, offline.

Exit codes: 0 verified, 1 not verified (failed, or ``unanchored``: no ``--tsa-cert`` was given, so
the time-stamp token is not proven), 2 unreadable input or usage. ``--json`` prints one document
(``specs/output/verify-anchor.schema.json``: the one result, kind ``anchor``). Trust comes only
from the caller: ``--tsa-cert`` (the TSA certificates trusted to time-stamp), ``--ca-cert``
(optional trust anchors the TSA certificate must chain to) and, optionally, the tree head's own
signing key through the trust options every verify verb takes (:mod:`affidavit.cli._trust`;
``--log-key`` and ``--log-key-base64`` are aliases of ``--public-key`` and
``--public-key-base64``). The tree head is checked under each trusted key until one verifies it,
honouring the key's validity window (docs/adr/0011). Nothing here reads the network unless
``--fetch-key`` asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import click
from affidavit.cli._common import json_option, print_outcome, read_input, read_json
from affidavit.cli._trust import read_trust, trust_options
from affidavit.cli.render.verdict import step_line
from affidavit.verify import errors
from affidavit.verify.results import Result, StepResult

if TYPE_CHECKING:
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.trust import TrustRoot

__all__ = ["anchor", "describe"]
MAX_CERT_BYTES: Final = 1 << 20


@click.command("anchor")
@click.argument("receipt", metavar="RECEIPT|-")
@click.option(
    "--tsa-cert",
    "tsa_certs",
    multiple=True,
    metavar="PEM",
    help="A TSA certificate (PEM or DER) trusted to time-stamp (repeatable). Without one the "
    "token is not proven and the verdict is unanchored.",
)
@click.option(
    "--ca-cert",
    "ca_certs",
    multiple=True,
    metavar="PEM",
    help="A CA certificate the TSA certificate must chain to at genTime (repeatable).",
)
@trust_options
@click.option("--verbose", "-v", is_flag=True, help="List every step, also when verified.")
@json_option
def anchor(
    *,
    receipt: str,
    tsa_certs: tuple[str, ...],
    ca_certs: tuple[str, ...],
    verbose: bool,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify an anchor receipt: sth_digest, TSA status and (with --tsa-cert) the RFC 3161 token."""
    tsa = tuple(read_input(path, max_bytes=MAX_CERT_BYTES) for path in tsa_certs)
    cas = tuple(read_input(path, max_bytes=MAX_CERT_BYTES) for path in ca_certs)
    if cas and not tsa:
        raise errors.UsageError("--ca-cert needs --tsa-cert (the certificate it anchors)")
    trust = read_trust(**trust_options, windows=True)._replace(tsa_certs=tsa, ca_certs=cas)
    try:
        document = read_json(receipt)
    except errors.ParseError as e:
        if not as_json:
            raise
        from affidavit.verify.anchor.receipt import anchor_result  # noqa: PLC0415 - lazy

        result = anchor_result(receipt, (StepResult.unreadable("parse", e),))
    else:
        result = _verify(document, trust, receipt)
    if as_json or result.verdict == "unreadable":
        print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()})
        return
    click.echo("\n".join(describe(result, verbose=verbose)))
    click.get_current_context().exit(result.exit_code)


def _verify(document: Any, trust: TrustRoot, source: str) -> Result:
    """The receipt under the first trusted key that verifies its tree head (the first key's
    result when none does; no key: the head's signature is not checked)."""
    from affidavit.verify.anchor.receipt import verify_anchor_receipt  # noqa: PLC0415 - lazy

    windows = trust.windows
    results = []
    keys: list[Ed25519PublicKey | None] = [*trust.public_keys] or [None]
    for key in keys:
        result = verify_anchor_receipt(
            document,
            tsa_certs=trust.tsa_certs,
            ca_certs=trust.ca_certs,
            log_key=key,
            log_key_windows=() if key is None else windows.get(key.raw, ()),
            source=source,
        )
        signature = result.step("sth_signature")
        if signature is None or signature.status != "failed":
            return result
        results.append(result)
    return results[0]


def describe(result: Result, *, verbose: bool = False) -> list[str]:
    """The text report: a verdict line, then the steps when not verified or ``verbose``."""
    subject = result.subject
    token: dict[str, Any] = dict(subject["token"] or {})
    if result.verified:
        chain = f", chained to {token['chained_to']}" if token.get("chained_to") else ""
        lines = [
            f"verified: anchor {subject['anchor_id']} time-stamped at {token['gen_time']} by "
            f"{token['tsa_subject']} ({token['imprint_algorithm']} imprint{chain})"
        ]
    else:
        lines = [
            f"{result.verdict}: anchor {subject['anchor_id']}: {result.code}: {result.message}"
        ]
    if verbose or not result.verified:
        lines.extend(step_line(step) for step in result.steps)
    signature = result.step("sth_signature")
    if result.verified and signature is not None and signature.status == "not_checked":
        lines.append(f"  note: {signature.message}")
    return lines
