"""Public discovery, no auth (seed 003 "Discover", "Manifest and pinning",
"Publisher document").

- ``GET /.well-known/{publisher_id}-publisher.json``: ``{publisher_id, publisher_key_id,
  public_key_base64, manifest_url, verify_url}`` (docs/formats.md §3).
- ``GET /protocol/adapter-contracts[?status=active|deprecated|revoked]``: summaries.
- ``GET /protocol/adapter-contracts/{adapter_id}``: the active head (highest semver among active).
- ``GET /protocol/adapter-contracts/{adapter_id}/{version}``: exact match.
- ``GET /specs/adapter-contracts.manifest.json``: the signed manifest, with a strong ETag;
  ``If-None-Match`` with the current ETag answers 304 with no body.

Responses are bytes memoized on the current snapshot, so these routes never touch the database.
"""

from __future__ import annotations

from typing import Final

from affidavit.attest.keyring import publisher_document
from affidavit.registry.contracts import STATUSES, ContractCatalog, Snapshot
from affidavit.registry.errors import RegistryError
from affidavit.registry.routes._http import json_response
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]

_JSON: Final = "application/json"
_VERSION: Final = "manifest_version"  # registry_meta: moved by every catalog change


async def _catalog(request: Request) -> Snapshot:
    """The current snapshot; on PostgreSQL, rebuilt first when another instance moved the
    catalog's version (docs/adr/0013: an answer never lags a committed write)."""
    state = request.app.state.registry
    catalog: ContractCatalog = state.catalog
    if state.settings.uses_postgres and state.readers is not None:
        version = await state.readers.run_single(lambda view: view.tables.get_meta(_VERSION))
        if version != catalog.version:
            await state.db.run(catalog.sync)
    return catalog.snapshot


async def publisher(request: Request) -> Response:
    """The publisher document; any other publisher id is 404."""
    state = request.app.state.registry
    settings = state.settings
    if request.path_params["publisher_id"] != settings.publisher_id:
        raise RegistryError("http.not_found", f"this node publishes as {settings.publisher_id}")
    documents = state.catalog.documents
    if "publisher" not in documents:  # built once per running state
        document = publisher_document(
            state.key.public_key,
            settings.publisher_id,
            settings.key_id,
            f"{settings.node_url}/specs/adapter-contracts.manifest.json",
        )
        document["verify_url"] = f"{settings.node_url}/protocol/merkle/public-key"
        documents["publisher"] = bytes(json_response(document).body)
    return Response(documents["publisher"], media_type=_JSON)


async def list_contracts(request: Request) -> Response:
    """Contract summaries, optionally filtered by lifecycle status."""
    status = request.query_params.get("status")
    if status is not None and status not in STATUSES:
        raise RegistryError(
            "http.bad_parameter",
            f"status must be one of {', '.join(STATUSES)}",
            details={"parameter": "status"},
        )
    return Response((await _catalog(request)).list_bytes(status), media_type=_JSON)


async def _record(request: Request, version: str | None) -> Response:
    adapter_id = request.path_params["adapter_id"]
    body = (await _catalog(request)).record_bytes(adapter_id, version)
    if body is None:
        what = f"{adapter_id}@{version}" if version else f"an active version of {adapter_id}"
        raise RegistryError(
            "registry.contract_not_found",
            f"no contract {what}",
            details={"adapter_id": adapter_id, "adapter_version": version},
        )
    return Response(body, media_type=_JSON)


async def active_head(request: Request) -> Response:
    """The active head of an adapter_id (seed 003: highest semver among active)."""
    return await _record(request, None)


async def exact(request: Request) -> Response:
    """One (adapter_id, adapter_version)."""
    return await _record(request, request.path_params["version"])


async def manifest(request: Request) -> Response:
    """The signed manifest; 304 when If-None-Match carries the current ETag."""
    state = request.app.state.registry
    catalog: ContractCatalog = state.catalog
    await _catalog(request)
    current = catalog.manifest
    if current is None:
        current = await state.db.run(catalog.ensure_manifest)
    body, etag = current
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    match = request.headers.get("if-none-match", "")
    if etag in {tag.strip() for tag in match.split(",")} or match.strip() == "*":
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=_JSON, headers=headers)


routes: Final = [
    Route("/.well-known/{publisher_id}-publisher.json", publisher, methods=["GET"]),
    Route("/protocol/adapter-contracts", list_contracts, methods=["GET"]),
    Route("/protocol/adapter-contracts/{adapter_id}", active_head, methods=["GET"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", exact, methods=["GET"]),
    Route("/specs/adapter-contracts.manifest.json", manifest, methods=["GET"]),
]
