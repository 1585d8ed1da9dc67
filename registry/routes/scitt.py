"""SCRAPI (draft-ietf-scitt-scrapi): the registry's SCITT Transparency Service routes
(specs/registry-v1.yaml): ``POST /entries`` registers a Signed Statement that
:func:`affidavit.registry.scitt.check_policy` accepts (201 with the receipt within the wait,
else 303), ``GET /entries/{id}`` (302 while registering), and the receipt keys under
``/.well-known/scitt-keys``.

Every refusal is RFC 9290 concise problem details, ``{-1: title, -2: "code: message"}``, with
the status of the one map in ``registry/errors.py``. A body over the limit is 413 before it is
read whole; each client address has a token bucket, past which it gets 429 with ``Retry-After``
(SCRAPI "Rate Limiting": an unauthenticated service MUST limit).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final

from affidavit.registry import scitt
from affidavit.registry.errors import (
    CLOSE_CODES,
    RETRY_AFTER_S,
    RegistryError,
    http_status,
    public_body,
)
from affidavit.registry.routes._http import read_body
from affidavit.registry.state import ReadView, RegistryState
from affidavit.verify import errors
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.scitt.cbor import MAX_CBOR_BYTES, encode
from affidavit.verify.scitt.statement import SignedStatement, parse_statement
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["PROBLEM_TYPE", "routes"]

_LOG = logging.getLogger("affidavit.registry")
PROBLEM_TYPE: Final = "application/concise-problem-details+cbor"  # RFC 9290 §6.3
COSE_TYPE: Final = "application/cose"
CBOR_TYPE: Final = "application/cbor"
_TITLES: Final = {  # SCRAPI's error titles
    "scitt.alg_unsupported": "Bad Signature Algorithm",
    "scitt.payload_missing": "Payload Missing",
    "scitt.issuer_untrusted": "Rejected",
    "scitt.issuer_mismatch": "Rejected",
    "scitt.entry_not_found": "Not Found",
    "scitt.entry_id_invalid": "Invalid locator",
    "scitt.rate_limited": "Too Many Requests",
    "http.body_too_large": "Payload Too Large",
    "cbor.too_large": "Payload Too Large",
    "scitt.media_type_unsupported": "Unsupported Media Type",
    "registry.not_found": "No such key",
}
_KEEP_FAILURES: Final = 1024


def problem(error: errors.AffidavitError, state: RegistryState | None = None) -> Response:
    """The RFC 9290 concise problem details of ``error``, with its HTTP status."""
    status = http_status(error)
    body = public_body(error, state.hidden() if state is not None else ())
    title = _TITLES.get(error.code) or ("Error" if status >= 500 else "Malformed request")
    details = {-1: title, -2: f"{body['code']}: {body['message']}"}  # RFC 9290 §2: title, detail
    headers = {}
    retry = RETRY_AFTER_S.get(error.code) or (1 if error.code == "scitt.rate_limited" else None)
    if retry is not None:
        headers["Retry-After"] = str(retry)
    if error.code in CLOSE_CODES:  # the body was not read to its end (as error_response does)
        headers["Connection"] = "close"
    return Response(encode(details), status_code=status, headers=headers, media_type=PROBLEM_TYPE)


class _Buckets:
    """One token bucket per client address (bounded: the least recently seen are forgotten)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.clients: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, client: str) -> None:
        """Raises ``scitt.rate_limited`` when ``client`` has no token left."""
        now = time.monotonic()
        tokens, last = self.clients.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens < 1:
            self.clients[client] = (tokens, now)
            raise errors.ScittError(
                "scitt.rate_limited",
                f"at most {self.rate:g} requests per second per client, bursts of {self.burst}",
            )
        self.clients[client] = (tokens - 1, now)
        while len(self.clients) > 10_000:
            self.clients.popitem(last=False)


class _Service:
    """The routes' per-process state: running registrations, recent failures, the buckets."""

    def __init__(self, settings: scitt.ScittSettings) -> None:
        self.settings = settings
        self.running: dict[str, asyncio.Future[scitt.Registration]] = {}
        self.failures: OrderedDict[str, errors.AffidavitError] = OrderedDict()
        self.buckets = _Buckets(settings.rate_per_s, settings.burst)

    def finished(self, entry_id: str, task: asyncio.Future[scitt.Registration]) -> None:
        self.running.pop(entry_id, None)
        error = task.exception() if not task.cancelled() else None
        if isinstance(error, errors.AffidavitError) and http_status(error) < 500:
            # a refusal stays the answer; a fault (the store, an integration still pending) does
            # not: the entry may be sequenced, and GET /entries/{id} then finds it
            self.failures[entry_id] = error
            while len(self.failures) > _KEEP_FAILURES:
                self.failures.popitem(last=False)
        elif error is not None and not isinstance(error, errors.AffidavitError):
            _LOG.error("SCITT registration %s failed: %r", entry_id, error)


def _service(request: Request) -> _Service:
    found: _Service | None = getattr(request.app.state, "scitt", None)
    if found is None:
        found = _Service(scitt.scitt_settings(request.app.state.registry.settings))
        request.app.state.scitt = found
    return found


Handler = Callable[[Request, _Service, RegistryState], Awaitable[Response]]


def _guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Rate-limit the client, run ``handler``, and answer any refusal as problem details."""

    async def endpoint(request: Request) -> Response:
        state: RegistryState = request.app.state.registry
        try:
            service = _service(request)
            service.buckets.take(request.client.host if request.client else "-")
            return await handler(request, service, state)
        except errors.AffidavitError as error:
            # a damaged, unreachable or busy store is 503 with the store's code (StoreError), as
            # on every other route (registry/app.py), never 500
            if http_status(error) >= 500:
                _LOG.error(
                    "%s on %s %s: %s", error.code, request.method, request.url.path, error.message
                )
            return problem(error, state)
        except Exception:
            _LOG.exception("unexpected error on %s %s", request.method, request.url.path)
            return problem(RegistryError("http.internal", "internal error; nothing was written"))

    return endpoint


def _location(request: Request, entry_id: str) -> str:
    return f"{request.app.state.registry.settings.node_url}/entries/{entry_id}"


def _running(request: Request, entry_id: str, status: int) -> Response:
    """The registration is running: look again at its locator in a second."""
    headers = {"Location": _location(request, entry_id), "Retry-After": "1"}
    return Response(b"", status_code=status, headers=headers)


def _receipt_response(request: Request, done: scitt.Registration, status: int) -> Response:
    return Response(
        done.receipt,
        status_code=status,
        media_type=COSE_TYPE,
        headers={"Location": _location(request, done.entry_id)},
    )


async def _register(state: RegistryState, statement: SignedStatement) -> scitt.Registration:
    """Sequence the statement through the one write path, wait until a signed checkpoint covers
    it, and sign its receipt over that checkpoint's tree."""
    placed = await state.writer.run(scitt.register_job(state, statement))
    proven = await state.writer.integrated(placed)
    return scitt.integrated_receipt(state, statement, proven)


async def register(request: Request, service: _Service, state: RegistryState) -> Response:
    """``POST /entries`` (module docstring)."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != COSE_TYPE:
        raise errors.ScittError(
            "scitt.media_type_unsupported",
            f"a Signed Statement is sent as {COSE_TYPE}, not {media or 'no content type'}",
        )
    limit = min(state.settings.max_body_bytes, MAX_CBOR_BYTES)
    body = await read_body(request, limit, state.settings.body_timeout_s)
    statement = parse_statement(body, what="the Signed Statement", max_bytes=limit)
    scitt.check_policy(statement, service.settings.issuers)
    entry_id = statement.entry_id
    task = service.running.get(entry_id)
    if task is None:
        task = asyncio.ensure_future(_register(state, statement))
        service.running[entry_id] = task
        task.add_done_callback(lambda t: service.finished(entry_id, t))
    service.failures.pop(entry_id, None)
    done, _ = await asyncio.wait({task}, timeout=service.settings.wait_s)
    if not done:  # SCRAPI "Status 303 - Registration is running"
        return _running(request, entry_id, 303)
    return _receipt_response(request, task.result(), 201)


async def entry(request: Request, service: _Service, state: RegistryState) -> Response:
    """``GET /entries/{id}`` (module docstring)."""
    entry_id = str(request.path_params["entry_id"])
    if not is_hex64(entry_id):
        raise errors.ScittError(
            "scitt.entry_id_invalid", "an entry ID is 64 lowercase hex digits (its leaf entry)"
        )
    if entry_id in service.running:  # SCRAPI "Status 302 - Registration is running"
        return _running(request, entry_id, 302)
    failed = service.failures.get(entry_id)
    if failed is not None:
        raise failed
    done = await state.read(lambda view: scitt.registration(state, view, entry_id))
    if done is None:
        raise errors.ScittError(
            "scitt.entry_not_found", f"no registration {entry_id} is known to this service"
        )
    return _receipt_response(request, done, 200)


def _key_set(view: ReadView) -> list[dict[int, Any]]:
    return [key.to_cose() for key in scitt.service_keys(view)]


async def keys(request: Request, service: _Service, state: RegistryState) -> Response:  # noqa: ARG001
    """``GET /.well-known/scitt-keys``: the COSE Key Set."""
    found = await state.read(_key_set)
    return Response(encode(found), media_type=CBOR_TYPE)


async def key(request: Request, service: _Service, state: RegistryState) -> Response:  # noqa: ARG001
    """``GET /.well-known/scitt-keys/{kid}``: one COSE Key (kid: base64url, no padding)."""
    text = str(request.path_params["kid"])
    try:
        kid = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        kid = b""
    canonical = base64.urlsafe_b64encode(kid).rstrip(b"=") == text.encode()
    for candidate in await state.read(_key_set):
        if kid and canonical and candidate[2] == kid:  # label 2: kid (RFC 9052 §7.1)
            return Response(encode(candidate), media_type=CBOR_TYPE)
    raise RegistryError("registry.not_found", "no key could be found for this kid value")


routes: Final = [
    Route("/entries", _guarded(register), methods=["POST"]),
    Route("/entries/{entry_id}", _guarded(entry), methods=["GET"]),
    Route("/.well-known/scitt-keys", _guarded(keys), methods=["GET"]),
    Route("/.well-known/scitt-keys/{kid}", _guarded(key), methods=["GET"]),
]
