"""``affidavit keys``: make and inspect every kind of key (issue 33: one verb per job)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click
from affidavit.attest.host import read_key_bytes
from affidavit.cli._common import emit, json_option
from affidavit.cli.witness import write_witness_keys
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import parse_key_bytes
from affidavit.verify.json.strict import load_object

__all__ = ["keys"]

_KINDS = ("publisher", "witness")
_KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@click.group("keys")
def keys() -> None:
    """Generate and inspect keys: publisher and log keys, witness keys."""


@keys.command("generate")
@click.option(
    "--kind",
    type=click.Choice(_KINDS),
    default="publisher",
    show_default=True,
    help="publisher: a publisher's key (also a log's key); witness: a witness's keys.",
)
@click.option(
    "--dir", "directory", required=True, type=click.Path(file_okay=False), help="Output folder."
)
@click.option("--key-id", required=True, help="Key identifier (safe file name).")
@click.option(
    "--publisher-id", default=None, help="Publisher identifier (safe file name); publisher keys."
)
@click.option("--manifest-url", default=None, help="Where the publisher's manifest is served.")
@click.option("--ml-dsa", is_flag=True, help="Witness keys: also an ML-DSA-44 key.")
@click.option("--name", default=None, help="Witness keys: print their vkeys under this name.")
@json_option
def generate(  # noqa: PLR0917 - click passes options positionally
    kind: str,
    directory: str,
    key_id: str,
    publisher_id: str | None,
    manifest_url: str | None,
    ml_dsa: bool,
    name: str | None,
    as_json: bool,
) -> None:
    """Make a key: a publisher's (also a log's), or with --kind witness a witness's.

    Publisher: write DIR/<key-id>.key (0600), DIR/<key-id>.pub and
    DIR/<publisher-id>-publisher.json. Witness: write DIR/<key-id>.key (Ed25519) and, with
    --ml-dsa, DIR/<key-id>.mldsa (ML-DSA-44), both 0600.

    Refuses to overwrite any existing file (exit 2).
    """
    if kind == "witness":
        if publisher_id is not None or manifest_url is not None:
            raise errors.UsageError("--publisher-id and --manifest-url are for publisher keys")
        if not _KEY_ID.match(key_id):  # the rule of publisher key ids (attest/keyring.py)
            raise errors.UsageError(f"key id {key_id!r} must match {_KEY_ID.pattern} (a file name)")
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        ml_file = folder / f"{key_id}.mldsa" if ml_dsa else None
        write_witness_keys(folder / f"{key_id}.key", ml_file, name, as_json=as_json)
        return
    if ml_dsa or name is not None:
        raise errors.UsageError("--ml-dsa and --name are for --kind witness")
    if publisher_id is None:
        raise errors.UsageError(
            "publisher keys need --publisher-id (see 'affidavit keys generate --help')",
            code="usage.missing_argument",
        )
    from affidavit.attest.keyring import generate_key_files  # noqa: PLC0415 - lazy

    written = generate_key_files(directory, publisher_id, key_id, manifest_url)
    document = {
        "ok": True,
        "publisher_id": written.publisher_id,
        "key_id": written.key_id,
        "public_key_base64": written.public_key.b64,
        "private_key_path": str(written.private_key),
        "public_key_path": str(written.public_key_file),
        "publisher_document_path": str(written.publisher_document),
    }
    emit(
        as_json,
        document,
        f"private key  {written.private_key}  (mode 0600; keep it secret)",
        f"public key   {written.public_key_file}  {written.public_key.b64}",
        f"publisher    {written.publisher_document}",
    )


@keys.command("inspect")
@click.argument("key_file", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--name", default=None, help="Also print its verifier keys under this key name.")
@json_option
def inspect(key_file: str, name: str | None, as_json: bool) -> None:
    """Say what a key file is: kind, key id, public key, vkeys (with --name) and the
    publisher document naming it. Prints public material only, never a private key."""
    if name is not None:
        from affidavit.verify.crypto.checkpoint import check_key_name  # noqa: PLC0415 - lazy

        check_key_name(name)
    document = _inspect(key_file, name)
    emit(
        as_json,
        document,
        *(
            f"{field:<19}{line}"
            for field, value in document.items()
            if value is not None
            for line in (value if isinstance(value, list) else [value])
        ),
    )


def _inspect(path: str, name: str | None) -> dict[str, Any]:
    """The public description of the key file at ``path``.

    Raises:
        ``io.unreadable``: it cannot be read. ``key.*``, ``json.*``: it is not a key.
    """
    data = read_key_bytes(path)
    if b"PRIVATE KEY-----" in data:
        return _inspect_private(path, data, name)

    trusted = parse_key_bytes(data, source=path)
    document = trusted.document or {}
    kind = {
        "json": "publisher document" if "publisher_id" in document else "public key document",
        "pem": "Ed25519 public key (PEM)",
        "base64": "Ed25519 public key (base64)",
        "vkey": "verifier key (C2SP)",
    }[trusted.form]
    key_id = document.get("publisher_key_id") or document.get("key_id")
    if trusted.verifier is not None:
        key_id = trusted.verifier.key_id.hex()
    elif not isinstance(key_id, str):
        key_id = _stem(path)
    return _description(
        path=path,
        kind=kind,
        key_id=key_id,
        publisher_id=document.get("publisher_id"),
        public_raw=trusted.key.raw,
        name=trusted.verifier.name if trusted.verifier is not None else name,
        publisher_document=path if "publisher_id" in document else _beside(path, trusted.key.b64),
    )


def _inspect_private(path: str, data: bytes, name: str | None) -> dict[str, Any]:
    from affidavit.attest.keyring import load_private_pem  # noqa: PLC0415 - lazy
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: PLC0415 - lazy

    private = load_private_pem(data, path)
    public_raw: bytes = private.public_key().public_bytes_raw()  # type: ignore[attr-defined]
    if isinstance(private, Ed25519PrivateKey):
        return _description(
            path=path,
            kind="Ed25519 private key (publisher, log or witness; its secret is not printed)",
            key_id=_stem(path),
            publisher_id=None,
            public_raw=public_raw,
            name=name,
            publisher_document=_beside(path, Ed25519PublicKey(public_raw).b64),
        )
    from affidavit.verify.tlog.cosignature import ML_DSA_44, cosigner_vkey  # noqa: PLC0415

    if type(private).__name__ != "MLDSA44PrivateKey":
        raise errors.KeyMaterialError(
            "key.unrecognized", f"{path}: neither an Ed25519 nor an ML-DSA-44 private key"
        )
    return {
        "path": path,
        "kind": "ML-DSA-44 private key (a witness's)",
        "key_id": _stem(path),
        "publisher_id": None,
        "public_key_base64": None,
        "vkeys": [] if name is None else [cosigner_vkey(name, ML_DSA_44, public_raw)],
        "publisher_document": None,
    }


def _description(
    *,
    path: str,
    kind: str,
    key_id: str,
    publisher_id: object,
    public_raw: bytes,
    name: str | None,
    publisher_document: str | None,
) -> dict[str, Any]:
    from affidavit.verify.crypto.checkpoint import verifier_key_string  # noqa: PLC0415 - lazy
    from affidavit.verify.tlog.cosignature import ED25519, cosigner_vkey  # noqa: PLC0415 - lazy

    key = Ed25519PublicKey(public_raw)
    if publisher_id is None and publisher_document is not None:  # the document beside names it
        publisher_id = load_object(Path(publisher_document).read_bytes()).get("publisher_id")
    vkeys = []
    if name is not None:  # as a log's or note signer's key (0x01), as a witness's (0x04)
        vkeys = [verifier_key_string(name, key), cosigner_vkey(name, ED25519, public_raw)]
    return {
        "path": path,
        "kind": kind,
        "key_id": key_id,
        "publisher_id": publisher_id if isinstance(publisher_id, str) else None,
        "public_key_base64": key.b64,
        "vkeys": vkeys,
        "publisher_document": publisher_document,
    }


def _stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".key", ".pub", ".pem", ".json", ".mldsa", ".vkey"):
        name = name.removesuffix(suffix)
    return name


def _beside(path: str, public_b64: str) -> str | None:
    """The one ``*-publisher.json`` beside ``path`` naming this public key, if exactly one."""
    found = []
    for candidate in sorted(Path(path).parent.glob("*-publisher.json")):
        try:
            document = load_object(candidate.read_bytes())
        except (OSError, errors.ParseError):
            continue
        if document.get("public_key_base64") == public_b64:
            found.append(str(candidate))
    return found[0] if len(found) == 1 else None
