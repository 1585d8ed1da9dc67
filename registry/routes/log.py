"""The transparency log over HTTP (docs/formats.md §4, §6; RFC 9162 §2.1): the key, the heads,
proofs and leaves under ``/protocol/merkle/``, and ``POST /v1/log/entries`` (scope
``log:write``; docs/transparency.md "Writing to the log"), each as specs/registry-v1.yaml says.

A refused entry writes nothing; its key is checked before the body is read. No GET signs or
writes (docs/adr/0024): each reads on the reader threads, and the heads are the writer's
(:meth:`~affidavit.registry.writer.LogWriter.current`).
"""

from __future__ import annotations

import base64
from typing import Any, Final

from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.auth import check_scope
from affidavit.registry.errors import RegistryError
from affidavit.registry.routes._http import api_key, int_param, json_response, read_body
from affidavit.registry.state import ReadView, inclusion_json, largest_head, recorded_head
from affidavit.registry.writer import MAX_ENTRY_BYTES, LogWriter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["MAX_PAGE_BYTES", "routes"]

# Leaf bytes one /protocol/merkle/entries page holds at most (besides its first leaf): about
# 1.4 MB of answer, base64 and JSON included, whatever the leaves' sizes.
MAX_PAGE_BYTES: Final = 1 << 20
_READ_LEAVES: Final = 16  # leaves read at once: at most 16 x 64 KiB before the budget is checked
_WAITS: Final = ("sequenced", "integrated")


async def public_key(request: Request) -> Response:
    """The log's (and publisher's) Ed25519 public key."""
    state = request.app.state.registry
    return json_response(
        {
            "public_key_base64": state.key.public_key.b64,
            "algorithm": "Ed25519",
            "key_id": state.settings.key_id,
            "log_id": state.settings.log_id,
            "publisher_id": state.settings.publisher_id,
        }
    )


async def latest(request: Request) -> Response:
    """The signed tree head of the current size, as the writer signed it at integration (from
    memory, else as recorded; docs/adr/0024: never signed here)."""
    state = request.app.state.registry
    heads = await state.writer.current()
    document = heads.signed_tree_head
    if document is None:  # a checkpoint recorded without a tree head of its size (older logs)
        document = await state.read(largest_head)
    return json_response(document)


async def sth(request: Request) -> Response:
    """A recorded head of one size."""
    state = request.app.state.registry
    size = int_param(request, "tree_size", path=True)
    heads = state.writer.heads
    if heads is not None and heads.tree_size == size and heads.signed_tree_head is not None:
        return json_response(heads.signed_tree_head)
    return json_response(await state.read(lambda view: recorded_head(view.log, size)))


async def checkpoint(request: Request) -> Response:
    """The C2SP checkpoint of the current size, as the writer signed it (with the witnesses'
    cosignatures this process recorded)."""
    state = request.app.state.registry
    note = (await state.writer.current()).checkpoint
    return Response(note.encode("utf-8"), media_type="text/plain; charset=utf-8")


async def inclusion(request: Request) -> Response:
    state = request.app.state.registry
    index = int_param(request, "leaf_index")

    def prove(view: ReadView) -> dict[str, Any]:
        return inclusion_json(view, index, int_param(request, "tree_size", default=view.log.size))

    return json_response(await state.read(prove))


async def consistency(request: Request) -> Response:
    state = request.app.state.registry
    first = int_param(request, "first")
    second_text = request.query_params.get("second")
    second = int_param(request, "second") if second_text else None
    proof = await state.read(lambda view: view.log.consistency_proof(first, second))
    return json_response(proof.to_json())


def _leaf_json(log: TransparencyLog, index: int, data: bytes) -> dict[str, Any]:
    return {
        "leaf_index": index,
        "leaf_hash": log.leaf_hash(index).hex(),
        "leaf_data_b64": base64.b64encode(data).decode("ascii"),
    }


async def entries(request: Request) -> Response:
    """Leaves ``[start, end)``; ``end`` defaults to start + page limit, capped at the size. The
    page ends early once its leaves hold :data:`MAX_PAGE_BYTES` (at least one leaf a page): its
    ``end`` says where the next page starts. Leaves are read :data:`_READ_LEAVES` at a time, so
    neither the read nor the answer holds more than about that many bytes (issue 31: 1,000 leaves
    of 64 KiB made one ~87 MB answer)."""
    state = request.app.state.registry
    limit = state.settings.entries_page_limit
    start = int_param(request, "start", default=0)
    end_text = request.query_params.get("end")

    def page(view: ReadView) -> dict[str, Any]:
        size = view.log.size
        end = int_param(request, "end") if end_text else min(start + limit, size)
        end = min(end, start + limit)
        if not 0 <= start < end <= size:
            view.log.entries(start, end)  # the log's own refusal (log.size_out_of_range)
        items: list[dict[str, Any]] = []
        held = 0
        at = start
        while at < end:
            for data in view.log.entries(at, min(end, at + _READ_LEAVES)):
                if items and held + len(data) > MAX_PAGE_BYTES:
                    return {"start": start, "end": at, "tree_size": size, "entries": items}
                items.append(_leaf_json(view.log, at, data))
                held += len(data)
                at += 1
        return {"start": start, "end": end, "tree_size": size, "entries": items}

    return json_response(await state.read(page))


async def leaf(request: Request) -> Response:
    state = request.app.state.registry
    index = int_param(request, "index", path=True)
    return json_response(
        await state.read(lambda view: _leaf_json(view.log, index, view.log.leaf(index)))
    )


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


routes: Final = [
    Route("/protocol/merkle/public-key", public_key, methods=["GET"]),
    Route("/protocol/merkle/latest", latest, methods=["GET"]),
    Route("/protocol/merkle/sth/{tree_size}", sth, methods=["GET"]),
    Route("/protocol/merkle/checkpoint", checkpoint, methods=["GET"]),
    Route("/protocol/merkle/inclusion", inclusion, methods=["GET"]),
    Route("/protocol/merkle/consistency", consistency, methods=["GET"]),
    Route("/protocol/merkle/entries", entries, methods=["GET"]),
    Route("/protocol/merkle/leaf/{index}", leaf, methods=["GET"]),
    Route("/v1/log/entries", post_entry, methods=["POST"]),
]
