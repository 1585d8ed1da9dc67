"""Where publication commands read from: files, stdin, or (only when asked) one HTTPS GET.

Shared by ``affidavit adapter`` publication and pinning commands. Network: none, except for an
explicit ``https://`` argument or ``--fetch-publisher``; then one GET through httpx (imported only
on that path) with a timeout and a size cap (issue 3 §3).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

import click
from affidavit.cli._common import read_input
from affidavit.verify import errors
from affidavit.verify.contracts.manifest import PublisherDocument, parse_publisher_document
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json.strict import load_object

__all__ = [
    "KEY_OPTIONS",
    "fetch",
    "publisher_document",
    "read_manifest",
    "read_object",
    "resolve_key",
    "utc_now",
    "well_known_url",
    "with_key_options",
]

MAX_FETCH_BYTES: Final = 16 * 1024 * 1024
FETCH_TIMEOUT_SECONDS: Final = 10.0
# Tests replace this with an httpx.MockTransport; None means the real network.
_HTTP_TRANSPORT: Any = None


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fetch(url: str) -> bytes:
    """One HTTPS GET with a timeout and a size cap (issue 3 §3). The only network path here.

    Raises:
        ManifestFetchError: not https, httpx missing, an HTTP/transport error, or over the cap.
    """
    if not url.startswith("https://"):
        raise errors.ContractError(
            "manifest.fetch_failed", f"{url}: only https:// URLs are fetched"
        )
    try:
        import httpx  # noqa: PLC0415 - only on the explicit network path
    except ImportError:  # pragma: no cover - httpx ships with the [registry] extra
        raise errors.ContractError(
            "manifest.fetch_failed", "fetching needs httpx: pip install 'affidavit[registry]'"
        ) from None
    try:
        with (
            httpx.Client(
                timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True, transport=_HTTP_TRANSPORT
            ) as client,
            client.stream("GET", url) as response,
        ):
            if response.url.scheme != "https":
                raise errors.ContractError(
                    "manifest.fetch_failed", f"{url}: redirected away from https"
                )
            response.raise_for_status()
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_FETCH_BYTES:
                    raise errors.ContractError(
                        "manifest.fetch_failed", f"{url}: over {MAX_FETCH_BYTES} bytes"
                    )
            return bytes(body)
    except httpx.HTTPStatusError as e:
        raise errors.ContractError(
            "manifest.fetch_failed", f"{url}: HTTP {e.response.status_code}"
        ) from None
    except httpx.HTTPError as e:
        first_line = (str(e).splitlines() or [""])[0]
        raise errors.ContractError(
            "manifest.fetch_failed", f"{url}: {type(e).__name__}: {first_line}"
        ) from None


def read_object(source: str, *, what: str) -> dict[str, Any]:
    """A JSON object from a path, ``-`` or (explicitly) an https URL, parsed strictly."""
    data = fetch(source) if source.startswith(("https://", "http://")) else read_input(source)
    try:
        return load_object(data, what=what)
    except errors.ParseError as e:
        e.message = f"{source}: {e.message}"
        raise


def read_manifest(source: str) -> dict[str, Any]:
    """A manifest object from a path, ``-`` or an explicit https URL."""
    try:
        return read_object(source, what="manifest")
    except errors.ParseError as e:
        if e.code != "json.wrong_type":
            raise
        raise errors.ContractError("manifest.invalid", e.message) from None


def publisher_document(source: str) -> PublisherDocument:
    """Read and parse a publisher document (formats.md §3)."""
    document = read_object(source, what="publisher document")
    try:
        return parse_publisher_document(document)
    except errors.ContractError as e:
        if e.code != "manifest.publisher_document_invalid":
            raise
        e.message = f"{source}: {e.message}"
        raise


def well_known_url(manifest_source: str, manifest: Mapping[str, Any]) -> str:
    """The publisher document URL beside an https manifest."""
    # formats.md §3: /.well-known/<publisher>-publisher.json on the manifest's host.
    if not manifest_source.startswith("https://"):
        raise errors.UsageError("--fetch-publisher without a URL needs an https:// MANIFEST")
    origin = "/".join(manifest_source.split("/", 3)[:3])
    return f"{origin}/.well-known/{manifest.get('publisher_id', '')}-publisher.json"


def resolve_key(
    *,
    public_key_base64: str | None,
    publisher_doc: str | None,
    fetch_url: str | None,
    manifest: Mapping[str, Any] | None,
) -> tuple[Ed25519PublicKey | None, str | None]:
    """The trusted key from exactly one source, and the publisher document used (if any)."""
    given = [x for x in (public_key_base64, publisher_doc, fetch_url) if x]
    if len(given) > 1:
        raise errors.UsageError(
            "give one of --public-key-base64, --publisher-doc, --fetch-publisher"
        )
    if public_key_base64:
        return Ed25519PublicKey.from_b64(public_key_base64), None
    source = publisher_doc or fetch_url
    if not source:
        return None, None
    document = publisher_document(source)
    if manifest is not None:
        document.check_matches(manifest)
    return document.public_key, source


KEY_OPTIONS = [
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
]


def with_key_options(f: Any) -> Any:
    """Add ``--public-key-base64`` and ``--publisher-doc`` to a command."""
    for option in reversed(KEY_OPTIONS):
        f = option(f)
    return f
