"""``affidavit scitt``: SCITT Signed Statements (RFC 9943) made and registered; also, for
``registry serve``, :func:`scitt_serve_options` and :func:`with_scitt`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click
from affidavit.attest.files import atomic_write
from affidavit.cli._common import emit, json_option, option_group, read_artefact, read_input
from affidavit.cli._trust import folder_files
from affidavit.verify import errors
from affidavit.verify.crypto.trusted_keys import MAX_KEY_FILE_BYTES
from affidavit.verify.trust import KeyFile, read_key_files

if TYPE_CHECKING:
    from affidavit.registry.settings import Settings
    from affidavit.verify.scitt.keys import CoseKey

__all__ = ["read_issuer_folder", "read_issuer_key", "scitt", "scitt_serve_options", "with_scitt"]

_MAX_STATEMENT_BYTES = 4 * 1024 * 1024


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def scitt() -> None:
    """SCITT Signed Statements: sign one, register it with a Transparency Service."""


def _signing_key(path: str) -> Any:
    """An Ed25519 key of the keyring (EdDSA), or a P-256 PKCS#8 PEM private key (ES256)."""
    from affidavit.attest.keyring import load_private_pem, load_signing_key  # noqa: PLC0415 - lazy

    try:
        return load_signing_key(path)
    except errors.KeyMaterialError as not_ed25519:
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415 - lazy

        try:
            key = load_private_pem(read_input(path, max_bytes=64 * 1024), path)
        except errors.AffidavitError:
            raise not_ed25519 from None
        if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
            return key
        raise not_ed25519 from None


@scitt.command("sign")
@click.argument("source", metavar="FILE")
@click.option(
    "--key",
    "key_file",
    required=True,
    metavar="KEY",
    help="Private key (PEM): Ed25519 signs EdDSA, P-256 signs ES256.",
)
@click.option("--issuer", required=True, metavar="ISS", help="The CWT iss claim: who says it.")
@click.option(
    "--subject",
    required=True,
    metavar="SUB",
    help="The CWT sub claim: the artefact the statement is about.",
)
@click.option(
    "--content-type",
    default="application/octet-stream",
    show_default=True,
    help="The payload's media type (COSE header 3).",
)
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to write the Signed Statement [default: FILE.cose].",
)
@json_option
def sign(
    *, source: str, key_file: str, issuer: str, subject: str, content_type: str,
    out_file: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Sign FILE as a SCITT Signed Statement (COSE_Sign1, CWT claims iss and sub)."""
    from affidavit.attest.scitt import sign_statement  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.statement import parse_statement  # noqa: PLC0415 - lazy

    payload = read_artefact(source, max_bytes=_MAX_STATEMENT_BYTES - 64 * 1024)
    signed = sign_statement(
        payload, _signing_key(key_file), issuer=issuer, subject=subject,
        content_type=content_type,
    )  # fmt: skip
    target = out_file or f"{source}.cose"
    atomic_write(target, signed)
    statement = parse_statement(signed)
    document = {
        "out": target,
        "entry_id": statement.entry_id,
        "issuer": statement.issuer,
        "subject": statement.subject,
        "content_type": statement.content_type,
        "alg": statement.alg_name,
        "kid": statement.sign1.kid.hex() if statement.sign1.kid else None,
        "bytes": len(signed),
    }
    line = f"{target}: Signed Statement ({statement.alg_name}), entry {statement.entry_id}"
    emit(as_json, document, line)


@scitt.command("register")
@click.argument("url", metavar="URL")
@click.argument("source", metavar="FILE")
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to write the Transparent Statement [default: FILE.transparent.cose].",
)
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds to wait for the receipt in all.",
)
@json_option
def register(*, url: str, source: str, out_file: str | None, timeout: float,
             as_json: bool) -> None:  # fmt: skip
    """Register a Signed Statement (SCRAPI POST /entries) and write the Transparent Statement."""
    from affidavit.registry.clients.scitt import register_statement  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.receipt import parse_receipt  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.statement import HEADER_RECEIPTS, parse_statement  # noqa: PLC0415

    if not 0 < timeout <= 3600:
        raise errors.UsageError("--timeout must be between 0 and 3600 seconds")
    statement = parse_statement(read_input(source, max_bytes=_MAX_STATEMENT_BYTES), what=source)
    receipt, locator = register_statement(url, statement.registered_bytes, timeout=timeout)
    proof = parse_receipt(receipt, what=f"{url} receipt").proofs[0]  # shaped right, not trusted
    receipts = [*statement.receipts, receipt]
    transparent = statement.sign1.encoded(unprotected={HEADER_RECEIPTS: receipts})
    target = out_file or f"{source.removesuffix('.cose')}.transparent.cose"
    atomic_write(target, transparent)
    document = {
        "out": target,
        "entry_id": statement.entry_id,
        "locator": locator,
        "tree_size": proof.tree_size,
        "leaf_index": proof.leaf_index,
        "receipts": len(receipts),
    }
    line = (
        f"{target}: Transparent Statement, entry {statement.entry_id} at leaf "
        f"{proof.leaf_index} of {proof.tree_size} (verify it: affidavit verify scitt)"
    )
    emit(as_json, document, line)


# -- registry serve ----------------------------------------------------------------------------


def _bound(key: CoseKey, path: str) -> CoseKey:
    """``key`` (read from ``path``) bound to the issuers ``path + ".iss"`` names (RFC 9943
    §5.1.1.1: a key signs only for its own ``iss``; docs/transparency.md "Issuer keys").

    Raises:
        ``usage.invalid``: no binding file, or not a binding (verify/scitt/keys.py).
        ``io.unreadable``: it cannot be read.
    """
    from affidavit.verify.scitt.keys import (  # noqa: PLC0415 - lazy
        ISSUER_BINDING_SUFFIX,
        parse_issuer_binding,
    )

    binding = path + ISSUER_BINDING_SUFFIX
    if not os.path.isfile(binding):
        raise errors.UsageError(
            f"the issuer key {path} has no {binding}: write there the issuer(s) (CWT iss) it"
            " signs for, one a line"
        )
    data = read_artefact(binding, max_bytes=MAX_KEY_FILE_BYTES)
    return key.bound_to(parse_issuer_binding(data, source=binding))


def read_issuer_key(path: str) -> CoseKey:
    """One issuer key file (Ed25519 in any trusted-key form, or a P-256 PEM), bound
    (:func:`_bound`).

    Raises:
        ``io.unreadable``, ``key.*``, ``json.*``, ``scitt.key_unrecognized``, ``usage.invalid``.
    """
    from affidavit.verify.scitt.keys import key_from_bytes  # noqa: PLC0415 - lazy

    key = key_from_bytes(read_artefact(path, max_bytes=MAX_KEY_FILE_BYTES), source=path)
    return _bound(key, path)


def read_issuer_folder(path: str) -> tuple[CoseKey, ...]:
    """The issuer keys of a folder, read as every key folder is (files that are not keys, the
    ``.iss`` files among them, skipped), each bound (:func:`_bound`).

    Raises:
        ``io.unreadable``: not a folder. ``usage.invalid``: no key in it, or a key not bound.
        ``key.*``, ``json.*``, ``scitt.key_unrecognized``: a file claiming to be a key is not one.
    """
    from affidavit.verify.scitt.keys import key_from_bytes  # noqa: PLC0415 - lazy

    candidates, _ = folder_files(path)
    files = [KeyFile(f, read_artefact(f, max_bytes=MAX_KEY_FILE_BYTES)) for f in candidates]
    keys, _ = read_key_files(files, lambda f: key_from_bytes(f.data, source=f.source), folder=path)
    return tuple(_bound(key, key.source) for key in keys)


# ``registry serve``'s SCITT options, each also read from its ``AFFIDAVIT_SCITT_*`` variable.
scitt_serve_options = option_group(
    click.option(
        "--scitt-issuers",
        "scitt_issuers",
        metavar="DIR",
        default=None,
        envvar="AFFIDAVIT_SCITT_ISSUERS",
        help="Folder of the issuer keys whose SCITT Signed Statements POST /entries accepts"
        " (Ed25519, or P-256 PEM), each beside KEYFILE.iss naming the issuers it signs for"
        " [default: none: every statement is refused].",
    ),
    click.option(
        "--scitt-rate",
        "scitt_rate",
        type=float,
        default=None,
        envvar="AFFIDAVIT_SCITT_RATE",
        help="SCITT requests per second per client [default: 50; bursts of 2x].",
    ),
    click.option(
        "--scitt-wait",
        "scitt_wait",
        type=float,
        default=None,
        envvar="AFFIDAVIT_SCITT_WAIT",
        help="Seconds POST /entries waits for the receipt before answering 303 [default: 5].",
    ),
)


def with_scitt(
    settings: Settings,
    *,
    scitt_issuers: str | None = None,
    scitt_rate: float | None = None,
    scitt_wait: float | None = None,
) -> Settings:
    """``settings`` with the SCITT options of ``registry serve`` (the issuer folder read now, so
    a bad folder refuses the start: one line, exit 2)."""
    from affidavit.registry.scitt import ScittSettings  # noqa: PLC0415 - lazy: serve only

    values: dict[str, Any] = {}
    if scitt_issuers:
        values["issuers"] = read_issuer_folder(os.fspath(scitt_issuers))
    if scitt_rate is not None:
        values["rate_per_s"] = scitt_rate
        values["burst"] = max(1, round(2 * scitt_rate))
    if scitt_wait is not None:
        values["wait_s"] = scitt_wait
    return ScittSettings(**values).into(settings)
