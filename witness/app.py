"""The witness's Starlette application (C2SP tlog-witness).

``POST /add-checkpoint`` and ``GET /<hex SHA-256 of the origin>/checkpoint``, answered as
docs/transparency.md, "affidavit witness serve" says. Signatures are checked on the event loop,
every database call runs on one database thread. A refusal after the log's signature verified
is logged on ``affidavit.witness`` with the checkpoint: a 422 may be evidence of a fork.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from affidavit.registry.errors import RegistryError
from affidavit.registry.routes import read_body
from affidavit.registry.threads import DbThread
from affidavit.verify.crypto.checkpoint import NoteVerifier
from affidavit.verify.errors import AffidavitError
from affidavit.witness.cosigner import WitnessKeys
from affidavit.witness.protocol import (
    SIZE_CONTENT_TYPE,
    Authenticated,
    Refusal,
    authenticate,
    origin_hash,
    parse_request,
    trusted_by_origin,
)
from affidavit.witness.state import WitnessState
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["DEFAULT_MAX_BODY_BYTES", "WitnessConfig", "create_app", "origin_paths"]

_LOG = logging.getLogger("affidavit.witness")
# signed-note: accept at least 16 signatures. 16 ML-DSA-44 lines with 255-byte names (55,888
# bytes) and 64 proof lines (2,860) leave over 6 KiB of the 64 KiB for the checkpoint text.
DEFAULT_MAX_BODY_BYTES: Final = 64 * 1024
_TEXT: Final = "text/plain; charset=utf-8"
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class WitnessConfig:
    """What the witness serves with: its keys, the logs it trusts, its state folder, limits."""

    keys: WitnessKeys
    logs: tuple[NoteVerifier, ...]
    state_dir: Path
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout_s: float = 15.0
    trusted: dict[str, tuple[NoteVerifier, ...]] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "trusted", trusted_by_origin(self.logs))


def create_app(config: WitnessConfig, *, state: WitnessState | None = None) -> Starlette:
    """The ASGI app, on ``state`` (default: opened by the lifespan, which closes it)."""
    opened = state

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.witness = witness = opened or WitnessState.open(config.state_dir)
        app.state.db = db = DbThread("witness-db")  # every database call on this one thread
        try:
            yield
        finally:
            db.shutdown()
            witness.close()

    async def add_checkpoint(request: Request) -> Response:
        try:
            body = await read_body(request, config.max_body_bytes, config.body_timeout_s)
        except RegistryError as e:
            if e.code == "http.body_timeout":
                return _text(408, e.message, close=True)
            return _text(413, e.message)  # http.body_too_large
        authenticated: Authenticated | None = None
        try:
            authenticated = authenticate(parse_request(body), config.trusted)
            witness: WitnessState = request.app.state.witness
            lines = await request.app.state.db.run(witness.cosign, authenticated, config.keys)
        except Refusal as refusal:
            if refusal.signed and authenticated is not None:
                _log_refusal(refusal, authenticated)
            if refusal.status == 409:
                return Response(
                    f"{refusal.conflict_size}\n".encode("ascii"),
                    status_code=409,
                    headers={"content-type": SIZE_CONTENT_TYPE},
                )
            return _text(refusal.status, refusal.reason)
        except AffidavitError as e:  # store.busy, store.corrupt...: the witness's own fault
            _LOG.error("add-checkpoint failed: %s: %s", e.code, e.message)
            return _text(503, f"{e.code}: {e.message}")
        checkpoint = authenticated.checkpoint
        _event(
            logging.INFO,
            "cosigned",
            origin=checkpoint.origin,
            old=authenticated.submission.old_size,
            size=checkpoint.tree_size,
        )
        return Response("".join(lines).encode("utf-8"), media_type=_TEXT)

    async def monitoring(request: Request) -> Response:
        digest = str(request.path_params["digest"])
        if not _DIGEST.fullmatch(digest):
            return _text(404, "not a lowercase hex SHA-256 origin hash")
        witness: WitnessState = request.app.state.witness
        note = await request.app.state.db.run(witness.latest_note, digest)
        if note is None:
            return _text(404, "this witness never cosigned a checkpoint of that log")
        return Response(note.encode("utf-8"), media_type=_TEXT)

    routes = [
        Route("/add-checkpoint", add_checkpoint, methods=["POST"]),
        Route("/{digest}/checkpoint", monitoring, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_exception, Exception: _unexpected},
    )


def _text(status: int, message: str, *, close: bool = False) -> Response:
    headers = {"connection": "close"} if close else None
    return Response((message + "\n").encode("utf-8"), status, headers, media_type=_TEXT)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        response = _text(405, f"{request.method} is not allowed on {request.url.path}")
        response.headers.update(exc.headers or {})
        return response
    return _text(404 if exc.status_code == 404 else exc.status_code, exc.detail)


async def _unexpected(request: Request, exc: Exception) -> Response:
    _LOG.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return _text(500, "internal error; nothing was cosigned")


def _log_refusal(refusal: Refusal, request: Authenticated) -> None:
    """A refusal of a signed checkpoint: 409 (a stale client) at INFO, 422 (a possible fork)
    at WARNING with the checkpoint as evidence."""
    checkpoint = request.checkpoint
    fields: dict[str, Any] = {
        "status": refusal.status,
        "origin": checkpoint.origin,
        "old": request.submission.old_size,
        "size": checkpoint.tree_size,
        "reason": refusal.reason,
    }
    if refusal.status == 422:
        fields["checkpoint"] = request.text + "\n" + "".join(request.log_signatures)
        _event(logging.WARNING, "refused_signed_checkpoint", **fields)
    else:
        _event(logging.INFO, "refused", **fields)


def _event(level: int, event: str, **fields: Any) -> None:
    if _LOG.isEnabledFor(level):
        _LOG.log(level, json.dumps({"event": event, **fields}, separators=(",", ":")))


def origin_paths(origins: Sequence[str]) -> dict[str, str]:
    """``origin -> /<origin hash>/checkpoint`` (for the start-up banner)."""
    return {origin: f"/{origin_hash(origin)}/checkpoint" for origin in origins}
