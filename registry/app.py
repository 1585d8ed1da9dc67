"""The registry's Starlette application factory.

>>> from affidavit.registry.app import create_app            # doctest: +SKIP
>>> from affidavit.registry.settings import Settings         # doctest: +SKIP
>>> app = create_app(Settings(data_dir=Path("/tmp/reg")))    # doctest: +SKIP

:func:`create_app` wires the route modules, the error handlers (every failure is ``{code,
message, details}``) and a structured access log. State opens in the lifespan and closes on
shutdown (SIGTERM: in-flight requests finish, the database thread drains).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

from affidavit.attest.keyring import SigningKey
from affidavit.registry.errors import RETRY_AFTER_S, RegistryError, http_status, public_body
from affidavit.registry.routes import discovery, explorer, facts, health, log, lookup, tlog
from affidavit.registry.routes import scitt as scitt_routes  # SCRAPI (issue 25)
from affidavit.registry.routes._http import error_response, json_response
from affidavit.registry.settings import Settings
from affidavit.registry.startup import open_state
from affidavit.registry.state import RegistryState
from affidavit.registry.witnessing import start_cosigning
from affidavit.verify import errors
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["create_app"]

ACCESS_LOG = logging.getLogger("affidavit.registry.access")
_LOG = logging.getLogger("affidavit.registry")


def create_app(
    settings: Settings,
    *,
    clock: Callable[[], datetime] | None = None,
    signing_key: SigningKey | None = None,
    state: RegistryState | None = None,
    lineage_picture: explorer.LineagePicture | None = None,
) -> Starlette:
    """Build the ASGI application. Nothing is opened until the lifespan starts, unless ``state``
    was opened already (``registry serve`` does, so a refused start is one line and exit 2).

    ``clock`` returns an aware UTC datetime; ``signing_key`` replaces the key file (tests);
    ``lineage_picture`` draws the explorer's lineage pictures (without one it shows none).
    """
    opened = state

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state = opened or open_state(settings, clock=clock, signing_key=signing_key)
        app.state.registry = state
        await state.writer.start()  # the log's write path (docs/adr/0024)
        try:
            # C2SP witnesses cosign the log's checkpoints in the background (settings.witnesses)
            cosigning = start_cosigning(state)
            try:
                yield
            finally:
                if cosigning is not None:
                    await cosigning.stop()
        finally:
            try:
                await state.writer.stop()  # what was sequenced is integrated and signed first
            finally:
                state.close()

    routes: list[BaseRoute] = [
        *health.routes,
        *discovery.routes,
        *log.routes,
        *facts.routes,
        *tlog.routes,
        *scitt_routes.routes,
        *lookup.routes,
        *explorer.routes,
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            errors.AffidavitError: _affidavit_error,
            HTTPException: _http_exception,
            Exception: _unexpected,
        },
    )
    app.state.lineage_picture = lineage_picture
    app.add_middleware(AccessLog)
    return app


async def _affidavit_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.AffidavitError)
    if http_status(exc) < 500:
        return error_response(exc)
    return _fault_response(request, exc)


def _fault_response(request: Request, error: errors.AffidavitError) -> Response:
    """The server's own fault: the detail to the log, the client :func:`public_body` and
    ``Retry-After`` when a retry may succeed (issue 27)."""
    _FAULTS.log(request, error)
    state = getattr(request.app.state, "registry", None)
    body = public_body(error, state.hidden() if state is not None else ())
    retry = RETRY_AFTER_S.get(error.code)
    headers = {"retry-after": str(retry)} if retry is not None else None
    return json_response(body, status=http_status(error), headers=headers)


class _FaultLog:
    """One log line per fault code per second at most, counting those not logged between."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self._interval = interval_s
        self._last: dict[str, float] = {}
        self._quiet: dict[str, int] = {}

    def log(self, request: Request, error: errors.AffidavitError) -> None:
        now = time.monotonic()
        if now - self._last.get(error.code, -self._interval) < self._interval:
            self._quiet[error.code] = self._quiet.get(error.code, 0) + 1
            return
        self._last[error.code] = now
        quiet = self._quiet.pop(error.code, 0)
        _LOG.error(
            "%s on %s %s: %s%s",
            error.code,
            request.method,
            request.url.path,
            error.message,
            f" (and {quiet} more since the last line)" if quiet else "",
        )


_FAULTS = _FaultLog()


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return error_response(
            RegistryError(
                "http.method_not_allowed", f"{request.method} is not allowed on this route"
            )
        )
    return error_response(RegistryError("http.not_found", f"no route for {request.url.path}"))


async def _unexpected(request: Request, exc: Exception) -> Response:  # noqa: ARG001
    _LOG.exception("unexpected error on %s %s", request.method, request.url.path)
    return error_response(RegistryError("http.internal", "internal error; nothing was written"))


class AccessLog:
    """One JSON line per request: method, path, status, bytes, ms, client, key id; never
    headers, bodies or tokens."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not ACCESS_LOG.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 500, "bytes": 0}

        async def send_and_record(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            client = scope.get("client")
            record = {
                "method": scope["method"],
                "path": scope["path"],
                "status": seen["status"],
                "bytes": seen["bytes"],
                "ms": round((time.perf_counter() - started) * 1000, 2),
                "client": client[0] if client else None,
                "key_id": scope.get("affidavit.key_id"),
            }
            ACCESS_LOG.info(json.dumps(record, separators=(",", ":")))
