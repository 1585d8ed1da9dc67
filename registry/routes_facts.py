"""Facts and their provenance (issue 6 item 6; seed 002 §20.6; formats.md §5).

- ``PUT /v1/facts`` (scope ``facts:write``): one fact, or ``{"facts": [...]}`` stored atomically.
  Cycles are 400 ``provenance_cycle_detected``; another ``derived_from`` for a stored fact is 422
  ``derived_from_immutable`` (the fact store's rules). 201 when something was added, else 200.
- ``GET /v1/facts/{id}``: one fact. A fact the key may not read is byte-identical to an absent one
  (404 ``fact_not_found``).
- ``GET /v1/facts?entity=&relation=&scope=&min_confidence=&limit=``: matching readable facts.
- ``GET /v1/facts/{id}/provenance?depth=&scope=``: the walk; unreadable nodes look absent, an
  unreadable root is 403 ``lineage.root_forbidden`` with no data, an unknown root 404.

Readable scopes: ``public`` always; others with ``facts:read:<scope>`` (or ``facts:read:*``).
A ``scope`` query parameter narrows the readable set, never widens it.
"""

from __future__ import annotations

from typing import Any, Final

from affidavit.registry._http import api_key, int_param, read_json_body
from affidavit.registry.auth import check_scope, readable_fact_scopes
from affidavit.registry.errors import json_response
from affidavit.registry.state import RegistryState
from affidavit.verify import errors
from affidavit.verify.facts import Fact, FactHash, is_fact_hash, parse_fact
from affidavit.verify.lineage import DEFAULT_DEPTH, walk
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["MAX_BATCH", "routes"]

MAX_BATCH: Final = 1000


def _parse_batch(body: Any) -> list[Fact]:
    items = body.get("facts") if isinstance(body, dict) and "facts" in body else [body]
    if not isinstance(items, list) or not items:
        raise errors.FactInvalid("facts must be a non-empty array of fact objects")
    if len(items) > MAX_BATCH:
        raise errors.FactInvalid(f"at most {MAX_BATCH} facts per request")
    return [parse_fact(item, what=f"fact #{i + 1}") for i, item in enumerate(items)]


def _store(state: RegistryState, facts: list[Fact]) -> dict[str, Any]:
    result = state.facts.add_batch(facts)
    rows = [(f.hash, f.entity, f.relation, f.scope, float(f.confidence)) for f in facts]
    state.tables.index_facts(rows)
    return {"added": list(result.added), "existing": list(result.existing)}


def reindex(state: RegistryState) -> int:
    """Index facts stored but not indexed (a crash between the two commits). Returns the count."""
    if state.tables.fact_index_size() == len(state.facts):
        return 0
    rows = []
    for record in state.facts.records():
        fact = state.facts.get(FactHash(str(record.key)))
        if fact is not None:
            rows.append((fact.hash, fact.entity, fact.relation, fact.scope, float(fact.confidence)))
    before = state.tables.fact_index_size()
    state.tables.index_facts(rows)
    return state.tables.fact_index_size() - before


async def put_facts(request: Request) -> Response:
    """Store one fact or a batch, all or nothing."""
    check_scope(await api_key(request), "facts:write")
    facts = _parse_batch(await read_json_body(request))
    state = request.app.state.registry
    body = await state.db.run(_store, state, facts)
    return json_response(body, status=201 if body["added"] else 200)


def _not_found(fact_id: str) -> errors.FactNotFound:
    # One message for absent and unreadable alike (formats.md §5: hidden == absent, byte for byte).
    return errors.FactNotFound(f"fact {fact_id} not found", details={"fact": fact_id})


def _fact_view(fact: Fact) -> dict[str, Any]:
    return {"id": fact.hash, "fact": dict(fact.document)}


async def get_fact(request: Request) -> Response:
    """One readable fact, else 404."""
    fact_id = request.path_params["fact_id"]
    readable = readable_fact_scopes(await api_key(request))
    if not is_fact_hash(fact_id):
        raise _not_found(fact_id)
    state = request.app.state.registry
    fact = await state.db.run(state.facts.get, FactHash(fact_id))
    if fact is None or fact.scope not in readable:
        raise _not_found(fact_id)
    return json_response(_fact_view(fact))


def _narrow(readable: frozenset[str], scope: str | None) -> frozenset[str]:
    return readable if scope is None else readable & {scope}


def _query(state: RegistryState, filters: dict[str, Any]) -> list[dict[str, Any]]:
    hashes = state.tables.query_facts(**filters)
    found = (state.facts.get(FactHash(h)) for h in hashes)
    return [_fact_view(f) for f in found if f is not None]


async def list_facts(request: Request) -> Response:
    """Readable facts filtered by entity, relation, scope and confidence, oldest first."""
    state = request.app.state.registry
    readable = readable_fact_scopes(await api_key(request))
    params = request.query_params
    limit = int_param(
        request, "limit", default=100, minimum=1, maximum=state.settings.facts_page_limit
    )
    min_confidence = _confidence(params.get("min_confidence"))
    filters = {
        "entity": params.get("entity"),
        "relation": params.get("relation"),
        "scopes": _narrow(readable, params.get("scope")),
        "min_confidence": min_confidence,
        "limit": limit,
    }
    facts = await state.db.run(_query, state, filters)
    return json_response({"facts": facts, "count": len(facts)})


def _confidence(raw: str | None) -> float:
    if raw is None or raw == "":
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise errors.HttpBadParameter(
            "min_confidence must be a number in [0, 1]", details={"parameter": "min_confidence"}
        )
    return value


async def provenance(request: Request) -> Response:
    """The provenance walk with the caller's access rules (seed 002 §20.6.2)."""
    fact_id = request.path_params["fact_id"]
    readable = readable_fact_scopes(await api_key(request))
    depth = int_param(request, "depth", default=DEFAULT_DEPTH)
    if not is_fact_hash(fact_id):
        raise _not_found(fact_id)
    state = request.app.state.registry
    scopes = _narrow(readable, request.query_params.get("scope"))
    result = await state.db.run(
        lambda: walk(state.facts, fact_id, depth=depth, readable_scopes=scopes)
    )
    return json_response(result.to_json())


routes: Final = [
    Route("/v1/facts", put_facts, methods=["PUT"]),
    Route("/v1/facts", list_facts, methods=["GET"]),
    Route("/v1/facts/{fact_id}", get_fact, methods=["GET"]),
    Route("/v1/facts/{fact_id}/provenance", provenance, methods=["GET"]),
]
