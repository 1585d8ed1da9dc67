"""The registry's transparency log as C2SP tlog-tiles (https://c2sp.org/tlog-tiles), prefix
``/tlog/``: the bytes ``affidavit log tiles`` writes to a folder, computed from the database on
the reader threads (specs/registry-v1.yaml): the checkpoint (as ``/protocol/merkle/checkpoint``,
cosigned) and the key rotation statements (docs/adr/0011) cached a few seconds, tiles and entry
bundles (gzip when accepted) cached as immutable.
"""

from __future__ import annotations

import gzip
from typing import Final

from affidavit.attest.log.tiles import rotations_bytes, tile_bytes
from affidavit.registry.errors import RegistryError
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify.tlog.layout import parse_tile_path
from affidavit.verify.tlog.rotation import ROTATIONS_PATH
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["CHECKPOINT_CACHE", "TILE_CACHE", "routes", "served_checkpoint"]

CHECKPOINT_CACHE: Final = "public, max-age=5"  # tlog-tiles, "Checkpoints": mutable
TILE_CACHE: Final = "public, max-age=31536000, immutable"  # tlog-tiles: immutable endpoints
_OCTETS: Final = "application/octet-stream"


def _recorded(view: ReadView) -> str | None:
    """The largest recorded checkpoint (its latest, cosigned copy) if it covers the current size,
    in one statement (read view)."""
    latest, size = view.log.latest_signed()
    if latest is not None and latest.tree_size == size:
        return latest.document
    return None


async def served_checkpoint(state: RegistryState) -> str:
    """The checkpoint of the current size, as ``GET /tlog/checkpoint`` serves it (and as
    ``GET /v1/lookup`` hands it out with the proofs that lead to it): the recorded one, with its
    cosignatures, else what the writer signs (docs/adr/0024: never signed here)."""
    note = await state.read_single(_recorded)
    if note is not None:
        return note
    checkpoint: str = (await state.writer.current()).checkpoint
    return checkpoint


async def checkpoint(request: Request) -> Response:
    """The checkpoint of the current size."""
    note = await served_checkpoint(request.app.state.registry)
    return Response(
        note.encode("utf-8"),
        media_type="text/plain; charset=utf-8",
        headers={"Cache-Control": CHECKPOINT_CACHE},
    )


async def key_rotations(request: Request) -> Response:
    """The rotation statements (404 when there are none)."""
    state = request.app.state.registry
    data = await state.read(lambda view: rotations_bytes(view.log))
    if data is None:
        raise RegistryError("registry.not_found", "the log's key never rotated")
    return Response(
        data,
        media_type="text/plain; charset=utf-8",
        headers={"Cache-Control": CHECKPOINT_CACHE},
    )


async def tile(request: Request) -> Response:
    """A tile or an entry bundle."""
    state = request.app.state.registry
    ref = parse_tile_path("tile/" + request.path_params["path"])  # 400 tlog.tile_path_invalid
    data = await state.read(lambda view: tile_bytes(view.log, ref))
    if data is None:
        raise RegistryError(
            "registry.not_found",
            f"{ref.path} is not in the tree"
            + (" (or a leaf of it has no data)" if ref.entries else ""),
            details={"path": ref.path},
        )
    headers = {"Cache-Control": TILE_CACHE}
    if ref.entries:
        headers["Vary"] = "Accept-Encoding"
        if _accepts_gzip(request.headers.get("accept-encoding", "")):
            data = gzip.compress(data, mtime=0)
            headers["Content-Encoding"] = "gzip"
    return Response(data, media_type=_OCTETS, headers=headers)


def _accepts_gzip(header: str) -> bool:
    """Whether ``Accept-Encoding`` lists gzip with a non-zero q-value (RFC 9110 §12.5.3)."""
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() == "gzip":
            quality = params.strip().lower().removeprefix("q=").strip()
            return not quality or quality.strip("0.") != ""
    return False


routes: Final = [
    Route("/tlog/checkpoint", checkpoint, methods=["GET"]),
    Route("/tlog/" + ROTATIONS_PATH, key_rotations, methods=["GET"]),
    Route("/tlog/tile/{path:path}", tile, methods=["GET"]),
]
