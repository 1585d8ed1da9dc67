"""Health, node probe and the OpenAPI document (seed 000 §12.3.1; seed 001).

``GET /v1/health`` -> ``{status, version, capabilities, store}`` (``store``: ``{kind: sqlite |
postgresql, schema: {component: version}}``, docs/adr/0013): ``status`` is ``ok`` (200), or
``unhealthy`` (503, with ``code`` ``log.unhealthy`` and ``reason``) once the stored tree was found
to contradict a head the log signed (docs/adr/0005); ``GET /.well-known/affidavit`` -> the
node probe ``{version, node_id, node_url, auth, federation}`` plus where the publisher document, the
manifest and the log live; ``GET /openapi.yaml`` -> ``specs/registry-v1.yaml`` as shipped.
"""

from __future__ import annotations

from typing import Any, Final

from affidavit.registry.routes._http import json_response
from affidavit.specs import read_spec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["API_VERSION", "CAPABILITIES", "node_probe", "routes"]

API_VERSION: Final = "1.0"
CAPABILITIES: Final = (
    "discovery",
    "publication",
    "transparency_log",
    "checkpoint",
    "facts",
    "provenance",
)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("affidavit")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0"


async def health(request: Request) -> Response:
    """``{status: ok, version, capabilities}``; 503 ``unhealthy`` when the log refuses to sign."""
    document: dict[str, Any] = {
        "status": "ok",
        "version": _package_version(),
        "capabilities": list(CAPABILITIES),
        "store": request.app.state.registry.store,
    }
    reason = request.app.state.registry.unhealthy
    if reason is None:
        return json_response(document)
    document.update(status="unhealthy", code="log.unhealthy", reason=reason)
    return json_response(document, status=503)


def node_probe(request: Request) -> dict[str, Any]:
    """The node probe document (seed 000 §12.3.1 fields, then Affidavit's endpoints)."""
    state = request.app.state.registry
    settings = state.settings
    base = settings.node_url
    return {
        "version": API_VERSION,
        "node_id": settings.node_id,
        "node_url": base,
        "auth": "required",  # writes and non-public fact reads need an API key
        "federation": "disabled",
        "publisher": {
            "publisher_id": settings.publisher_id,
            "publisher_key_id": settings.key_id,
            "document_url": f"{base}/.well-known/{settings.publisher_id}-publisher.json",
            "manifest_url": f"{base}/specs/adapter-contracts.manifest.json",
            "contracts_url": f"{base}/protocol/adapter-contracts",
        },
        "log": {
            "log_id": settings.log_id,
            "public_key_url": f"{base}/protocol/merkle/public-key",
            "latest_url": f"{base}/protocol/merkle/latest",
            "checkpoint_url": f"{base}/protocol/merkle/checkpoint",
        },
        "facts_url": f"{base}/v1/facts",
        "openapi_url": f"{base}/openapi.yaml",
    }


async def well_known(request: Request) -> Response:
    """``GET /.well-known/affidavit`` (built once per running state)."""
    state = request.app.state.registry
    cached = state.documents.get("node_probe")
    if cached is None:
        cached = state.documents["node_probe"] = bytes(json_response(node_probe(request)).body)
    return Response(cached, media_type="application/json")


_OPENAPI: bytes | None = None


async def openapi(request: Request) -> Response:  # noqa: ARG001
    """``GET /openapi.yaml``: the contract this service implements, byte for byte."""
    global _OPENAPI  # noqa: PLW0603 - read once, the file ships with the package
    if _OPENAPI is None:
        _OPENAPI = read_spec("registry-v1.yaml")
    return Response(_OPENAPI, media_type="application/yaml")


routes: Final = [
    Route("/v1/health", health, methods=["GET"]),
    Route("/.well-known/affidavit", well_known, methods=["GET"]),
    Route("/openapi.yaml", openapi, methods=["GET"]),
]
