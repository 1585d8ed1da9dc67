"""The fact model: validation, FactHash, Stigmem CID, derived_from entry rules (docs/formats.md
§5)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
import rfc8785
from affidavit.specs import read_spec
from affidavit.verify import errors
from affidavit.verify.lineage.facts import HASHED_FIELDS, fact_hash_of, parse_fact, stigmem_cid
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

BASE: dict[str, Any] = {
    "entity": "https://example.com/entity/alice",
    "relation": "memory:role",
    "value": {"type": "text", "v": "CEO"},
    "source": "https://example.com/hr",
    "scope": "team",
    "confidence": 0.97,
    "ts": "2026-01-01T00:00:00Z",
}
HEX = "0123456789abcdef" * 4


def independent_fact_hash(document: dict[str, Any]) -> str:
    """FactHash computed with the rfc8785 package and hashlib only (an independent encoder)."""
    body = {name: document[name] for name in HASHED_FIELDS}
    return hashlib.sha256(rfc8785.dumps(body)).hexdigest()


def test_fact_hash_matches_an_independent_rfc8785_encoder() -> None:
    fact = parse_fact(BASE)
    assert fact.hash == independent_fact_hash(BASE)
    assert fact.hash == fact_hash_of(BASE)


@pytest.mark.parametrize("name", HASHED_FIELDS)
def test_every_hashed_field_changes_the_hash(name: str) -> None:
    changed = copy.deepcopy(BASE)
    replacements: dict[str, Any] = {
        "entity": "https://example.com/entity/bob",
        "relation": "memory:title",
        "value": {"type": "text", "v": "CFO"},
        "scope": "public",
        "source": "https://example.com/other",
        "confidence": 0.5,
        "ts": "2026-01-01T00:00:01Z",
    }
    changed[name] = replacements[name]
    assert parse_fact(changed).hash != parse_fact(BASE).hash


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("id", "fact-1"),
        ("derived_from", [HEX]),
        ("signature", {"alg": "Ed25519", "key_id": "k", "sig": "AAAA"}),
        ("x_extra", {"anything": 1}),
    ],
)
def test_fields_outside_the_hash_do_not_change_it(name: str, value: Any) -> None:
    assert parse_fact({**BASE, name: value}).hash == parse_fact(BASE).hash


def test_number_forms_hash_as_rfc8785() -> None:
    # jcs writes 1.0 as 1: the same FactHash as an integer confidence (RFC 8785 §3.2.2.3)
    assert (
        parse_fact({**BASE, "confidence": 1.0}).hash == parse_fact({**BASE, "confidence": 1}).hash
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entity", "not a uri"),
        ("entity", "urn:x\n"),
        ("entity", 5),
        ("source", ""),
        ("relation", "role"),
        ("relation", "memory:role\n"),
        ("scope", "private"),
        ("confidence", 1.5),
        ("confidence", -0.1),
        ("confidence", True),
        ("confidence", "1"),
        ("ts", "2026-01-01 00:00:00Z"),
        ("ts", "2026-13-01T00:00:00Z"),
        ("ts", "2026-01-01T00:00:00+01:00"),
        ("value", {"type": "text"}),
        ("value", {"type": "text", "v": 1}),
        ("value", {"type": "number", "v": "1"}),
        ("value", {"type": "number", "v": True}),
        ("value", {"type": "boolean", "v": 1}),
        ("value", {"type": "null", "v": 0}),
        ("value", {"type": "blob", "v": "x"}),
        ("value", {"type": "text", "v": "x", "extra": 1}),
        ("value", {"type": "text", "v": "x", "interpret_as": "command"}),
        ("id", ""),
        ("signature", {"alg": "RSA", "key_id": "k", "sig": "AAAA"}),
        ("signature", {"alg": "Ed25519", "key_id": "k", "sig": "A A"}),
        ("signature", {"alg": "Ed25519", "key_id": "k"}),
    ],
)
def test_malformed_facts_are_refused(field: str, value: Any) -> None:
    with pytest.raises(errors.LineageError) as caught:
        parse_fact({**BASE, field: value})
    assert caught.value.code == "fact.invalid"
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("name", HASHED_FIELDS)
def test_missing_fields_are_refused(name: str) -> None:
    document = {k: v for k, v in BASE.items() if k != name}
    with pytest.raises(errors.LineageError, match=name):
        parse_fact(document)


@pytest.mark.parametrize(
    "entries",
    [
        [HEX.upper()],
        [HEX[:63]],
        [HEX + "0"],
        ["sha256:" + HEX],
        [HEX + "\n"],
        [{"fact_id": "x"}],
        [{"hash": HEX, "fact_id": 5}],
        [HEX, HEX],
        [HEX, {"hash": HEX, "fact_id": "dup"}],
        "not-an-array",
        [None],
    ],
)
def test_derived_from_entries_must_be_lowercase_hex(entries: Any) -> None:
    # seed 002 §20.6.1 rule 1
    with raises_code("fact.derived_from_malformed") as caught:
        parse_fact({**BASE, "derived_from": entries})
    assert caught.value.code == "fact.derived_from_malformed"


def test_derived_from_reads_bare_hashes_and_stigmem_objects() -> None:
    other = "f" * 64
    fact = parse_fact({**BASE, "derived_from": [HEX, {"hash": other, "fact_id": "uuid-1"}]})
    assert fact.derived_from == (HEX, other)
    stigmem = parse_fact({**BASE, "derived_from": [{"hash": HEX, "fact_id": None}]})
    assert stigmem.derived_from == (HEX,)


def test_unsafe_integer_values_are_refused() -> None:
    with raises_code("canonical.unsafe_integer"):
        parse_fact({**BASE, "value": {"type": "number", "v": 2**53}})


# Schema agreement: the compiled checks and jsonschema decide alike -------------------------

_SCHEMA = json.loads(read_spec("fact.schema.json"))


def _schema_valid(document: Any) -> bool:
    import jsonschema

    return jsonschema.Draft7Validator(_SCHEMA).is_valid(document)


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_field_values = st.one_of(
    _text,
    st.sampled_from(
        [
            "urn:x:y",
            "https://a.example/b",
            "memory:role",
            "a:b:c",
            "team",
            "public",
            "2026-02-03T04:05:06Z",
            "2026-02-03T04:05:06.123Z",
            "2026-02-03T04:05:06+00:00",
            "2026-02-03T04:05:06.5-00:00",
            "2026-02-03T04:05:06+01:00",
            "urn:x\n",
            HEX,
        ]
    ),
    st.integers(-3, 3),
    # docs/formats.md "Facts": whole floats in [2^53, 1e21) cannot round-trip and are refused
    st.sampled_from([1e16, -(2.0**53), 2.0**53 - 1, 9007199254740991, 1e21, -1e300, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-2, max_value=2),
    st.booleans(),
    st.none(),
)
_values = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["string", "text", "number", "boolean", "datetime", "ref", "null", "x"]
        ),
    },
    # {"type": "null"} may omit v (the Stigmem shape); every other type needs it
    optional={
        "v": _field_values,
        "interpret_as": st.sampled_from(["content", "instruction", "other"]),
    },
)
_entries = st.one_of(
    st.sampled_from([HEX, "f" * 64, HEX.upper(), "abc"]),
    st.fixed_dictionaries(
        {"hash": st.sampled_from([HEX, "e" * 64, "nope"])},
        optional={"fact_id": st.one_of(st.none(), _text, st.integers())},
    ),
)


@st.composite
def _documents(draw: st.DrawFn) -> dict[str, Any]:
    document = dict(BASE)
    for name in HASHED_FIELDS:
        if draw(st.integers(0, 5)) == 0:
            document[name] = draw(_values if name == "value" else _field_values)
        if draw(st.integers(0, 20)) == 0:
            del document[name]
    if draw(st.booleans()):
        document["derived_from"] = draw(st.lists(_entries, max_size=3, unique_by=repr))
    if draw(st.integers(0, 4)) == 0:
        document["id"] = draw(_field_values)
    if draw(st.integers(0, 4)) == 0:
        document["signature"] = {
            "alg": "Ed25519",
            "key_id": draw(_text),
            "sig": draw(st.sampled_from(["AAAA", "a-_b==", "a b", ""])),
        }
    return document


def _refs_distinct(document: dict[str, Any]) -> bool:
    entries = document.get("derived_from")
    if not isinstance(entries, list):
        return True
    hashes = [e.get("hash") if isinstance(e, dict) else e for e in entries]
    return len({json.dumps(h) for h in hashes}) == len(hashes)


@settings(max_examples=400, deadline=None)
@given(_documents())
def test_compiled_checks_agree_with_jsonschema(document: dict[str, Any]) -> None:
    try:
        parse_fact(document)
        accepted = True
    except (errors.LineageError, errors.CanonicalError):
        accepted = False
    if _refs_distinct(document):
        assert accepted == _schema_valid(document), document
    else:  # JSON Schema cannot express "no hash twice"; the compiled check is stricter
        assert not accepted


def test_base_fact_is_schema_valid() -> None:
    assert _schema_valid(BASE)
    assert not _schema_valid({**BASE, "scope": "private"})


# Stigmem CID v2: differential against the node's own implementation ------------------------


def test_cid_formula_from_formats_md() -> None:
    fact = parse_fact(BASE)
    body = {
        "confidence": 0.97,
        "entity": BASE["entity"],
        "interpret_as": "content",
        "relation": "memory:role",
        "scope": "team",
        "source": BASE["source"],
        "value_type": "text",
        "value_v": "CEO",
    }
    expected = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert stigmem_cid(fact) == "sha256:" + hashlib.sha256(expected.encode()).hexdigest()


_cid_values = st.one_of(
    st.builds(lambda v: {"type": "text", "v": v}, _text),
    st.builds(lambda v: {"type": "string", "v": v}, _text),
    st.builds(lambda v: {"type": "ref", "v": "urn:x:" + v}, _text),
    st.builds(lambda v: {"type": "number", "v": v}, st.integers(-(2**53) + 1, 2**53 - 1)),
    st.builds(
        lambda v: {"type": "number", "v": v},
        # docs/formats.md "Facts": whole floats in [2^53, 1e21) are refused at the door
        st.floats(allow_nan=False, allow_infinity=False, width=64).filter(
            lambda v: not 2.0**53 <= abs(v) < 1e21
        ),
    ),
    st.builds(lambda v: {"type": "boolean", "v": v}, st.booleans()),
    st.just({"type": "null", "v": None}),
    st.just({"type": "null"}),
    st.builds(
        lambda v, mode: {"type": "text", "v": v, "interpret_as": mode},
        _text,
        st.sampled_from(["content", "instruction"]),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    value=_cid_values,
    entity=st.builds(lambda s: "urn:é:" + s.replace(" ", "_") + "x", _text),
    confidence=st.one_of(st.floats(0, 1), st.sampled_from([0, 1])),
    scope=st.sampled_from(["local", "team", "company", "public"]),
)
def test_cid_equals_stigmem_node(
    value: dict[str, Any], entity: str, confidence: float, scope: str
) -> None:
    cid_module = pytest.importorskip("stigmem_node.cid")
    ingest = pytest.importorskip("stigmem_node.federation.federation_ingest")
    normalizer = pytest.importorskip("stigmem_node.utility.entity_normalizer")
    entity = "".join(entity.split())
    document = {**BASE, "entity": entity, "value": value, "confidence": confidence, "scope": scope}
    fact = parse_fact(document)
    encoded = ingest._encode_v(value)  # the node's own value_v encoder
    # The node normalises entity and source on ingest, then computes the CID over them.
    theirs = cid_module.compute_cid(
        entity=normalizer.normalize_entity_uri(entity),
        relation=BASE["relation"],
        value_type=value["type"],
        value_v=encoded,
        source=normalizer.normalize_entity_uri(BASE["source"]),
        scope=scope,
        confidence=float(confidence),
        interpret_as=value.get("interpret_as", "content"),
    )
    assert fact.cid == theirs
