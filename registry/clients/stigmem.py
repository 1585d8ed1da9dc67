"""Read a Stigmem node's facts over HTTP (httpx): ``GET /v1/facts``, page by page.

The node pages with an opaque ``cursor`` and at most 500 facts a page; a page can be empty while
``cursor`` is not, so paging stops only when ``cursor`` is null. stigmem-node 0.9.0a12 sorts by
``timestamp DESC, id DESC`` but its cursor selects ``id > cursor``, so facts can be skipped or
repeated across pages: repeats are dropped (by id) and counted, and :class:`NodeListing` says how
many pages were read, so the caller can say a longer listing may be incomplete. The key is sent
as ``Authorization: Bearer`` and never logged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from affidavit.registry.clients.https import Codes, bearer, new_client, parse_url, send
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.json.strict import loads

__all__ = ["PAGE_SIZE", "NodeListing", "fetch_node_facts"]

PAGE_SIZE: Final = 500  # the node's maximum `limit`
MAX_PAGE_BYTES: Final = 64 * 1024 * 1024
MAX_PAGES: Final = 100_000
DEFAULT_TIMEOUT: Final = 30.0
# The one fetcher's failures in the node client's own codes (docs/formats.md, ``facts pull``).
_CODES: Final = Codes(
    RegistryError, "stigmem.node_unreachable", "stigmem.node_unreachable", "stigmem.node_error"
)


@dataclass(slots=True)
class NodeListing:
    """Every record read (first occurrence of each id, node order), pages read, repeats dropped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    repeated: int = 0


def fetch_node_facts(
    url: str,
    *,
    api_key: str | None = None,
    include_contradicted: bool = False,
    page_size: int = PAGE_SIZE,
    timeout: float = DEFAULT_TIMEOUT,
) -> NodeListing:
    """Every fact record the node shows this key, each id once, in the node's order.

    Raises:
        ``usage.invalid``: ``url`` breaks the one URL rule
            (:func:`~affidavit.registry.clients.https.parse_url`), or a bad ``api_key``.
        ``stigmem.node_unreachable``: the node cannot be reached, or a page missed its ``timeout``
            (a deadline per page).
        ``stigmem.node_error``: an HTTP error, or a body that is not the node's fact listing.
    """
    listing = NodeListing()
    seen: set[object] = set()
    for page in _pages(url, api_key, include_contradicted, page_size, timeout):
        listing.pages += 1  # every page read counts, an empty one too
        for record in page:
            key = record.get("id")
            if key in seen:
                listing.repeated += 1
                continue
            seen.add(key)
            listing.records.append(record)
    return listing


def _pages(
    url: str, api_key: str | None, include_contradicted: bool, page_size: int, timeout: float
) -> Iterator[list[dict[str, Any]]]:
    base = parse_url(url, allow_query=False).rstrip("/")
    headers = {"Accept": "application/json", **(bearer(api_key) if api_key else {})}
    cursor: str | None = None
    seen: set[str] = set()
    with new_client(timeout=timeout, headers=headers) as client:
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"limit": page_size}
            if include_contradicted:
                params["include_contradicted"] = "true"
            if cursor is not None:
                params["cursor"] = cursor
            page = _get_page(client, f"{base}/v1/facts", params)
            yield page["facts"]
            cursor = page.get("cursor")
            if cursor is None:
                return
            if not isinstance(cursor, str) or cursor in seen:
                raise RegistryError(
                    "stigmem.node_error", f"{base}: the cursor {cursor!r} does not advance"
                )
            seen.add(cursor)
        raise RegistryError("stigmem.node_error", f"{base}: more than {MAX_PAGES} pages")


def _get_page(client: httpx.Client, url: str, params: dict[str, Any]) -> dict[str, Any]:
    response = send(client, "GET", url, max_bytes=MAX_PAGE_BYTES, params=params, codes=_CODES)
    body, status = response.body, response.status
    if status != 200:
        detail = body[:200].decode("utf-8", "replace")
        raise RegistryError(
            "stigmem.node_error", f"{url}: HTTP {status}: {detail}", details={"status": status}
        )
    try:
        page = loads(body)
    except errors.ParseError as e:
        raise RegistryError(
            "stigmem.node_error", f"{url}: the body is not strict JSON: {e.message}"
        ) from None
    if not isinstance(page, dict) or not isinstance(page.get("facts"), list):
        raise RegistryError(
            "stigmem.node_error", f"{url}: the body is not a fact listing {{facts, cursor}}"
        )
    if not all(isinstance(item, dict) for item in page["facts"]):
        raise RegistryError("stigmem.node_error", f"{url}: a listed fact is not a JSON object")
    return page
