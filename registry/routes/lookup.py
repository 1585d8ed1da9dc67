"""``GET /v1/lookup/{hash}``: every log entry about a hash, each with its inclusion proof, and the
signed checkpoint the proofs lead to (issue 26; docs/transparency.md "Lookup"; the OpenAPI spec).

The checkpoint is the current size's, as ``/tlog/checkpoint`` serves it, and only entries below
its size are answered; an index behind that size is caught up on the writer thread first, so an
answer never misses an entry its checkpoint covers.
"""

from __future__ import annotations

from typing import Any, Final

from affidavit.registry.errors import RegistryError
from affidavit.registry.lookup import DEFAULT_PAGE, MAX_PAGE, answer, catch_up_all
from affidavit.registry.routes._http import int_param, json_response
from affidavit.registry.routes.tlog import served_checkpoint
from affidavit.registry.state import ReadView
from affidavit.verify.crypto.checkpoint import parse_checkpoint_body, parse_note
from affidavit.verify.json.forms import is_hex64
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]


async def lookup(request: Request) -> Response:
    """The entries about a hash, proven."""
    digest = str(request.path_params["hash"])
    if not is_hex64(digest):
        raise RegistryError(
            "http.bad_parameter",
            "hash must be 64 lowercase hex characters (a SHA-256)",
            details={"parameter": "hash"},
        )
    cursor = int_param(request, "cursor", default=0)
    limit = int_param(request, "limit", default=DEFAULT_PAGE, minimum=1, maximum=MAX_PAGE)
    state = request.app.state.registry
    note = await served_checkpoint(state)
    size = parse_checkpoint_body(parse_note(note).text).tree_size

    def read(view: ReadView) -> dict[str, Any] | None:
        if view.tables.lookup_size() < size:  # leaves another process appended: file them first
            return None
        return answer(
            view.tables,
            view.log,
            digest,
            cursor=cursor,
            limit=limit,
            checkpoint=note,
            tree_size=size,
        )

    body = await state.read(read)
    if body is None:
        await state.db.run(catch_up_all, state.tables, state.log)
        body = await state.read(read)
    if body is None:  # pragma: no cover - the writer indexed to at least this size
        raise RegistryError("http.internal", "the lookup index is behind the log")
    return json_response(body)


routes: Final = [Route("/v1/lookup/{hash}", lookup, methods=["GET"])]
