"""Where ``affidavit adapter`` publication and pinning read from: files, stdin, or one HTTPS GET
through the one fetcher (:mod:`affidavit.registry.clients.https`), only for an explicit
``https://`` argument or ``--fetch-publisher``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click
from affidavit.cli._common import labelled, option_group, read_input
from affidavit.registry.clients.https import get
from affidavit.verify import errors
from affidavit.verify.contracts.manifest import PublisherDocument, parse_publisher_document
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import key_from_base64
from affidavit.verify.json.strict import load_object

__all__ = [
    "fetch",
    "publisher_document",
    "read_manifest",
    "read_object",
    "resolve_key",
    "well_known_url",
    "with_key_options",
]

# Tests replace this with an httpx.MockTransport; None means the real network.
_HTTP_TRANSPORT: Any = None


def fetch(url: str) -> bytes:
    """One HTTPS GET with a timeout and a size cap.

    Raises:
        ``manifest.fetch_failed``: not https, httpx missing, an HTTP/transport error, or over the
            cap.
    """
    try:
        response = get(url, https_only=True, follow_redirects=True, transport=_HTTP_TRANSPORT)
    except errors.AffidavitError as e:
        raise errors.ContractError("manifest.fetch_failed", e.message) from None
    if not response.ok:
        raise errors.ContractError("manifest.fetch_failed", f"{url}: HTTP {response.status}")
    return response.body


def read_object(source: str, *, what: str) -> dict[str, Any]:
    """A JSON object from a path, ``-`` or (explicitly) an https URL, parsed strictly."""
    data = fetch(source) if source.startswith(("https://", "http://")) else read_input(source)
    with labelled(source):
        return load_object(data, what=what)


def read_manifest(source: str) -> dict[str, Any]:
    """A manifest object from a path, ``-`` or an explicit https URL."""
    try:
        document = read_object(source, what="manifest")
    except errors.ParseError as e:
        if e.code != "json.wrong_type":
            raise
        raise errors.ContractError("manifest.invalid", e.message) from None
    if "contracts" not in document and ("entry" in document or "contract_hash" in document):
        # issue 33: say what the file is, not what a manifest's field holds (docs/formats.md §3)
        raise errors.ContractError(
            "manifest.invalid",
            f"{source}: a manifest entry (what adapter attest writes), not a manifest: check it"
            f" with 'affidavit adapter manifest verify-entry {source}', or build a manifest"
            " from it with 'affidavit adapter manifest build'",
        )
    return document


def publisher_document(source: str) -> PublisherDocument:
    """Read and parse a publisher document (docs/formats.md §3)."""
    document = read_object(source, what="publisher document")
    with labelled(source, errors.ContractError, "manifest.publisher_document_invalid"):
        return parse_publisher_document(document)


def well_known_url(manifest_source: str, manifest: Mapping[str, Any]) -> str:
    """The publisher document URL beside an https manifest."""
    # docs/formats.md §3: /.well-known/<publisher>-publisher.json on the manifest's host.
    if not manifest_source.startswith("https://"):
        raise errors.UsageError("--fetch-publisher without a URL needs an https:// MANIFEST")
    origin = "/".join(manifest_source.split("/", 3)[:3])
    return f"{origin}/.well-known/{manifest.get('publisher_id', '')}-publisher.json"


def resolve_key(
    public_key_base64: str | None,
    publisher_doc: str | None,
    *,
    fetch_url: str | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> tuple[Ed25519PublicKey | None, str | None]:
    """The trusted key from exactly one source, and the publisher document used (if any); with
    ``manifest``, the publisher document must be the manifest's publisher's."""
    given = [x for x in (public_key_base64, publisher_doc, fetch_url) if x]
    if len(given) > 1:
        raise errors.UsageError(
            "give one of --public-key-base64, --publisher-doc, --fetch-publisher"
        )
    if public_key_base64:
        return key_from_base64(public_key_base64), None
    source = publisher_doc or fetch_url
    if not source:
        return None, None
    document = publisher_document(source)
    if manifest is not None:
        document.check_matches(manifest)
    return document.public_key, source


# The trusted key of a manifest or entry check (:func:`resolve_key`).
with_key_options = option_group(
    click.option(
        "--public-key-base64",
        default=None,
        help="Trusted Ed25519 public key (raw 32 bytes, base64).",
    ),
    click.option(
        "--publisher-doc",
        default=None,
        metavar="FILE",
        help="Pinned local copy of the publisher document (its public_key_base64 is trusted).",
    ),
)
