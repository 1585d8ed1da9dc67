"""The contracts over HTTP (specs/registry-v1.yaml): public discovery, no auth (seed 003
"Discover", "Manifest and pinning", "Publisher document"): the publisher document, summaries,
the active head or an exact version, and the signed manifest (strong ETag, 304 on
``If-None-Match``), as bytes memoized on the current snapshot, so they never touch the database;
and publication (``POST``, lifecycle ``PATCH``) with an API key of scope ``publish``.

Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids in its publisher namespaces
(403 ``auth.publisher_forbidden``; an unbound legacy key 403 ``auth.key_unbound``); reserved
distribution channels need an ``admin`` key (403 ``registry.channel_reserved``).
"""

from __future__ import annotations

from typing import Final

from affidavit.attest.keyring import publisher_document
from affidavit.registry import publication
from affidavit.registry.auth import check_scope
from affidavit.registry.contracts import STATUSES, ContractCatalog, Snapshot
from affidavit.registry.errors import RegistryError
from affidavit.registry.routes._http import api_key, json_response, read_json_object
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
    if state.settings.uses_postgres:
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


async def publish(request: Request) -> Response:
    """Lint, attest, sign, log and store one contract (ownership: docs/adr/0006); answered
    under the signed tree head that first covers its leaf."""
    key = check_scope(await api_key(request), "publish")
    declaration = await read_json_object(request, "the contract")
    state = request.app.state.registry
    job = publication.publish_job(state, declaration, key)
    published = await state.writer.run(job, wait=True)  # answered under a signed head
    body = await publication.answer(state, published)
    return json_response(body, status=201 if published.created else 200)


async def patch(request: Request) -> Response:
    """Change lifecycle fields of a published contract."""
    key = check_scope(await api_key(request), "publish")
    # ownership before the body is read (docs/adr/0006)
    authorized = publication.authorize(key, request.path_params["adapter_id"])
    changes = await read_json_object(request, "the lifecycle patch")
    state = request.app.state.registry
    version = request.path_params["version"]
    job = publication.patch_job(state, authorized, version, changes)
    published = await state.writer.run(job, wait=True)
    return json_response(await publication.answer(state, published))


routes: Final = [
    Route("/.well-known/{publisher_id}-publisher.json", publisher, methods=["GET"]),
    Route("/protocol/adapter-contracts", list_contracts, methods=["GET"]),
    Route("/protocol/adapter-contracts/{adapter_id}", active_head, methods=["GET"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", exact, methods=["GET"]),
    Route("/specs/adapter-contracts.manifest.json", manifest, methods=["GET"]),
    Route("/protocol/adapter-contracts", publish, methods=["POST"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", patch, methods=["PATCH"]),
]
