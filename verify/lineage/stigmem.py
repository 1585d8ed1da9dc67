"""Stigmem node shapes <-> facts (docs/formats.md "Facts", "Stigmem node shapes"); no network
here: the registry's ``POST /v1/facts`` and ``affidavit facts pull`` fetch, this maps.

>>> from affidavit.verify.lineage.stigmem import node_timestamp_to_ts
>>> node_timestamp_to_ts("2026-05-01T10:00:00.250000+00:00")
'2026-05-01T10:00:00.250000Z'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.json.forms import HEX64_PATTERN, format_utc
from affidavit.verify.lineage.audit import Finding
from affidavit.verify.lineage.facts import (
    Fact,
    FactHash,
    is_fact_hash,
    parse_fact,
    stigmem_cid,
    stigmem_value_v,
)

__all__ = [
    "CID_ABSENT",
    "UNRESOLVED",
    "PullReport",
    "assert_request_to_fact",
    "fact_record",
    "map_node_records",
    "node_timestamp_to_ts",
]

UNRESOLVED: Final = "stigmem.unresolved_reference"
AMBIGUOUS: Final = "stigmem.ambiguous_reference"
CID_ABSENT: Final = "stigmem.cid_absent"
_NODE_TS: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})"
)
_CID: Final = re.compile(f"sha256:{HEX64_PATTERN}")


def assert_request_to_fact(body: object, *, now: str) -> dict[str, Any]:
    """The fact document for a Stigmem client's ``POST /v1/facts`` body (the node's AssertRequest:
    ``ts``, else ``timestamp``, else ``now``; confidence 1 and scope ``local`` by default).

    Raises:
        ``fact.invalid``: the body is not an object, or carries both ``ts`` and another
            ``timestamp``.
    """
    if not isinstance(body, dict):
        raise errors.LineageError(
            "fact.invalid", "fact must be a JSON object (one fact per POST; batches: PUT)"
        )
    document = dict(body)
    timestamp = document.pop("timestamp", None)
    if "ts" not in document:
        document["ts"] = timestamp if timestamp is not None else now
    elif timestamp is not None and timestamp != document["ts"]:
        raise errors.LineageError(
            "fact.invalid",
            "fact: ts and timestamp differ; send one of them",
            details={"field": "timestamp"},
        )
    document.setdefault("confidence", 1.0)
    document.setdefault("scope", "local")
    return document


def fact_record(fact: Fact) -> dict[str, Any]:
    """The node's FactRecord shape of a stored fact: ``id`` is the FactHash, ``cid`` the CID v2,
    ``timestamp`` the fact's ``ts`` and ``derived_from`` entries ``{"hash": FactHash}``."""
    value = fact.value.to_json()
    value["interpret_as"] = fact.value.interpret_as or "content"
    return {
        "id": fact.hash,
        "entity": fact.entity,
        "relation": fact.relation,
        "value": value,
        "source": fact.source,
        "timestamp": fact.ts,
        "confidence": fact.confidence,
        "scope": fact.scope,
        "cid": fact.cid,
        "derived_from": [{"hash": parent} for parent in fact.derived_from],
        "contradicted": False,
        "warnings": [],
    }


def node_timestamp_to_ts(text: object) -> str | None:
    """A node ``timestamp`` as RFC 3339 UTC with ``Z``, another offset than the node's ``+00:00``
    converted (the fraction kept), or None if it is not one."""
    if not isinstance(text, str):
        return None
    match = _NODE_TS.fullmatch(text)
    if match is None:
        return None
    whole, fraction, offset = match.group(1), match.group(2) or "", match.group(3)
    try:
        parsed = datetime.fromisoformat(whole + ("+00:00" if offset == "Z" else offset))
        # in UTC without the fraction and the "Z" (added below)
        moment = whole if offset in {"Z", "+00:00"} else format_utc(parsed)[:-1]
        datetime.fromisoformat(moment)
    except ValueError:
        return None
    return f"{moment}{fraction}Z"


@dataclass(slots=True)
class PullReport:
    """What a pull read and wrote: fact documents in node order, findings (errors) and info."""

    records: int = 0
    documents: list[dict[str, Any]] = field(default_factory=list)
    hashes: list[FactHash] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    info: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every record became a fact and every CID agreed."""
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        """``{ok, records, written, findings, info}``."""
        return {
            "ok": self.ok,
            "records": self.records,
            "written": len(self.documents),
            "findings": [f.to_json() for f in self.findings],
            "info": [f.to_json() for f in self.info],
        }


@dataclass(slots=True)
class _Pulled:
    record_id: str
    where: str
    document: dict[str, Any]
    fact: Fact
    refs: list[Any]


def map_node_records(records: Iterable[Mapping[str, Any]]) -> PullReport:
    """Map node records (``GET /v1/facts`` pages) to fact documents, each ``cid`` checked and
    ``derived_from`` references mapped to FactHashes (two passes); a record that cannot be a fact is
    a ``stigmem.record_refused`` finding, never dropped silently."""
    report = PullReport()
    pulled: list[_Pulled] = []
    for index, record in enumerate(records):
        report.records += 1
        item = _first_pass(index, record, report)
        if item is not None:
            pulled.append(item)
    by_id: dict[str, FactHash] = {}
    by_cid: dict[str, list[tuple[str, FactHash]]] = {}
    for item in pulled:
        by_id.setdefault(item.record_id, item.fact.hash)
        cid = item.document["stigmem"].get("cid")
        if isinstance(cid, str):
            by_cid.setdefault(cid, []).append((item.fact.ts, item.fact.hash))
    for item in pulled:
        if item.refs:
            _map_references(item, by_id, by_cid, report)
        report.documents.append(item.document)
        report.hashes.append(item.fact.hash)
    return report


def _first_pass(index: int, record: Mapping[str, Any], report: PullReport) -> _Pulled | None:
    record_id = record.get("id") if isinstance(record, Mapping) else None
    where = f"record {index + 1}" + (f" ({record_id})" if isinstance(record_id, str) else "")
    try:
        document, refs = _document(record, where)
        fact = parse_fact(document, what=where)
    except errors.AffidavitError as e:
        report.findings.append(
            Finding(
                "stigmem.record_refused",
                "error",
                where,
                None,
                f"{e.code}: {e.message.removeprefix(where + ': ')}",
                {"cause": e.code, "id": record_id},
            )
        )
        return None
    fact = _check_cid(fact, document, record.get("cid"), where, report)
    return _Pulled(str(record_id), where, document, fact, refs)


def _document(record: object, where: str) -> tuple[dict[str, Any], list[Any]]:
    """The fact document for one node record, and its raw derived_from references."""
    if not isinstance(record, Mapping):
        raise errors.LineageError("fact.invalid", f"{where}: not a JSON object")
    missing = [
        k for k in ("id", "entity", "relation", "value", "source", "scope") if k not in record
    ]
    if missing:
        raise errors.LineageError("fact.invalid", f"{where}: missing {', '.join(missing)}")
    ts = node_timestamp_to_ts(record.get("timestamp"))
    if ts is None:
        raise errors.LineageError(
            "fact.invalid", f"{where}: timestamp is not RFC 3339: {record.get('timestamp')!r}"
        )
    value = record["value"]
    if isinstance(value, Mapping):  # "content" is the default: left out (normal form)
        value = {k: v for k, v in value.items() if not (k == "interpret_as" and v == "content")}
    refs = record.get("derived_from") or []
    if not isinstance(refs, list):
        raise errors.LineageError(
            "fact.derived_from_malformed", f"{where}: derived_from must be an array"
        )
    meta: dict[str, Any] = {
        "cid": record.get("cid"),
        "contradicted": bool(record.get("contradicted")),
    }
    if refs:
        meta["derived_from"] = refs
    document: dict[str, Any] = {
        "id": record["id"],
        "entity": record["entity"],
        "relation": record["relation"],
        "value": value,
        "source": record["source"],
        "scope": record["scope"],
        "confidence": record.get("confidence", 1.0),
        "ts": ts,
        "stigmem": meta,
    }
    return document, refs


def _check_cid(
    fact: Fact, document: dict[str, Any], claimed: object, where: str, report: PullReport
) -> Fact:
    """Compare the record's ``cid`` with ours; a whole number may have been stored as "5"."""
    if claimed is None:
        report.info.append(
            Finding(CID_ABSENT, "info", where, fact.hash, "the record has no cid to check")
        )
        return fact
    ours = stigmem_cid(fact)
    if claimed == ours:
        return fact
    v = fact.value.v
    if fact.value.type == "number" and type(v) is float and v.is_integer():
        # The node keeps the number's string as sent and answers float(string): 5 comes back as
        # 5.0. When the integer spelling matches, write the integer (same FactHash, same CID).
        whole = int(v)
        if claimed == stigmem_cid(fact, value_v=str(whole)):
            document["value"] = {**document["value"], "v": whole}
            return parse_fact(document, what=where)
    report.findings.append(
        Finding(
            "stigmem.cid_mismatch",
            "error",
            where,
            fact.hash,
            f"the record's cid {claimed} is not the CID v2 of its content ({ours})",
            {"claimed": claimed, "computed": ours, "value_v": stigmem_value_v(fact.value)},
        )
    )
    return fact


def _map_references(
    item: _Pulled,
    by_id: Mapping[str, FactHash],
    by_cid: Mapping[str, list[tuple[str, FactHash]]],
    report: PullReport,
) -> None:
    """``derived_from`` as FactHashes: ``fact_id`` first (as the node resolves), then the CID."""
    mapped: list[FactHash] = []
    for ref in item.refs:
        target = _resolve(ref, by_id, by_cid, item, report)
        if target is not None and target not in mapped:
            mapped.append(target)
    if mapped:
        item.document["derived_from"] = mapped
        item.fact = parse_fact(item.document, what=item.where)


def _resolve(
    ref: object,
    by_id: Mapping[str, FactHash],
    by_cid: Mapping[str, list[tuple[str, FactHash]]],
    item: _Pulled,
    report: PullReport,
) -> FactHash | None:
    fact_id = ref.get("fact_id") if isinstance(ref, Mapping) else None
    cid = ref.get("hash") if isinstance(ref, Mapping) else None
    if isinstance(fact_id, str) and fact_id in by_id:
        return by_id[fact_id]
    if is_fact_hash(cid):  # already a FactHash (seed 002 §20.6.1 rule 1): kept, even dangling
        return FactHash(str(cid))
    if isinstance(cid, str) and _CID.fullmatch(cid) and cid in by_cid:
        candidates = sorted(by_cid[cid])
        if len({h for _, h in candidates}) > 1:
            message = f"{cid} names {len(candidates)} pulled facts; the earliest is used"
            _note(report, AMBIGUOUS, item, message, ref)
        return candidates[0][1]
    message = (
        f"derived from {_describe(ref)}, which was not pulled or could not be mapped (kept "
        "under stigmem.derived_from only)"
    )
    _note(report, UNRESOLVED, item, message, ref)
    return None


def _note(report: PullReport, code: str, item: _Pulled, message: str, ref: object) -> None:
    details = {"ref": dict(ref) if isinstance(ref, Mapping) else ref}
    report.info.append(Finding(code, "info", item.where, item.fact.hash, message, details))


def _describe(ref: object) -> str:
    if isinstance(ref, Mapping):
        if isinstance(ref.get("fact_id"), str):
            return f"node fact {ref['fact_id']}"
        if isinstance(ref.get("hash"), str):
            return str(ref["hash"])
    return repr(ref)
