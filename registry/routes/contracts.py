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
from affidavit.registry.auth import check_scope
from affidavit.registry.routes._http import api_key, json_response, read_json_object
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["routes"]


async def publish(request: Request) -> Response:
    """Lint, attest, sign, log and store one contract (ownership: docs/adr/0006); answered
    under the signed tree head that first covers its leaf."""
    key = check_scope(await api_key(request), "publish")
    declaration = await read_json_object(request, "the contract")
    state = request.app.state.registry
    job = publication.publish_job(state, declaration, key)
    published = await state.writer.run(job, wait=True)  # answered under a signed head
    body = await publication.answer(state, published)
    return json_response(body, status=201 if published.created else 200)


async def patch(request: Request) -> Response:
    """Change lifecycle fields of a published contract."""
    key = check_scope(await api_key(request), "publish")
    # ownership before the body is read (docs/adr/0006)
    authorized = publication.authorize(key, request.path_params["adapter_id"])
    changes = await read_json_object(request, "the lifecycle patch")
    state = request.app.state.registry
    version = request.path_params["version"]
    job = publication.patch_job(state, authorized, version, changes)
    published = await state.writer.run(job, wait=True)
    return json_response(await publication.answer(state, published))


routes: Final = [
    Route("/protocol/adapter-contracts", publish, methods=["POST"]),
    Route("/protocol/adapter-contracts/{adapter_id}/{version}", patch, methods=["PATCH"]),
]
