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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.facts import Fact, FactHash, parse_fact
from affidavit.verify.jsonio import loads
from affidavit.verify.lineage import FactSource, SignatureStatus
from affidavit.verify.lineage_graph import find_cycles

__all__ = ["DANGLING", "AuditReport", "Finding", "audit"]

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


def audit(
    source: FactSource, *, check_signature: Callable[[Fact], SignatureStatus] | None = None
) -> AuditReport:
    """Check every record of ``source``; return the findings, never raise on bad content.

    Raises:
        FileReadError, LineageStoreInvalid: the store itself cannot be read.
    """
    findings: list[Finding] = []
    graph: dict[str, tuple[FactHash, ...]] = {}
    where_of: dict[str, str] = {}
    signatures: Counter[str] = Counter()
    count = 0
    for record in source.records():
        count += 1
        fact = _read(record.body, record.where, record.key, findings)
        if fact is None:
            continue
        key = record.key if record.key is not None else fact.hash
        if key != fact.hash:
            findings.append(
                _error(
                    errors.LineageFactHashMismatch,
                    record.where,
                    key,
                    f"content hashes to {fact.hash}, not to the FactHash it is filed under",
                    recomputed=fact.hash,
                )
            )
        if key in graph:
            if graph[key] != fact.derived_from:
                findings.append(
                    _error(
                        errors.LineageDerivedFromChanged,
                        record.where,
                        key,
                        f"stored again with a different derived_from (first at {where_of[key]})",
                    )
                )
            continue
        graph[key] = fact.derived_from
        where_of[key] = record.where
        if check_signature is not None:
            status = check_signature(fact)
            signatures[status] += 1
            if status == "bad":
                findings.append(
                    _error(
                        errors.LineageSignatureBad, record.where, key, "signature does not verify"
                    )
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
