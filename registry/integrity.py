"""Stored records the registry cannot index or read: found, reported, never fatal (docs/adr/0017).

>>> DegradedRecord("fact", "ab" * 32, "lineage.fact_malformed", "not JSON").to_json()["kind"]
'fact'

:func:`index_stored_facts` (every start) rekeys the fact index once, then indexes every stored
fact without an index row; :func:`check_store` (``affidavit registry check``) rehashes every fact,
looks each up in the index and checks every contract row's identity, writing nothing. Each
problem is a :class:`DegradedRecord`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from affidavit.attest.errors import StoreError
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.store import Store
from affidavit.registry.db import DegradedRecord, RegistryTables
from affidavit.verify import errors
from affidavit.verify.contracts.schema import is_adapter_id, is_semver
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import Fact, parse_fact
from affidavit.verify.lineage.walk import StoredRecord

__all__ = [
    "CheckReport",
    "DegradedRecord",
    "check_location",
    "check_store",
    "contract_identity_problem",
    "index_stored_facts",
]

_PAGE: Final = 1000


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What :func:`check_store` found: the problems, and what it looked at."""

    problems: tuple[DegradedRecord, ...]
    facts: int
    unindexed: int  # readable facts without an index row (indexed at the next start)
    contracts: int

    @property
    def ok(self) -> bool:
        """No record the registry cannot index or read."""
        return not self.problems

    def to_json(self) -> dict[str, object]:
        """``{ok, facts, unindexed, contracts, problems: [{kind, id, code, message}]}``."""
        return {
            "ok": self.ok,
            "facts": self.facts,
            "unindexed": self.unindexed,
            "contracts": self.contracts,
            "problems": [p.to_json() for p in self.problems],
        }


def read_fact(record: StoredRecord) -> Fact | DegradedRecord:
    """The fact a stored record holds, or why it cannot be served."""
    key = str(record.key)
    try:
        fact = parse_fact(loads(record.body), what=f"stored fact {key}")
    except errors.AffidavitError as e:
        return DegradedRecord("fact", key, "lineage.fact_malformed", f"{e.code}: {e.message}")
    if fact.hash != key:
        return DegradedRecord(
            "fact", key, "lineage.fact_hash_mismatch", f"its body hashes to {fact.hash}"
        )
    return fact


def index_stored_facts(tables: RegistryTables, facts: FactStore) -> int:
    """Rekey the fact index when needed, then index every stored fact that has no index row
    (an unreadable one goes to ``tables.degraded``); returns how many were indexed."""
    tables.rekey_fact_index()
    if tables.fact_index_size() == len(facts):
        return 0
    indexed = 0
    for page in facts.pages(bodies=False, size=_PAGE):
        missing = tables.unindexed([str(record.key) for record in page])
        if not missing:
            continue
        rows = []
        for key in missing:
            body = facts.raw(key)
            if body is None:
                continue
            found = read_fact(StoredRecord(key=key, body=body, where=f"fact {key}"))
            if isinstance(found, DegradedRecord):
                tables.report(found)
                continue
            rows.append(
                (found.hash, found.entity, found.relation, found.scope, float(found.confidence))
            )
        tables.index_facts(rows)
        indexed += len(rows)
    return indexed


def check_store(tables: RegistryTables, facts: FactStore) -> CheckReport:
    """Every record the registry cannot index or read (module docstring); writes nothing."""
    problems: list[DegradedRecord] = []
    count = unindexed = 0
    for page in facts.pages(size=_PAGE):
        count += len(page)
        readable = []
        for record in page:
            found = read_fact(record)
            if isinstance(found, DegradedRecord):
                problems.append(found)
            else:
                readable.append(found.hash)
        unindexed += len(tables.unindexed(readable))
    rows = tables.contracts()
    problems.extend(tables.degraded)
    for row in rows:
        problem = contract_identity_problem(row.adapter_id, row.adapter_version)
        if problem is not None:
            problems.append(problem)
    return CheckReport(
        problems=tuple(problems),
        facts=count,
        unindexed=unindexed,
        contracts=len(rows) + len(tables.degraded),
    )


def contract_identity_problem(adapter_id: object, version: object) -> DegradedRecord | None:
    """Why a stored contract identity is outside what both stores hold (docs/formats.md §2),
    or None."""
    ident = f"{adapter_id}@{version}"
    if not is_adapter_id(adapter_id):
        return DegradedRecord("contract", ident, "contract.bad_adapter_id", _ID_RULE)
    if not is_semver(version):
        return DegradedRecord("contract", ident, "contract.bad_semver", _ID_RULE)
    return None


def check_location(location: str) -> CheckReport:
    """:func:`check_store` on the store at ``location``, read only, in one snapshot.

    Raises:
        ``store.missing``: no registry has been started on it (no file, or no registry tables).
        ``store.unreadable``, ``store.corrupt``: the database cannot be read.
    """
    store = Store.at(location, readonly=True)
    try:
        if store.schema_version("registry") == 0:
            raise StoreError("store.missing", f"{store.path}: no registry has been started here")
        with store.read():
            return check_store(RegistryTables(store), FactStore.sharing(store))
    finally:
        store.close()


_ID_RULE: Final = (
    "its identity is outside the id rules (docs/formats.md §2: adapter_id at most 253 "
    "characters, versions at most 64): served here, but it cannot move to PostgreSQL"
)
