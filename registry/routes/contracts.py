"""Publication (API key with scope ``publish``).

Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids in its publisher namespaces
(403 ``auth.publisher_forbidden``; an unbound legacy key 403 ``auth.key_unbound``); reserved
distribution channels need an ``admin`` key (403 ``registry.channel_reserved``).

- ``POST /protocol/adapter-contracts``: body = the contract declaration. 201 with ``{created: true,
  entry, leaf_index, inclusion, signed_tree_head}``; the same contract again is 200 with
  ``created: false`` and the stored entry; another contract under an existing (id, version) is 409.
- ``PATCH /protocol/adapter-contracts/{adapter_id}/{version}``: body = lifecycle fields only
  (``status``, ``supersedes``, ``replaced_by``, ``min_verifier_version``, ``distribution_channel``);
  the new signed entry is logged as a leaf too.
"""

from __future__ import annotations

from typing import Final

from affidavit.registry import publication
from affidavit.registry.auth import check_publisher, check_scope
from affidavit.registry.routes._http import api_key, json_response, read_json_object
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]


async def publish(request: Request) -> Response:
    """Lint, attest, sign, log and store one contract (ownership: docs/adr/0006)."""
    key = check_scope(await api_key(request), "publish")
    declaration = await read_json_object(request, "the contract")
    state = request.app.state.registry
    status, body = await state.db.run(publication.publish, state, declaration, key)
    return json_response(body, status=status)


async def patch(request: Request) -> Response:
    """Change lifecycle fields of a published contract."""
    key = check_scope(await api_key(request), "publish")
    adapter_id = request.path_params["adapter_id"]
    check_publisher(key, adapter_id)  # before reading the body (docs/adr/0006)
    changes = await read_json_object(request, "the lifecycle patch")
    state = request.app.state.registry
    version = request.path_params["version"]
    body = await state.db.run(publication.patch_lifecycle, state, adapter_id, version, changes, key)
    return json_response(body)


routes: Final = [
    Route("/protocol/adapter-contracts", publish, methods=["POST"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", patch, methods=["PATCH"]),
]
