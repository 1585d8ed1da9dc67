"""``affidavit keys``: publisher key management."""

from __future__ import annotations

import click
from affidavit.cli._common import emit_json, json_option

__all__ = ["keys"]


@click.group("keys")
def keys() -> None:
    """Generate and inspect Ed25519 publisher keys."""


@keys.command("generate")
@click.option(
    "--dir", "directory", required=True, type=click.Path(file_okay=False), help="Output folder."
)
@click.option("--publisher-id", required=True, help="Publisher identifier (safe file name).")
@click.option("--key-id", required=True, help="Key identifier (safe file name).")
@click.option("--manifest-url", default=None, help="Where the publisher's manifest is served.")
@json_option
def generate(
    directory: str, publisher_id: str, key_id: str, manifest_url: str | None, as_json: bool
) -> None:
    """Write DIR/<key-id>.key (0600), DIR/<key-id>.pub and DIR/<publisher-id>-publisher.json.

    Refuses to overwrite any existing file (exit 2).
    """
    from affidavit.attest.keyring import generate_key_files  # noqa: PLC0415 - lazy

    written = generate_key_files(directory, publisher_id, key_id, manifest_url)
    if as_json:
        emit_json(
            {
                "ok": True,
                "publisher_id": written.publisher_id,
                "key_id": written.key_id,
                "public_key_base64": written.public_key.b64,
                "private_key_path": str(written.private_key),
                "public_key_path": str(written.public_key_file),
                "publisher_document_path": str(written.publisher_document),
            }
        )
        return
    click.echo(f"private key  {written.private_key}  (mode 0600; keep it secret)")
    click.echo(f"public key   {written.public_key_file}  {written.public_key.b64}")
    click.echo(f"publisher    {written.publisher_document}")
