"""The Stigmem node's shapes (docs/formats.md "Facts", "Stigmem node shapes"), without a node.

Which shapes are accepted as they are, which are mapped, and what each does to the FactHash and
the CID. The node itself is exercised in tests/cli/facts/test_stigmem_pull.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.lineage.facts import parse_fact
from affidavit.verify.lineage.stigmem import (
    assert_request_to_fact,
    fact_record,
    map_node_records,
    node_timestamp_to_ts,
)

from tests.conftest import raises_code

BASE: dict[str, Any] = {
    "entity": "urn:s:alice",
    "relation": "memory:role",
    "value": {"type": "text", "v": "CEO"},
    "source": "urn:s:hr",
    "scope": "team",
    "confidence": 0.9,
    "ts": "2026-05-01T10:00:00Z",
}


# Accepted as they are ------------------------------------------------------------------------


def test_interpret_as_content_is_the_default_and_outside_the_fact_hash() -> None:
    plain = parse_fact(BASE)
    content = parse_fact({**BASE, "value": {**BASE["value"], "interpret_as": "content"}})
    instruction = parse_fact({**BASE, "value": {**BASE["value"], "interpret_as": "instruction"}})
    assert content.hash == plain.hash
    assert instruction.hash != plain.hash
    assert content.cid == plain.cid != instruction.cid  # the node binds it in CID v2
    # the document keeps what was sent
    assert content.document["value"]["interpret_as"] == "content"


def test_null_without_v_is_the_null_value() -> None:
    bare = parse_fact({**BASE, "value": {"type": "null"}})
    full = parse_fact({**BASE, "value": {"type": "null", "v": None}})
    assert bare.hash == full.hash
    assert bare.cid == full.cid
    assert bare.value.to_json() == {"type": "null", "v": None}
    with pytest.raises(errors.LineageError):
        parse_fact({**BASE, "value": {"type": "text"}})  # only null may omit v


def test_plus_zero_offset_is_utc_and_hashed_as_received() -> None:
    zulu = parse_fact(BASE)
    offset = parse_fact({**BASE, "ts": "2026-05-01T10:00:00+00:00"})
    assert offset.ts == "2026-05-01T10:00:00+00:00"
    assert offset.hash != zulu.hash  # the string is hashed, as received
    assert offset.cid == zulu.cid  # the node's CID has no time in it
    for other in ("2026-05-01T10:00:00-00:00", "2026-05-01T10:00:00+01:00", "2026-05-01T10:00:00"):
        with pytest.raises(errors.LineageError):
            parse_fact({**BASE, "ts": other})


def test_cid_is_computed_over_the_lowercased_entity_and_source() -> None:
    upper = parse_fact({**BASE, "entity": "urn:S:Alice", "source": "urn:S:HR"})
    assert upper.hash != parse_fact(BASE).hash  # FactHash: as received
    assert upper.cid == parse_fact(BASE).cid  # CID: as the node normalises before hashing
    cid = pytest.importorskip("stigmem_node.cid")
    assert upper.cid == cid.compute_cid(
        entity="urn:s:alice",
        relation="memory:role",
        value_type="text",
        value_v="CEO",
        source="urn:s:hr",
        scope="team",
        confidence=0.9,
    )


def test_node_references_are_refused_at_the_door_with_a_hint() -> None:
    for entry in ({"hash": "sha256:" + "a" * 64}, {"fact_id": str(uuid.uuid4())}):
        with raises_code("fact.derived_from_malformed") as caught:
            parse_fact({**BASE, "derived_from": [entry]})
        assert "facts pull" in caught.value.message
    ok = parse_fact({**BASE, "derived_from": [{"hash": "a" * 64, "fact_id": "n1"}]})
    assert ok.derived_from == ("a" * 64,)


# The POST door ---------------------------------------------------------------------------------


def test_assert_request_mapping() -> None:
    request = {k: v for k, v in BASE.items() if k not in ("ts", "confidence", "scope")}
    mapped = assert_request_to_fact(request, now="2026-01-01T00:00:00Z")
    assert (mapped["ts"], mapped["confidence"], mapped["scope"]) == (
        "2026-01-01T00:00:00Z",
        1.0,
        "local",
    )
    timestamped = assert_request_to_fact(
        {**request, "timestamp": "2026-02-02T00:00:00+00:00"}, now="x"
    )
    assert timestamped["ts"] == "2026-02-02T00:00:00+00:00"
    assert "timestamp" not in timestamped
    with pytest.raises(errors.LineageError):
        assert_request_to_fact([request], now="x")
    with pytest.raises(errors.LineageError):
        assert_request_to_fact({**BASE, "timestamp": "2026-02-02T00:00:00Z"}, now="x")


def test_fact_record_shape() -> None:
    fact = parse_fact({**BASE, "derived_from": ["b" * 64]})
    record = fact_record(fact)
    assert record["id"] == fact.hash
    assert record["cid"] == fact.cid
    assert record["value"]["interpret_as"] == "content"
    assert record["derived_from"] == [{"hash": "b" * 64}]
    assert record["timestamp"] == BASE["ts"]


# Node records ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "ours"),
    [
        ("2026-11-22T22:33:26.508272+00:00", "2026-11-22T22:33:26.508272Z"),
        ("2026-11-22T22:33:26+00:00", "2026-11-22T22:33:26Z"),
        ("2026-11-22T22:33:26Z", "2026-11-22T22:33:26Z"),
        ("2026-11-23T00:33:26.5+02:00", "2026-11-22T22:33:26.5Z"),
        ("2026-02-30T00:00:00+00:00", None),
        ("yesterday", None),
        (5, None),
    ],
)
def test_node_timestamps(node: object, ours: str | None) -> None:
    assert node_timestamp_to_ts(node) == ours


def _record(
    entity: str, v: Any = "x", *, kind: str = "text", value_v: str | None = None, **extra: Any
) -> dict[str, Any]:
    cid = pytest.importorskip("stigmem_node.cid")
    record: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "entity": entity,
        "relation": "memory:role",
        "value": {"type": kind, "v": v, "interpret_as": "content"},
        "source": "urn:s:hr",
        "timestamp": "2026-11-22T22:33:26.508272+00:00",
        "confidence": 1.0,
        "scope": "team",
        "contradicted": False,
        "derived_from": [],
    }
    record["cid"] = cid.compute_cid(
        entity=entity,
        relation="memory:role",
        value_type=kind,
        value_v=value_v if value_v is not None else str(v),
        source="urn:s:hr",
        scope="team",
        confidence=1.0,
    )
    record.update(extra)
    return record


def test_records_map_to_facts_that_audit_unchanged() -> None:
    parent = _record("urn:s:p")
    five = _record("urn:s:five", 5.0, kind="number", value_v="5")  # sent as 5, answered 5.0
    child = _record(
        "urn:s:c",
        derived_from=[{"hash": parent["cid"]}, {"fact_id": five["id"]}, {"fact_id": "gone"}],
    )
    report = map_node_records([child, parent, five])
    assert report.ok, report.to_json()
    assert report.records == 3
    assert len(report.documents) == 3
    by_entity = {d["entity"]: d for d in report.documents}
    assert by_entity["urn:s:five"]["value"] == {"type": "number", "v": 5}
    assert by_entity["urn:s:p"]["value"] == {"type": "text", "v": "x"}  # content: left out
    assert by_entity["urn:s:p"]["ts"] == "2026-11-22T22:33:26.508272Z"
    facts = {d["entity"]: parse_fact(d) for d in report.documents}
    assert facts["urn:s:c"].derived_from == (facts["urn:s:p"].hash, facts["urn:s:five"].hash)
    assert facts["urn:s:five"].cid == five["cid"]  # our CID of what we wrote is the node's
    assert by_entity["urn:s:c"]["stigmem"]["derived_from"] == child["derived_from"]
    assert [(i.code, i.details["ref"]) for i in report.info] == [
        ("stigmem.unresolved_reference", {"fact_id": "gone"})
    ]


def test_cid_mismatch_is_a_finding_and_the_fact_is_still_written() -> None:
    tampered = _record("urn:s:t")
    tampered["value"]["v"] = "edited after the cid"
    report = map_node_records([tampered])
    assert not report.ok
    assert [f.code for f in report.findings] == ["stigmem.cid_mismatch"]
    assert report.findings[0].details["claimed"] == tampered["cid"]
    assert len(report.documents) == 1


def test_a_record_that_cannot_be_a_fact_is_a_finding_not_dropped() -> None:
    big = _record("urn:s:big", 1e16, kind="number", value_v="1e+16")
    odd_time = _record("urn:s:t2", timestamp="not a time")
    fine = _record("urn:s:fine")
    report = map_node_records([big, odd_time, fine])
    assert [f.code for f in report.findings] == ["stigmem.record_refused"] * 2
    assert [f.details["cause"] for f in report.findings] == [
        "canonical.unsafe_integer",
        "fact.invalid",
    ]
    assert [d["entity"] for d in report.documents] == ["urn:s:fine"]


def test_records_without_a_cid_are_noted() -> None:
    legacy = _record("urn:s:legacy", cid=None)
    report = map_node_records([legacy])
    assert report.ok
    assert [i.code for i in report.info] == ["stigmem.cid_absent"]


def test_an_ambiguous_cid_reference_takes_the_earliest() -> None:
    first = _record("urn:s:same", timestamp="2026-01-01T00:00:00+00:00")
    second = _record("urn:s:same", timestamp="2026-02-01T00:00:00+00:00")
    child = _record("urn:s:kid", derived_from=[{"hash": first["cid"]}])
    report = map_node_records([second, first, child])
    facts = {d["ts"]: parse_fact(d) for d in report.documents}
    kid = next(parse_fact(d) for d in report.documents if d["entity"] == "urn:s:kid")
    assert kid.derived_from == (facts["2026-01-01T00:00:00Z"].hash,)
    assert [i.code for i in report.info] == ["stigmem.ambiguous_reference"]
