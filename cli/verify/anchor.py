"""``affidavit verify anchor RECEIPT``: an anchor receipt and its RFC 3161 token, offline.

Exit codes: 0 verified, 1 not verified (failed, or ``unanchored``: no ``--tsa-cert`` was given, so
the time-stamp token is not proven), 2 unreadable input or usage. ``--json`` prints one document
(``specs/verify-anchor-result.schema.json``). Trust comes only from the caller: ``--tsa-cert``
(the TSA certificates trusted to time-stamp), ``--ca-cert`` (optional trust anchors the TSA
certificate must chain to), ``--log-key``/``--log-key-base64`` (optional: the tree head's own
signature). Nothing here reads the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import click
from affidavit.cli._common import emit_json, json_option, read_input, read_json
from affidavit.verify import errors

if TYPE_CHECKING:
    from affidavit.verify.anchor.receipt import AnchorResult
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.crypto.windows import KeyWindow

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
@click.option("--log-key", default=None, metavar="FILE", help="Log public key file (tree head).")
@click.option("--log-key-base64", default=None, metavar="KEY", help="Log public key, base64.")
@click.option("--verbose", "-v", is_flag=True, help="List every step, also when verified.")
@json_option
def anchor(
    *,
    receipt: str,
    tsa_certs: tuple[str, ...],
    ca_certs: tuple[str, ...],
    log_key: str | None,
    log_key_base64: str | None,
    verbose: bool,
    as_json: bool,
) -> None:
    """Verify an anchor receipt: sth_digest, TSA status and (with --tsa-cert) the RFC 3161 token."""
    from affidavit.verify.anchor.receipt import (  # noqa: PLC0415 - lazy: cryptography x509
        AnchorResult,
        verify_anchor_receipt,
    )
    from affidavit.verify.results import RESULT_VERSION  # noqa: PLC0415 - lazy, with the rest

    key, windows = _log_key(log_key, log_key_base64)
    tsa = [read_input(path, max_bytes=MAX_CERT_BYTES) for path in tsa_certs]
    cas = [read_input(path, max_bytes=MAX_CERT_BYTES) for path in ca_certs]
    if cas and not tsa:
        raise errors.UsageError("--ca-cert needs --tsa-cert (the certificate it anchors)")
    try:
        document = read_json(receipt)
    except errors.ParseError as e:
        if not as_json:
            raise
        emit_json(
            {
                "verify_result_version": RESULT_VERSION,
                **AnchorResult.unreadable(receipt, e).to_json(),
            }
        )
        click.get_current_context().exit(e.exit_code)
    result = verify_anchor_receipt(
        document, tsa_certs=tsa, ca_certs=cas, log_key=key, log_key_windows=windows, source=receipt
    )
    if as_json:
        emit_json({"verify_result_version": RESULT_VERSION, **result.to_json()})
    elif result.verdict == "unreadable":
        click.echo(f"error: {result.code}: {receipt}: {result.message}", err=True)
    else:
        click.echo("\n".join(describe(result, verbose=verbose)))
    click.get_current_context().exit(result.exit_code)


def _log_key(
    path: str | None, text: str | None
) -> tuple[Ed25519PublicKey | None, tuple[KeyWindow, ...]]:
    """The log key and its validity window, if its key document names one (docs/formats.md §4):
    a windowed key verifies only heads dated inside its window."""
    if path and text:
        raise errors.UsageError("give one of --log-key and --log-key-base64")
    if text:
        from affidavit.verify.crypto.trusted_keys import key_from_base64  # noqa: PLC0415 - lazy

        return key_from_base64(text), ()
    if path:
        from affidavit.verify.crypto.trusted_keys import load_key_file  # noqa: PLC0415 - lazy

        loaded = load_key_file(path, windows=True)
        return loaded.key, () if loaded.window is None else (loaded.window,)
    return None, ()


def describe(result: AnchorResult, *, verbose: bool = False) -> list[str]:
    """The text report: a verdict line, then the steps when not verified or ``verbose``."""
    token: dict[str, Any] = dict(result.token or {})
    if result.verified:
        chain = f", chained to {token['chained_to']}" if token.get("chained_to") else ""
        lines = [
            f"verified: anchor {result.anchor_id} time-stamped at {token['gen_time']} by "
            f"{token['tsa_subject']} ({token['imprint_algorithm']} imprint{chain})"
        ]
    else:
        lines = [f"{result.verdict}: anchor {result.anchor_id}: {result.code}: {result.message}"]
    if verbose or not result.verified:
        for step in result.steps:
            extra = step.code or step.message or ""
            lines.append(f"  {step.name:<16} {step.status:<12} {extra}".rstrip())
    if result.verified and result.step("sth_signature") is not None:
        sig = result.step("sth_signature")
        if sig is not None and sig.status == "not_checked":
            lines.append(f"  note: {sig.message}")
    return lines
