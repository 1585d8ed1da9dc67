"""Request helpers shared by the route modules: bounded bodies, strict JSON, typed parameters."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from affidavit.registry.auth import ApiKey, parse_token, token_from_headers, verify_token
from affidavit.registry.errors import CLOSE_CODES, RegistryError, http_status
from affidavit.verify import errors
from affidavit.verify.errors import AffidavitError
from affidavit.verify.json.strict import loads
from starlette.requests import Request
from starlette.responses import Response

__all__ = [
    "api_key",
    "error_response",
    "int_param",
    "json_response",
    "read_json_body",
    "read_json_object",
]


async def read_body(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The request body, refused as soon as it passes ``limit`` bytes (never buffered beyond it),
    and refused when it has not arrived in full within ``timeout`` seconds (a client that
    announces more than it sends must not hold a worker until it gives up).

    Raises:
        ``http.body_too_large``: Content-Length or the streamed size is over ``limit``.
        ``http.body_timeout``: the body did not arrive in time (408; the connection is then closed).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RegistryError(
            "http.body_too_large",
            f"request body of {declared} bytes is over the limit of {limit}",
            details={"limit": limit},
        )
    chunks: list[bytes] = []
    size = 0
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    stream = request.stream().__aiter__()
    while True:
        remaining = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            chunk = await asyncio.wait_for(stream.__anext__(), remaining)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise RegistryError(
                "http.body_timeout",
                f"the request body did not arrive within {timeout:g} s "
                f"({size} of {declared or 'unknown'} bytes)",
                details={"timeout_s": timeout, "received": size},
            ) from None
        size += len(chunk)
        if size > limit:
            raise RegistryError(
                "http.body_too_large",
                f"request body is over the limit of {limit} bytes",
                details={"limit": limit},
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json_body(request: Request) -> Any:
    """The body parsed by the strict parser (docs/formats.md §1 "Strict input").

    Raises:
        ``http.body_too_large``: over the configured limit (413).
        ``json.*``: any strict-parser code (400).
    """
    settings = request.app.state.registry.settings
    limit: int = settings.max_body_bytes
    body = await read_body(request, limit, settings.body_timeout_s)
    return loads(body, max_bytes=limit)


async def read_json_object(request: Request, what: str) -> dict[str, Any]:
    """Like :func:`read_json_body`; the value must be an object (``json.wrong_type``)."""
    value = await read_json_body(request)
    if not isinstance(value, dict):
        raise errors.ParseError(
            "json.wrong_type", f"{what} must be a JSON object", line=1, column=1
        )
    return value


def int_param(
    request: Request,
    name: str,
    *,
    default: int | None = None,
    minimum: int = 0,
    maximum: int | None = None,
    path: bool = False,
) -> int:
    """A non-negative integer from the path or query string.

    Raises:
        ``http.bad_parameter``: missing (without default), not decimal digits, or out of range.
    """
    raw = request.path_params.get(name) if path else request.query_params.get(name)
    if raw is None or raw == "":
        if default is None:
            raise RegistryError(
                "http.bad_parameter", f"parameter {name} is required", details={"parameter": name}
            )
        return default
    text = str(raw)
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise RegistryError(
            "http.bad_parameter",
            f"parameter {name} must be a non-negative integer",
            details={"parameter": name},
        )
    value = int(text)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise RegistryError(
            "http.bad_parameter", f"parameter {name} must be {bound}", details={"parameter": name}
        )
    return value


async def api_key(request: Request) -> ApiKey | None:
    """The caller's verified API key, or None when no key was sent.

    Raises:
        ``auth.invalid``: a key was sent and it is malformed, unknown, revoked or wrong.
    """
    token = token_from_headers(
        request.headers.get("authorization"), request.headers.get("x-api-key")
    )
    if token is None:
        return None
    parsed = parse_token(token)
    state = request.app.state.registry
    # one statement on a reader, off the writer
    stored = await state.read_single(lambda view: view.tables.get_api_key(parsed.key_id))
    key = verify_token(parsed.token, stored)
    request.scope["affidavit.key_id"] = key.key_id  # for the access log: the id, never the token
    return key


def json_response(
    document: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response (key order as built; non-ASCII kept as UTF-8)."""
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def error_response(error: AffidavitError) -> Response:
    """The ``{code, message, details}`` response for ``error`` (``Connection: close`` when the
    request body was not read to its end)."""
    headers = {"connection": "close"} if error.code in CLOSE_CODES else None
    return json_response(error.to_json(), status=http_status(error), headers=headers)
