"""Health, readiness, liveness, node probe and the OpenAPI document (seed 000 §12.3.1; seed 001).

``GET /v1/health`` and ``/v1/health/ready`` -> ``{status, version, capabilities, store}``
(``store``: its kind and schema versions, docs/adr/0013). ``status`` is ``ok`` (200);
``unhealthy`` (503, ``code`` ``log.unhealthy``, a ``reason``) once the stored tree contradicts a
signed head (docs/adr/0005); ``degraded`` (503, ``store.unreadable``, ``Retry-After``) while the
store does not answer within :data:`~affidavit.registry.state.DEADLINE_S`; ``degraded`` with 200
and ``records`` (the first 100) when it holds records the registry cannot read (docs/adr/0017):
the rest is served, so the instance stays in rotation. ``GET /v1/health/live`` -> ``{status:
ok}`` and touches no store, so a database outage never restarts the registry.
``GET /.well-known/affidavit`` -> the node probe; ``GET /openapi.yaml`` -> specs/registry-v1.yaml.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.registry.errors import RETRY_AFTER_S, public_body
from affidavit.registry.routes._http import json_response
from affidavit.specs import read_spec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["API_VERSION", "CAPABILITIES", "node_probe", "routes"]

API_VERSION: Final = "1.0"
MAX_LISTED: Final = 100  # degraded records named in one health answer
CAPABILITIES: Final = (
    "discovery",
    "publication",
    "transparency_log",
    "checkpoint",
    "facts",
    "provenance",
)


def _package_version() -> str:
    try:
        return version("affidavit")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0"


async def health(request: Request) -> Response:
    """``{status: ok, version, capabilities, store}``; 503 ``unhealthy`` when the log refuses
    to sign, 503 ``degraded`` when the store does not answer (module docstring)."""
    state = request.app.state.registry
    document: dict[str, Any] = {
        "status": "ok",
        "version": _package_version(),
        "capabilities": list(CAPABILITIES),
        "store": state.health.report,
    }
    if state.unhealthy is not None:
        reason = public_body(LogError("log.unhealthy", state.unhealthy), state.hidden())
        document.update(status="unhealthy", code="log.unhealthy", reason=reason["message"])
        return json_response(document, status=503)
    problem = await state.health.check()
    if problem is None:
        records = state.tables.degraded  # docs/adr/0017: listed, never fatal; the rest is served
        if records:
            document.update(
                status="degraded",
                reason=f"{len(records)} stored record(s) cannot be read or indexed "
                "(affidavit registry check lists them)",
                records=[
                    {"kind": r.kind, "id": r.id, "code": r.code} for r in records[:MAX_LISTED]
                ],
            )
        return json_response(document)
    document.update(status="degraded", code="store.unreadable", reason=problem)
    retry = {"retry-after": str(RETRY_AFTER_S["store.unreadable"])}
    return json_response(document, status=503, headers=retry)


async def live(request: Request) -> Response:  # noqa: ARG001
    """``{status: ok}``: the process answers; no store is touched (module docstring)."""
    return json_response({"status": "ok"})


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
    documents = state.catalog.documents
    cached = documents.get("node_probe")
    if cached is None:
        cached = documents["node_probe"] = bytes(json_response(node_probe(request)).body)
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
    Route("/v1/health/ready", health, methods=["GET"]),
    Route("/v1/health/live", live, methods=["GET"]),
    Route("/.well-known/affidavit", well_known, methods=["GET"]),
    Route("/openapi.yaml", openapi, methods=["GET"]),
]
