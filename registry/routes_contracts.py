"""Publication (API key with scope ``publish``; issue 6 item 4).

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
from affidavit.registry._http import api_key, read_json_object
from affidavit.registry.auth import check_scope
from affidavit.registry.errors import json_response
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]


async def publish(request: Request) -> Response:
    """Lint, attest, sign, log and store one contract."""
    check_scope(await api_key(request), "publish")
    declaration = await read_json_object(request, "the contract")
    state = request.app.state.registry
    status, body = await state.db.run(publication.publish, state, declaration)
    return json_response(body, status=status)


async def patch(request: Request) -> Response:
    """Change lifecycle fields of a published contract."""
    check_scope(await api_key(request), "publish")
    changes = await read_json_object(request, "the lifecycle patch")
    state = request.app.state.registry
    adapter_id = request.path_params["adapter_id"]
    version = request.path_params["version"]
    body = await state.db.run(publication.patch_lifecycle, state, adapter_id, version, changes)
    return json_response(body)


routes: Final = [
    Route("/protocol/adapter-contracts", publish, methods=["POST"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", patch, methods=["PATCH"]),
]
