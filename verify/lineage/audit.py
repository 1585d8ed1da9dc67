"""Audit a fact store offline: recompute every FactHash and check every derivation rule.

>>> from affidavit.verify.lineage.walk import MemoryFactSource
>>> from affidavit.verify.lineage.audit import audit
>>> audit(MemoryFactSource([])).ok
True

Findings are ``lineage.*`` codes (seed 002 §20.6.1); a dangling reference is information, never
an error (rule 3). :func:`check_records` checks each record on its own (a worker process can run
it over its share of a store) and :func:`audit_checked` joins the results in store order: every
path gives the same report, byte for byte.
"""

from __future__ import annotations

import dataclasses
import hashlib
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate, chain, islice, repeat
from typing import Any, Final, Literal, NamedTuple, Protocol, cast, runtime_checkable

from affidavit.verify import errors
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import Fact, FactHash, fact_hash_and_parents, parse_fact
from affidavit.verify.lineage.walk import FactSource, SignatureStatus, StoredRecord, find_cycles

__all__ = [
    "DANGLING",
    "AuditReport",
    "Checked",
    "EdgeDigest",
    "EdgeIndex",
    "Examined",
    "Finding",
    "RawRecord",
    "audit",
    "audit_checked",
    "check_records",
    "examine",
    "with_edge_index_check",
]

DANGLING: Final = "lineage.dangling_reference"

Severity = Literal["error", "info"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing an audit found: ``code``, where, which fact, and a sentence for people."""

    code: str
    severity: Severity
    where: str
    fact: str | None
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{code, severity, where, fact, message, details}``."""
        return {
            "code": self.code,
            "severity": self.severity,
            "where": self.where,
            "fact": self.fact,
            "message": self.message,
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What an audit checked and found. ``ok`` is true when there is no error finding."""

    facts: int
    findings: tuple[Finding, ...]
    info: tuple[Finding, ...]
    signatures: Mapping[str, int] | None

    @property
    def ok(self) -> bool:
        """True when nothing but information was found."""
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        """``{ok, facts, findings, info, signatures}``; signatures is null when not checked."""
        return {
            "ok": self.ok,
            "facts": self.facts,
            "findings": [finding.to_json() for finding in self.findings],
            "info": [finding.to_json() for finding in self.info],
            "signatures": dict(self.signatures) if self.signatures is not None else None,
        }


def _error(code: str, where: str, fact: str | None, message: str, **details: Any) -> Finding:
    return Finding(code, "error", where, fact, message, details)


def _malformed(error: errors.AffidavitError, where: str, fact: str | None) -> Finding:
    """The finding for a record that does not parse: a bad reference, or a malformed fact."""
    if error.code == "fact.derived_from_malformed":
        return _error("lineage.reference_malformed", where, fact, error.message)
    return _error("lineage.fact_malformed", where, fact, error.message, cause=error.code)


RawRecord = tuple[str | None, bytes, str]
"""A stored record as plain values: ``(key or None, raw body, where)`` (cf. StoredRecord)."""

Checked = tuple[str | None, str, FactHash | None, tuple[FactHash, ...], tuple[Finding, ...]]
"""One record checked, cheap to send from a worker: ``(key, where, recomputed FactHash or None when
the body is not a fact, derived_from, problems)``."""


def check_records(records: Iterable[RawRecord]) -> list[Checked]:
    """Parse, validate and hash each record (docs/formats.md §5): the per-record part of an audit;
    bad content becomes a finding, never an exception."""
    out: list[Checked] = []
    append = out.append
    for key, body, where in records:
        try:
            fact_hash, parents = fact_hash_and_parents(loads(body), what=where)
        except (errors.ParseError, errors.LineageError, errors.CanonicalError) as e:
            append((key, where, None, (), (_malformed(e, where, key),)))
            continue
        if key == fact_hash:  # the key itself: one string, pickled once from a worker
            fact_hash = cast("FactHash", key)
        append((key, where, fact_hash, parents, ()))
    return out


class Examined(NamedTuple):
    """One record read in full (signature checks need the whole fact); ``fact_hash`` is None
    when the body is not a fact, and ``problems`` say why."""

    key: str | None
    where: str
    fact_hash: FactHash | None
    derived_from: tuple[FactHash, ...]
    problems: tuple[Finding, ...]
    fact: Fact | None


_BATCH: Final = 2048


def examine(records: Iterable[StoredRecord]) -> list[Examined]:
    """Parse each record into a Fact, recomputing its FactHash (docs/formats.md §5)."""
    out: list[Examined] = []
    for record in records:
        key, where = record.key, record.where
        try:
            fact = parse_fact(loads(record.body), what=where)
        except (errors.ParseError, errors.LineageError, errors.CanonicalError) as e:
            out.append(Examined(key, where, None, (), (_malformed(e, where, key),), None))
        else:
            out.append(Examined(key, where, fact.hash, fact.derived_from, (), fact))
    return out


def _batches(records: Iterable[StoredRecord]) -> Iterator[list[StoredRecord]]:
    iterator = iter(records)
    while batch := list(islice(iterator, _BATCH)):
        yield batch


def audit(
    source: FactSource,
    *,
    check_signature: Callable[[Fact], SignatureStatus] | None = None,
) -> AuditReport:
    """Check every record of ``source``; return the findings, never raise on bad content. A
    source's edge index (:class:`EdgeIndex`) is checked too (:func:`with_edge_index_check`).

    Raises:
        ``io.unreadable``, ``lineage.store_invalid``: the store itself cannot be read.
    """
    digest = EdgeDigest()
    if check_signature is not None:
        report = _audit_signed(source, check_signature, digest)
    else:
        report = audit_checked(
            digest.add_checked(item)
            for batch in _batches(source.records())
            for item in check_records((r.key, r.body, r.where) for r in batch)
        )
    if isinstance(source, EdgeIndex):
        return with_edge_index_check(report, source, digest)
    return report


@runtime_checkable
class EdgeIndex(Protocol):
    """A source that also keeps a derivation edge index (the SQLite store does)."""

    def derivation_edges(self) -> Iterable[tuple[str, str]]:
        """Every stored ``(source, derived)`` pair, hex, in any order."""
        ...

    def records(self) -> Iterator[StoredRecord]:
        """Every stored record, raw."""
        ...


class EdgeDigest:
    """An order-free digest of a set of (source, derived) edges: the sum of their SHA-256s."""

    __slots__ = ("count", "total")

    def __init__(self) -> None:
        self.total = 0
        self.count = 0

    def add(self, source: str, derived: str) -> None:
        """Count one edge."""
        edge = hashlib.sha256(f"{source}>{derived}".encode()).digest()
        self.total = (self.total + int.from_bytes(edge, "big")) % _DIGEST_MODULUS
        self.count += 1

    def add_checked(self, item: Checked) -> Checked:
        """Count the edges a checked record's body declares; hand the record on unchanged."""
        key, _, fact_hash, parents, _ = item
        if fact_hash is not None and key is not None:
            for parent in parents:
                self.add(parent, key)
        return item


_DIGEST_MODULUS: Final = 1 << 256
_EDGES_LISTED: Final = 20


def with_edge_index_check(
    report: AuditReport, source: EdgeIndex, from_bodies: EdgeDigest
) -> AuditReport:
    """``report`` plus a finding when ``source``'s edge index is not exactly the bodies' edges.

    The insert-time cycle check (seed 002 §20.6.1 rule 2) walks the index, so an edited index would
    let a later insert close a cycle. Compared as order-free digests; listed only on a mismatch.

    Raises:
        ``lineage.store_invalid``: the index cannot be read.
    """
    from_index = EdgeDigest()
    for source_hash, derived in source.derivation_edges():
        from_index.add(source_hash, derived)
    if (from_index.total, from_index.count) == (from_bodies.total, from_bodies.count):
        return report
    expected = {
        (parent, key)
        for key, _, fact_hash, parents, _ in check_records(
            (r.key, r.body, r.where) for r in source.records()
        )
        if fact_hash is not None and key is not None
        for parent in parents
    }
    stored = set(source.derivation_edges())
    missing, extra = sorted(expected - stored), sorted(stored - expected)
    finding = _error(
        "lineage.edge_index_mismatch",
        "edges",
        None,
        f"the edge index lacks {len(missing)} and adds {len(extra)} derivation edge(s)",
        missing=[list(edge) for edge in missing[:_EDGES_LISTED]],
        extra=[list(edge) for edge in extra[:_EDGES_LISTED]],
    )
    return dataclasses.replace(report, findings=(*report.findings, finding))


def audit_checked(checked: Iterable[Checked]) -> AuditReport:
    """The report from every record's :func:`check_records` result, taken in store order.

    Checks keys (docs/formats.md §1), derived_from immutability (seed 002 §20.6.1 rule 4), cycles
    (rule 2) and dangling references (rule 3, information only). Signatures are not checked.
    """
    assembly = _Assembly()
    add = assembly.add
    for item in checked:
        add(item)
    return assembly.report(None)


def _audit_signed(
    source: FactSource, check_signature: Callable[[Fact], SignatureStatus], digest: EdgeDigest
) -> AuditReport:
    assembly = _Assembly()
    signatures: Counter[str] = Counter()
    for batch in _batches(source.records()):
        for item in examine(batch):
            if assembly.add(digest.add_checked(item[:5])) and item.fact is not None:
                status = check_signature(item.fact)
                signatures[status] += 1
                if status == "bad":
                    fact = item.key if item.key is not None else item.fact.hash
                    message = "signature does not verify"
                    assembly.findings.append(
                        _error("lineage.signature_bad", item.where, fact, message)
                    )
    return assembly.report({name: signatures[name] for name in ("signed", "unsigned", "bad")})


class _Assembly:
    """The whole-store part of an audit, fed one checked record at a time in store order."""

    __slots__ = ("count", "findings", "graph", "where_of")

    def __init__(self) -> None:
        self.count = 0
        self.findings: list[Finding] = []
        self.graph: dict[str, tuple[FactHash, ...]] = {}
        self.where_of: dict[str, str] = {}

    def add(self, item: Checked) -> bool:
        """Take one record; True when it is a readable fact under a key not seen before."""
        key, where, fact_hash, derived, problems = item
        self.count += 1
        if fact_hash is None:
            self.findings.extend(problems)
            return False
        if key is None:
            key = fact_hash
        elif key != fact_hash:  # docs/formats.md §1: verify over what you received
            self.findings.append(
                _error(
                    "lineage.fact_hash_mismatch",
                    where,
                    key,
                    f"content hashes to {fact_hash}, not to the FactHash it is filed under",
                    recomputed=fact_hash,
                )
            )
        graph = self.graph
        if key in graph:
            if graph[key] != derived:  # seed 002 §20.6.1 rule 4
                self.findings.append(
                    _error(
                        "lineage.derived_from_changed",
                        where,
                        key,
                        "stored again with a different derived_from "
                        f"(first at {self.where_of[key]})",
                    )
                )
            return False
        graph[key] = derived
        self.where_of[key] = where
        return True

    def report(self, signatures: Mapping[str, int] | None) -> AuditReport:
        """Add cycles (rule 2) and dangling references (rule 3) and return the report."""
        where_of = self.where_of
        findings = self.findings
        candidates, dangling = _graph_scan(self.graph)
        findings.extend(
            _error(
                "lineage.cycle_found",
                where_of[members[0]],
                members[0],
                f"derived_from cycle through {len(members)} fact(s)",
                members=list(members),
            )
            for members in find_cycles(candidates)
        )
        info = [
            Finding(
                DANGLING, "info", where_of[key], key, f"derived from {parent}, which is not stored"
            )
            for key, parent in dangling
        ]
        return AuditReport(
            facts=self.count, findings=tuple(findings), info=tuple(info), signatures=signatures
        )


def _graph_scan(
    graph: Mapping[str, tuple[FactHash, ...]],
) -> tuple[dict[str, tuple[FactHash, ...]], list[tuple[str, FactHash]]]:
    """``(the part of graph that can hold a cycle, dangling (fact, parent) pairs in order)``.

    The rest after peeling off, again and again, the facts no remaining fact names (Kahn's
    algorithm): a peeled fact is on no cycle, so ``find_cycles`` of the rest equals that of the
    whole graph, and for the usual acyclic store the rest is empty. Hashes become list positions.
    """
    count = len(graph)
    sink = count  # stands for every hash the graph does not hold (dangling references)
    position = dict(zip(graph, range(count), strict=True))
    flat = list(map(position.get, chain.from_iterable(graph.values()), repeat(sink)))
    starts = [0, *accumulate(map(len, graph.values()))]
    keys = list(graph)
    dangling: list[tuple[str, FactHash]] = []
    at = -1
    while True:  # seed 002 §20.6.1 rule 3: dangling references are valid, reported as information
        try:
            at = flat.index(sink, at + 1)
        except ValueError:
            break
        index = bisect_right(starts, at) - 1
        dangling.append((keys[index], graph[keys[index]][at - starts[index]]))
    named = [0] * (count + 1)  # how many remaining facts name each one
    for parent in flat:
        named[parent] += 1
    named[sink] += 1  # never reaches zero: the sink is never "ready"
    ready = [index for index in range(count) if not named[index]]
    pop, push = ready.pop, ready.append
    while ready:
        index = pop()
        for parent in flat[starts[index] : starts[index + 1]]:
            left = named[parent] - 1
            named[parent] = left
            if not left:
                push(parent)
    rest = {keys[index]: graph[keys[index]] for index in range(count) if named[index]}
    return rest, dangling
