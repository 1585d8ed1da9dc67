"""The explorer: pages for people, checked in their browser (issue 26; docs/transparency.md "The
explorer"; specs/registry-v1.yaml).

``GET /`` and ``/search`` serve one HTML page holding no data (package data, registry/explorer/):
its script reads the registry's JSON routes and says "verified" only once it checked, in the
reader's browser, the checkpoint under the key the reader pinned, each inclusion proof and each
leaf's filing. ``/explorer/{name}`` serves the script, the index rules and the style, nothing
else; ``/explorer/lineage/{fact_id}`` a *public* fact's lineage picture (SVG), drawn by the
renderer ``registry serve`` hands to the app. Every answer carries a strict
Content-Security-Policy (:data:`CSP`), ``X-Content-Type-Options: nosniff`` and
``Referrer-Policy: no-referrer``; no third-party resource is referenced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.resources import files
from typing import Final

from affidavit.registry.errors import RegistryError
from affidavit.registry.routes.facts import walk_limits
from affidavit.registry.state import ReadView
from affidavit.verify import errors
from affidavit.verify.lineage.facts import FactHash, is_fact_hash
from affidavit.verify.lineage.walk import DEFAULT_DEPTH, WalkResult, walk
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["CSP", "LineagePicture", "routes"]

LineagePicture = Callable[[WalkResult], str]
"""Draws a walk as an SVG document (``affidavit.cli.render.lineage.render_svg``)."""

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_SVG_CSP: Final = "default-src 'none'; frame-ancestors 'none'"
_ASSETS: Final = {
    "explorer.js": "text/javascript; charset=utf-8",
    "subjects.js": "text/javascript; charset=utf-8",
    "explorer.css": "text/css; charset=utf-8",
}
_PUBLIC: Final = frozenset({"public"})


@functools.cache
def _asset(name: str) -> bytes:
    """A file of registry/explorer/ (package data), read once."""
    return files("affidavit.registry").joinpath("explorer", name).read_bytes()


def _headers(csp: str = CSP, cache: str = "no-cache") -> dict[str, str]:
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": cache,
    }


async def page(request: Request) -> Response:  # noqa: ARG001 - one page for both paths
    """The explorer's page (the script reads the path and ``?q=``)."""
    return Response(_asset("index.html"), media_type="text/html; charset=utf-8", headers=_headers())


# The explorer's icon, served so a browser's visit logs no 404 (issue 33): a seal, in SVG.
_FAVICON: Final = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<circle cx="8" cy="8" r="7" fill="#0969da"/>'
    b'<path d="M4.5 8.5l2.5 2.5 4.5-5" fill="none" stroke="#fff" stroke-width="2"/></svg>'
)


async def favicon(request: Request) -> Response:  # noqa: ARG001 - one answer
    """The icon browsers ask for (``/favicon.ico``, and the page's ``rel=icon``)."""
    return Response(_FAVICON, media_type="image/svg+xml", headers=_headers(cache="max-age=86400"))


async def asset(request: Request) -> Response:
    """The script or the style."""
    name = str(request.path_params["name"])
    media = _ASSETS.get(name)
    if media is None:
        raise RegistryError("registry.not_found", "no such explorer file", details={"name": name})
    return Response(_asset(name), media_type=media, headers=_headers(cache="max-age=300"))


async def lineage(request: Request) -> Response:
    """The fact's lineage picture among public facts, as SVG."""
    fact_id = str(request.path_params["fact_id"])
    picture: LineagePicture | None = getattr(request.app.state, "lineage_picture", None)
    state = request.app.state.registry
    limits = walk_limits(state.settings)

    def read(view: ReadView) -> WalkResult | None:
        try:
            return walk(
                view.facts,
                FactHash(fact_id),
                depth=DEFAULT_DEPTH,
                readable_scopes=_PUBLIC,
                limits=limits,
            )
        except errors.LineageError as e:
            if e.code in ("fact_not_found", "lineage.root_forbidden"):
                return None  # hidden and absent alike (docs/adr/0009)
            raise

    result = await state.read(read) if picture is not None and is_fact_hash(fact_id) else None
    if result is None or picture is None:
        raise RegistryError(
            "registry.not_found",
            f"no lineage picture of {fact_id[:64]}: not a public fact of this registry",
            details={"fact": fact_id[:64]},
        )
    return Response(
        picture(result).encode("utf-8"),
        media_type="image/svg+xml",
        headers=_headers(_SVG_CSP),
    )


routes: Final = [
    Route("/", page, methods=["GET"]),
    Route("/search", page, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=["GET"]),
    Route("/explorer/lineage/{fact_id}", lineage, methods=["GET"]),
    Route("/explorer/{name}", asset, methods=["GET"]),
]
