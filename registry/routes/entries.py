"""Log entries from many writers (docs/transparency.md "Writing to the log"; issue 24).

``POST /v1/log/entries`` (scope ``log:write``): the body is the entry's bytes, 1 to 65,535
(:data:`~affidavit.registry.writer.MAX_ENTRY_BYTES`). The answer comes once the entry is durably
sequenced: 201 ``{"index": N, "leaf_hash": hex}``, or 200 when an entry with this leaf hash is in
the log already, at index N. With ``?wait=integrated``, only once a signed checkpoint covers it,
adding ``"checkpoint"``, ``"inclusion_proof": {"tree_size", "hashes"}`` (RFC 9162 §2.1.3) and
``"signed_tree_head"`` (docs/formats.md §4) of the same size.

Refusals write nothing: the key is checked before the body is read (401 ``auth.missing``,
``auth.invalid``; 403 ``auth.forbidden``); then 400 ``http.body_empty``, 413
``http.body_too_large``, 408 ``http.body_timeout``, 400 ``http.bad_parameter`` (another
``wait``), 503 ``registry.queue_full``, ``log.unhealthy`` or ``registry.integration_pending``
(the entry stays sequenced).
"""

from __future__ import annotations

from typing import Final

from affidavit.registry.auth import check_scope
from affidavit.registry.errors import RegistryError
from affidavit.registry.routes._http import api_key, json_response, read_body
from affidavit.registry.writer import MAX_ENTRY_BYTES, LogWriter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]

_WAITS: Final = ("sequenced", "integrated")


async def post_entry(request: Request) -> Response:
    """Sequence one entry; with ``?wait=integrated`` wait for its signed checkpoint."""
    check_scope(await api_key(request), "log:write")
    wait = request.query_params.get("wait", "sequenced")
    if wait not in _WAITS:
        raise RegistryError(
            "http.bad_parameter",
            "parameter wait must be sequenced or integrated",
            details={"parameter": "wait"},
        )
    state = request.app.state.registry
    body = await read_body(request, MAX_ENTRY_BYTES, state.settings.body_timeout_s)
    if not body:
        raise RegistryError("http.body_empty", "a log entry is at least one byte")
    writer: LogWriter = state.writer
    placed = await writer.submit(body, wait=wait == "integrated")
    status = 201 if placed.created else 200
    if wait == "integrated":
        return json_response((await writer.integrated(placed)).to_json(), status=status)
    return json_response({"index": placed.index, "leaf_hash": placed.leaf_hash.hex()}, status)


routes: Final = [Route("/v1/log/entries", post_entry, methods=["POST"])]
