"""Planning a batch of facts inside the writer's transaction, before anything is written: which
facts are new, which are stored identically, and which break a rule (seed 002 §20.6.1):

* rule 2, no cycles: checked fact by fact against the store *and* the earlier facts of the batch
  (``provenance_cycle_detected``);
* rule 4, derived_from immutable: a FactHash already stored (or earlier in the batch) with another
  derived_from is refused (``derived_from_immutable``); the same fact again is a no-op;
* rule 3, dangling references are stored as they are.

Several plans of one transaction share a :class:`PlanContext`: the stored rows are read once each,
and each plan sees the facts the earlier ones planned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from affidavit.attest.stores.fact_rows import by_hash, row_body, row_key
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import Fact, FactHash, parse_fact
from affidavit.verify.lineage.walk import closing_parent

__all__ = ["FactPlan", "PlanContext", "batch_error"]


@dataclass(frozen=True, slots=True)
class FactPlan:
    """What :meth:`FactStore.plan` decided: the facts to store (in order, each once) and the
    hashes already stored identically."""

    added: tuple[Fact, ...]
    existing: tuple[FactHash, ...]


class _Children:
    """``children(hash)`` for cycle checks: the stored edges (prefetched for many hashes) plus
    those of the facts planned so far."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._known: dict[FactHash, list[FactHash]] = {}  # stored edges, by source
        self._planned: dict[FactHash, list[FactHash]] = {}  # edges of the facts planned so far

    def prefetch(self, fact_hashes: Sequence[FactHash]) -> None:
        unique = [h for h in dict.fromkeys(fact_hashes) if h not in self._known]
        self._known.update((h, []) for h in unique)
        for source, derived in by_hash(self._db, "source, derived FROM edges WHERE source", unique):
            self._known[FactHash(row_key(source))].append(FactHash(row_key(derived)))

    def of(self, fact_hash: FactHash) -> Iterable[FactHash]:
        if fact_hash not in self._known:
            self.prefetch([fact_hash])
        return (*self._known[fact_hash], *self._planned.get(fact_hash, ()))

    def add(self, fact: Fact) -> None:
        for parent in fact.derived_from:
            self._planned.setdefault(parent, []).append(fact.hash)

    def forget(self, fact: Fact) -> None:
        """Undo :meth:`add` (a plan that was refused writes nothing)."""
        for parent in fact.derived_from:
            self._planned[parent].remove(fact.hash)


class PlanContext:
    """What the plans of one write transaction share (:meth:`FactStore.plan`): the stored facts
    and edges, read once each, and the facts planned so far, which later plans see as stored."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._facts: dict[str, tuple[str, bytes] | None] = {}  # hex -> (scope, body) | absent
        self.children = _Children(db)

    def _read(self, fact_hashes: Sequence[str]) -> None:
        unknown = [h for h in dict.fromkeys(fact_hashes) if h not in self._facts]
        self._facts.update((h, None) for h in unknown)
        for key, scope, body in by_hash(
            self._db, "hash, scope, body FROM facts WHERE hash", unknown
        ):
            self._facts[row_key(key)] = (str(scope), row_body(body))

    def bodies(self, fact_hashes: Sequence[str]) -> dict[str, bytes]:
        """The stored (or planned) body of each of ``fact_hashes`` that has one."""
        self._read(fact_hashes)
        return {h: found[1] for h in fact_hashes if (found := self._facts[h]) is not None}

    def scopes(self, fact_hashes: Sequence[str]) -> dict[str, str]:
        """The stored (or planned) scope of each of ``fact_hashes`` that has one."""
        self._read(fact_hashes)
        return {h: found[0] for h in fact_hashes if (found := self._facts[h]) is not None}

    def planned(self, facts: Iterable[Fact]) -> None:
        """``facts`` (their edges already in :attr:`children`) will be written in this
        transaction: later plans see them as stored."""
        for fact in facts:
            self._facts[fact.hash] = (fact.scope, jcs(dict(fact.document)))

    def plan(
        self, facts: Sequence[Fact], *, labels: Sequence[str] | None, every_error: bool
    ) -> FactPlan:
        """:meth:`affidavit.attest.stores.facts.FactStore.plan` in this context.

        Raises:
            as :meth:`~affidavit.attest.stores.facts.FactStore.add_batch`.
        """
        names = (
            list(labels) if labels is not None else [f"fact #{i + 1}" for i in range(len(facts))]
        )
        stored = self.bodies([fact.hash for fact in facts])
        self.children.prefetch(
            [fact.hash for fact in facts if fact.derived_from and fact.hash not in stored]
        )
        added: dict[FactHash, Fact] = {}
        existing: list[FactHash] = []
        try:
            _plan_each(facts, names, stored, self.children, added, existing, every_error)
        except BaseException:  # refused: nothing of this plan is planned
            for fact in added.values():
                self.children.forget(fact)
            raise
        self.planned(added.values())
        return FactPlan(tuple(added.values()), tuple(existing))


def _plan_each(  # noqa: PLR0917 - the plan's parts
    facts: Sequence[Fact],
    names: list[str],
    stored: Mapping[str, bytes],
    children: _Children,
    added: dict[FactHash, Fact],
    existing: list[FactHash],
    every_error: bool,
) -> None:
    """Each fact against what is stored and planned (rules 2 and 4), into ``added`` and
    ``existing``.

    Raises:
        as :meth:`add_batch`.
    """
    refused: list[errors.AffidavitError] = []
    for fact, name in zip(facts, names, strict=True):
        try:
            earlier = stored.get(fact.hash)
            if earlier is None and fact.hash in added:  # earlier in this batch
                earlier = jcs(dict(added[fact.hash].document))
            if earlier is not None:
                _check_unchanged(fact, earlier, name)
                existing.append(fact.hash)
                continue
            if fact.derived_from:
                _check_acyclic(fact, name, children.of)
            added[fact.hash] = fact
            children.add(fact)
        except errors.LineageError as e:
            if not every_error or e.code not in (
                "derived_from_immutable",
                "provenance_cycle_detected",
            ):
                raise
            refused.append(e)
    if refused:
        raise refused[0] if len(refused) == 1 else batch_error(refused)


def batch_error(refused: Sequence[errors.AffidavitError]) -> errors.LineageError:
    """One ``fact.batch_invalid`` error listing every refusal (its code and message)."""
    bad = [{"code": e.code, "message": e.message} for e in refused]
    listed = "; ".join(f"{e.code}: {e.message}" for e in refused)
    return errors.LineageError(
        "fact.batch_invalid",
        f"{len(refused)} facts are bad: {listed}",
        details={"bad": bad, "count": len(bad)},
    )


def _check_acyclic(
    fact: Fact, name: str, children: Callable[[FactHash], Iterable[FactHash]]
) -> None:
    # seed 002 §20.6.1 rule 2: verify acyclicity before persisting.
    via = closing_parent(fact.hash, fact.derived_from, children)
    if via is not None:
        raise errors.LineageError(
            "provenance_cycle_detected",
            f"{name} ({fact.hash}): deriving it from {via} would close a cycle",
            details={"fact": fact.hash, "via": via, "at": name},
        )


def _check_unchanged(fact: Fact, stored_body: bytes, name: str) -> None:
    # seed 002 §20.6.1 rule 4: derived_from is immutable once stored.
    try:
        stored = parse_fact(loads(stored_body), what="stored fact")
        stored_parents = stored.derived_from
    except errors.AffidavitError:
        stored_parents = None
    if stored_parents != fact.derived_from:
        raise errors.LineageError(
            "derived_from_immutable",
            f"{name} ({fact.hash}) is stored already with a different derived_from",
            details={"fact": fact.hash, "at": name},
        )
