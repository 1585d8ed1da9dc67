"""Audit a fact store offline: recompute every FactHash and check every derivation rule.

>>> from affidavit.verify.lineage import MemoryFactSource
>>> from affidavit.verify.lineage_audit import audit
>>> audit(MemoryFactSource([])).ok
True

Findings (errors, each with the code of its :mod:`~affidavit.verify.errors` class):

* ``lineage.fact_malformed``: a stored record is not strict JSON or not a fact (formats.md §5);
* ``lineage.reference_malformed``: a derived_from entry is not a FactHash (seed 002 §20.6.1 rule 1);
* ``lineage.fact_hash_mismatch``: the content does not hash to the key it is filed under, i.e. the
  content or the key was altered (formats.md §1 "verify over what you received");
* ``lineage.derived_from_changed``: one FactHash stored twice with different derived_from
  (seed 002 §20.6.1 rule 4);
* ``lineage.cycle_found``: the stored graph has a cycle (seed 002 §20.6.1 rule 2);
* ``lineage.signature_bad``: a signature fails against the trusted keys (formats.md §5).

Information, never an error: ``lineage.dangling_reference``, a derived_from entry naming a fact
the store does not hold (seed 002 §20.6.1 rule 3: dangling references are valid).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

from affidavit.verify import errors
from affidavit.verify.facts import Fact, FactHash, parse_fact
from affidavit.verify.jsonio import loads
from affidavit.verify.lineage import FactSource, SignatureStatus, StoredRecord
from affidavit.verify.lineage_graph import find_cycles

__all__ = ["DANGLING", "AuditReport", "Examined", "Finding", "RecordMapper", "audit", "examine"]

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


def _error(
    cls: type[errors.AffidavitError], where: str, fact: str | None, message: str, **details: Any
) -> Finding:
    return Finding(cls.code, "error", where, fact, message, details)


class Examined(NamedTuple):
    """The per-record part of an audit (picklable, so worker processes can compute it).

    ``fact_hash`` is ``None`` when the body is not a fact; ``problems`` are its read findings.
    """

    key: str | None
    where: str
    fact_hash: FactHash | None
    derived_from: tuple[FactHash, ...]
    problems: tuple[Finding, ...]
    fact: Fact | None  # kept only in-process (for signature checks); None from workers


# Applies :func:`examine` to batches of records, in order: e.g. a process pool's ``map``.
RecordMapper = Callable[
    [Callable[[Sequence[StoredRecord]], list[Examined]], Iterable[Sequence[StoredRecord]]],
    Iterable[list[Examined]],
]


_BATCH: Final = 2048


def examine(records: Sequence[StoredRecord], *, keep_fact: bool = False) -> list[Examined]:
    """Recompute each record's FactHash and validate it (formats.md §5; the expensive part)."""
    out: list[Examined] = []
    for record in records:
        problems: list[Finding] = []
        fact = _read(record.body, record.where, record.key, problems)
        if fact is None:
            out.append(Examined(record.key, record.where, None, (), tuple(problems), None))
        else:
            kept = fact if keep_fact else None
            out.append(Examined(record.key, record.where, fact.hash, fact.derived_from, (), kept))
    return out


def _batches(records: Iterable[StoredRecord]) -> Iterator[list[StoredRecord]]:
    batch: list[StoredRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _examined(
    source: FactSource, mapper: RecordMapper | None, keep_fact: bool
) -> Iterator[Examined]:
    if mapper is None or keep_fact:  # signature checks need the Fact: stay in this process
        for batch in _batches(source.records()):
            yield from examine(batch, keep_fact=keep_fact)
        return
    for done in mapper(examine, _batches(source.records())):
        yield from done


def audit(
    source: FactSource,
    *,
    check_signature: Callable[[Fact], SignatureStatus] | None = None,
    mapper: RecordMapper | None = None,
) -> AuditReport:
    """Check every record of ``source``; return the findings, never raise on bad content.

    ``mapper`` may spread the per-record work (:func:`examine`) over worker processes, e.g.
    ``ProcessPoolExecutor(2).map``; the graph and cycle checks stay here, and the report is
    identical. It is not used when ``check_signature`` is given (the check runs in-process).

    Raises:
        FileReadError, LineageStoreInvalid: the store itself cannot be read.
    """
    findings: list[Finding] = []
    graph: dict[str, tuple[FactHash, ...]] = {}
    where_of: dict[str, str] = {}
    signatures: Counter[str] = Counter()
    count = 0
    for item in _examined(source, mapper, check_signature is not None):
        count += 1
        if item.fact_hash is None:
            findings.extend(item.problems)
            continue
        key = item.key if item.key is not None else item.fact_hash
        if key != item.fact_hash:
            findings.append(
                _error(
                    errors.LineageFactHashMismatch,
                    item.where,
                    key,
                    f"content hashes to {item.fact_hash}, not to the FactHash it is filed under",
                    recomputed=item.fact_hash,
                )
            )
        if key in graph:
            if graph[key] != item.derived_from:
                findings.append(
                    _error(
                        errors.LineageDerivedFromChanged,
                        item.where,
                        key,
                        f"stored again with a different derived_from (first at {where_of[key]})",
                    )
                )
            continue
        graph[key] = item.derived_from
        where_of[key] = item.where
        if check_signature is not None and item.fact is not None:
            status = check_signature(item.fact)
            signatures[status] += 1
            if status == "bad":
                findings.append(
                    _error(errors.LineageSignatureBad, item.where, key, "signature does not verify")
                )
    findings.extend(
        _error(
            errors.LineageCycleFound,
            where_of[members[0]],
            members[0],
            f"derived_from cycle through {len(members)} fact(s)",
            members=list(members),
        )
        for members in find_cycles(graph)
    )
    info = [
        Finding(DANGLING, "info", where_of[key], key, f"derived from {parent}, which is not stored")
        for key, parents in graph.items()
        for parent in parents
        if parent not in graph
    ]
    return AuditReport(
        facts=count,
        findings=tuple(findings),
        info=tuple(info),
        signatures=(
            {name: signatures[name] for name in ("signed", "unsigned", "bad")}
            if check_signature is not None
            else None
        ),
    )


def _read(body: bytes, where: str, key: str | None, findings: list[Finding]) -> Fact | None:
    try:
        return parse_fact(loads(body), what=where)
    except errors.FactDerivedFromMalformed as e:
        findings.append(_error(errors.LineageReferenceMalformed, where, key, e.message))
    except (errors.JsonError, errors.FactInvalid, errors.CanonicalError) as e:
        findings.append(_error(errors.LineageFactMalformed, where, key, e.message, cause=e.code))
    return None
