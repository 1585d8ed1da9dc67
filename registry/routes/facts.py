"""Facts and their provenance (seed 002 §20.6; docs/formats.md "Facts"; specs/registry-v1.yaml):
``PUT /v1/facts`` (scope ``facts:write``) stores one fact or a batch atomically, ``POST`` one as
a Stigmem client's AssertRequest; ``GET`` reads facts and the provenance walk, bounded in nodes,
bytes and time (``truncated: true``).

Hidden equals absent (docs/adr/0009): an unreadable fact is answered byte for byte as an absent
one (404 ``fact_not_found``; ``facts_strict_forbidden`` restores seed 002 §20.6.2's 403 for a
walk's root), scopes are checked before a body is parsed, and a writer gets for a fact stored in
a scope it cannot read the answer of a new one (201). Readable scopes: ``public`` always, others
with ``facts:read:<scope>`` (or ``*``); a ``scope`` parameter only narrows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from affidavit.attest.stores.facts import AddResult, FactPlan, FactStore, PlanContext
from affidavit.registry.auth import check_scope, readable_fact_scopes
from affidavit.registry.errors import RegistryError
from affidavit.registry.routes._http import api_key, int_param, json_response, read_json_body
from affidavit.registry.settings import Settings
from affidavit.registry.state import RegistryState
from affidavit.registry.writer import Batch, Job
from affidavit.verify import errors
from affidavit.verify.lineage.facts import Fact, FactHash, is_fact_hash, parse_fact
from affidavit.verify.lineage.stigmem import assert_request_to_fact, fact_record
from affidavit.verify.lineage.walk import DEFAULT_DEPTH, StoredRecord, WalkLimits, walk
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["MAX_BATCH", "routes"]

MAX_BATCH: Final = 1000


def _parse_batch(body: Any) -> list[Fact]:
    items = body.get("facts") if isinstance(body, dict) and "facts" in body else [body]
    if not isinstance(items, list) or not items:
        raise errors.LineageError("fact.invalid", "facts must be a non-empty array of fact objects")
    if len(items) > MAX_BATCH:
        raise errors.LineageError("fact.invalid", f"at most {MAX_BATCH} facts per request")
    return [parse_fact(item, what=f"fact #{i + 1}") for i, item in enumerate(items)]


def _store_job(
    state: RegistryState, facts: list[Fact], readable: frozenset[str]
) -> Job[Any, AddResult]:
    """The write-path job storing the facts and their index rows (docs/adr/0017: writes are
    whole); a batch's jobs share one :class:`PlanContext` and one write (:func:`_write_facts`).
    A fact stored in a scope the writer cannot read is answered as added (docs/adr/0009)."""

    def prepare() -> tuple[FactPlan, set[FactHash]]:
        context = _context(state)
        unreadable = [f.hash for f in facts if f.scope not in readable]
        stored = context.scopes(unreadable) if unreadable else {}
        hidden = {FactHash(h) for h in unreadable if h in stored}
        return state.facts.plan([f for f in facts if f.hash not in hidden], context=context), hidden

    def apply(prepared: tuple[FactPlan, set[FactHash]], batch: Batch) -> AddResult:
        plan, hidden = prepared
        batch["facts_state"] = state
        batch.setdefault("facts_added", []).extend(plan.added)
        batch.setdefault("facts_index", []).extend(
            (f.hash, f.entity, f.relation, f.scope, float(f.confidence)) for f in facts
        )
        added = {f.hash for f in plan.added} | hidden
        return AddResult(
            added=tuple(dict.fromkeys(f.hash for f in facts if f.hash in added)),
            existing=plan.existing,
        )

    def gather(batch: Batch) -> None:
        batch.setdefault("facts_wanted", []).extend(f.hash for f in facts)

    return Job(prepare, apply, _write_facts, gather=gather)


def _context(state: RegistryState) -> PlanContext:
    """The fact plans' shared context of the write batch being run (database thread)."""
    batch = state.writer.batch
    if batch is None:  # pragma: no cover - jobs run inside a batch
        return state.facts.context()
    context: PlanContext | None = batch.get("facts_context")
    if context is None:  # the first fact job of the batch reads what every one of them wants
        context = batch["facts_context"] = state.facts.context()
        context.bodies(batch.get("facts_wanted", []))
    return context


def _write_facts(batch: Batch) -> None:
    """Once per batch, before COMMIT: every planned fact and edge, and every index row."""
    state: RegistryState = batch["facts_state"]
    state.facts.write_plan(FactPlan(tuple(batch.get("facts_added", ())), ()))
    state.tables.index_facts(batch.get("facts_index", []))


async def put_facts(request: Request) -> Response:
    """Store one fact or a batch, all or nothing."""
    key = await api_key(request)
    check_scope(key, "facts:write")
    facts = _parse_batch(await read_json_body(request))
    state = request.app.state.registry
    result = await state.writer.run(_store_job(state, facts, readable_fact_scopes(key)))
    body = {"added": list(result.added), "existing": list(result.existing)}
    return json_response(body, status=201 if result.added else 200)


async def post_fact(request: Request) -> Response:
    """Store one fact sent as a Stigmem client sends it; answer the stored record."""
    key = await api_key(request)
    check_scope(key, "facts:write")
    state = request.app.state.registry
    document = assert_request_to_fact(await read_json_body(request), now=state.now())
    fact = parse_fact(document, what="fact")
    result = await state.writer.run(_store_job(state, [fact], readable_fact_scopes(key)))
    return json_response(fact_record(fact), status=201 if result.added else 200)


def _not_found(fact_id: str) -> errors.LineageError:
    # One message for absent and unreadable alike (docs/formats.md §5: hidden == absent, byte for
    # byte).
    return errors.LineageError(
        "fact_not_found", f"fact {fact_id} not found", details={"fact": fact_id}
    )


def _fact_view(fact: Fact) -> dict[str, Any]:
    return {"id": fact.hash, "fact": dict(fact.document)}


class _Readable:
    """A fact source that shows only facts whose stored scope is readable; the scope column is
    checked before a body is parsed, so a hidden fact costs what an absent one costs."""

    def __init__(self, store: FactStore, scopes: frozenset[str]) -> None:
        self._store = store
        self._scopes = scopes

    def get(self, fact_hash: FactHash) -> Fact | None:
        return self.get_many([fact_hash]).get(fact_hash)

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        return self._store.get_many(fact_hashes, scopes=self._scopes)

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        return self._store.children(fact_hash)

    def records(self) -> Iterator[StoredRecord]:  # pragma: no cover - walks never list
        return self._store.records()


def _get_readable(view: Any, fact_hash: FactHash, readable: frozenset[str]) -> Fact | None:
    fact: Fact | None = _Readable(view.facts, readable).get(fact_hash)
    return fact if fact is not None and fact.scope in readable else None


async def get_fact(request: Request) -> Response:
    """One readable fact, else 404."""
    fact_id = request.path_params["fact_id"]
    readable = readable_fact_scopes(await api_key(request))
    if not is_fact_hash(fact_id):
        raise _not_found(fact_id)
    fact = await request.app.state.registry.read(_get_readable, FactHash(fact_id), readable)
    if fact is None:
        raise _not_found(fact_id)
    return json_response(_fact_view(fact))


def _narrow(readable: frozenset[str], scope: str | None) -> frozenset[str]:
    return readable if scope is None else readable & {scope}


def _query(view: Any, filters: dict[str, Any]) -> list[dict[str, Any]]:
    hashes = view.tables.query_facts(**filters)
    found = view.facts.get_many([FactHash(h) for h in hashes], scopes=filters["scopes"])
    return [_fact_view(found[FactHash(h)]) for h in hashes if FactHash(h) in found]


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
    facts = await state.read(_query, filters)
    return json_response({"facts": facts, "count": len(facts)})


def _confidence(raw: str | None) -> float:
    if raw is None or raw == "":
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise RegistryError(
            "http.bad_parameter",
            "min_confidence must be a number in [0, 1]",
            details={"parameter": "min_confidence"},
        )
    return value


def walk_limits(settings: Settings) -> WalkLimits:
    """The provenance walk bounds of the registry settings."""
    return WalkLimits(settings.walk_max_nodes, settings.walk_max_bytes, settings.walk_max_seconds)


def _walk(
    view: Any,
    root: FactHash,
    *,
    depth: int,
    scopes: frozenset[str],
    strict: bool,
    limits: WalkLimits,
) -> dict[str, Any]:
    if strict:  # seed 002 §20.6.2 as written: an unreadable root is 403 with no data
        scope = view.facts.scope_of(root)
        if scope is not None and scope not in scopes:
            raise errors.LineageError(
                "lineage.root_forbidden", f"fact {root} is in a scope you may not read"
            )
    result = walk(
        _Readable(view.facts, scopes), root, depth=depth, readable_scopes=scopes, limits=limits
    )
    return result.to_json()


async def provenance(request: Request) -> Response:
    """The provenance walk with the caller's access rules (seed 002 §20.6.2; docs/adr/0009)."""
    fact_id = request.path_params["fact_id"]
    readable = readable_fact_scopes(await api_key(request))
    depth = int_param(request, "depth", default=DEFAULT_DEPTH)
    if not is_fact_hash(fact_id):
        raise _not_found(fact_id)
    state = request.app.state.registry
    scopes = _narrow(readable, request.query_params.get("scope"))
    strict = state.settings.facts_strict_forbidden
    limits = walk_limits(state.settings)
    body = await state.read(
        lambda view: _walk(
            view, FactHash(fact_id), depth=depth, scopes=scopes, strict=strict, limits=limits
        ),
    )
    return json_response(body)


routes: Final = [
    Route("/v1/facts", put_facts, methods=["PUT"]),
    Route("/v1/facts", post_fact, methods=["POST"]),
    Route("/v1/facts", list_facts, methods=["GET"]),
    Route("/v1/facts/{fact_id}", get_fact, methods=["GET"]),
    Route("/v1/facts/{fact_id}/provenance", provenance, methods=["GET"]),
]
