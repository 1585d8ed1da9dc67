"""Writes ``fixtures.json`` for the explorer's node tests (issue 36): real leaves, proofs and
checkpoints built by Affidavit's Python code, so the page's JavaScript is judged against it.

``python -m tests.registry.explorer_js.make_fixtures [FOLDER]`` writes ``fixtures.json`` and
``subjects.json`` in FOLDER (default: this folder, where they are committed);
tests/registry/test_explorer_js.py checks the committed files are what this writes, byte for
byte (every value is deterministic: test keys derived from labels, a fixed seed).

What it holds:
  leaves     each leaf's bytes, its kind and the rows registry/index.py ``subjects`` files it
             under (docs/formats.md §11), in log order; the last is appended by its hash only;
  proofs     for every tree size 1..SIZE and every index, the RFC 9162 inclusion proof
             (verify/crypto/merkle.py ``inclusion_proof``) and the root it leads to;
  subtrees   the roots of leaves [0, 8) and [8, SIZE) (an interior node, for the proof-length
             attack: an interior node presented as a leaf, its proof cut short);
  notes      the checkpoint of the tree of SIZE signed by the log's key, the same checkpoint
             signed by a forger's key named like the log, and one cosigned by a witness;
  vkeys      the log's verifier key, the forger's (same name), a witness's (another name);
  answers    per digest a leaf is filed under, the ``GET /v1/lookup/{hash}`` document
             (specs/registry-v1.yaml Lookup) as registry/lookup.py ``answer`` builds it.
``subjects.json``: leaves with the kind and rows ``subjects`` files them under (below): the
leaves of tests/registry/test_explorer_subjects.py, their seeded byte changes, and the edge of
each rule subjects.js recomputes (``edge_leaves``; issue 36: each was a surviving mutant).
``canonical.json``: documents as Python's strict loader reads them (verify/json/strict.py: the
error code, or the value's py-compact and RFC 8785 bytes, verify/json/canonical.py), and floats
with their ``repr``, for subjects.js's strictJSON, pyCompact, jcs and pyFloat.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.registry.index import subjects
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from affidavit.verify.crypto.merkle import inclusion_proof, leaf_hash, root_of
from affidavit.verify.errors import AffidavitError
from affidavit.verify.json.canonical import jcs, py_compact
from affidavit.verify.json.strict import loads

from tests.registry.helpers import contract, fact
from tests.registry.test_explorer_subjects import _mutants, _written

HERE = Path(__file__).resolve().parent
ORIGIN = "affidavit-registry"
LOG_KEY = derive_test_key("explorer_js fixtures: the log's TEST-ONLY key")
FORGER = derive_test_key("explorer_js fixtures: a forger's TEST-ONLY key, named like the log")
WITNESS = derive_test_key("explorer_js fixtures: a witness's TEST-ONLY key")
WITNESS_NAME = "witness.example/w1"
RECORD = "affidavit.registry.adapter_entry.v1"
HASH_ONLY = leaf_hash(b"appended by its hash only")
SUBJECT_SEED = 36  # the seeded byte changes of subjects.json (fixed: the file is committed)
SUBJECT_MUTANTS = 120


def _statement(subject: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subject,
        "predicateType": "https://affidavit.dev/attestation/decision/v1",
        "predicate": {"decision": {"action": "auto_accept"}},
    }


def _envelope(statement: dict[str, Any]) -> bytes:
    return jcs(
        {
            "payload": base64.b64encode(jcs(statement)).decode(),
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"keyid": "k1", "sig": base64.b64encode(b"s" * 64).decode()}],
        }
    )


def leaves() -> list[bytes]:
    """Each kind as Affidavit writes it (the data leaves; the hash-only one is added apart)."""
    declaration = contract()
    entry = {
        "entry_schema_version": "1.0.0",
        "adapter_id": declaration["adapter_id"],
        "adapter_version": "0.1.0",
        "contract_hash": declaration["contract_hash"],
        "status": "active",
        "published_at": "2026-01-01T00:00:00Z",
    }
    event = {
        "deal_id": "deal-1",
        "event_hash": "ab" * 32,
        "event_id": "evt_1",
        "event_type": "OUTCOME_RECORDED",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    return [
        jcs({"record_type": RECORD, "entry": entry, "declaration": declaration}),
        py_compact(event),
        jcs(fact("urn:explorer:evidence")),
        jcs(fact("urn:explorer:derived", derived_from=["cd" * 32, "ef" * 32])),
        _envelope(_statement([{"name": "deal-1", "digest": {"sha256": "ab" * 32}}])),
        hashlib.sha256(b"a registered statement").digest(),  # a digest leaf (§10)
        b"plain bytes, no kind",
        jcs({"receipt_version": "1", "adapter": {"name": "a"}}),
        py_compact({**event, "deal_id": "deal-2", "event_hash": "cd" * 32}),
        jcs(fact("urn:explorer:evidence", scope="public")),
    ]


def _edge_facts() -> list[dict[str, Any]]:
    """A fact (docs/formats.md §5) at each edge of parse_fact's rules, one change each."""
    base = fact("urn:edge")
    big = 2**60
    changes: list[dict[str, Any]] = [
        {"scope": scope} for scope in ("local", "team", "company", "public", "world", 1)
    ]
    changes += [
        {"value": value}
        for value in (
            {"type": "string", "v": "s"}, {"type": "datetime", "v": "2026-01-01T00:00:00Z"},
            {"type": "ref", "v": "urn:x"}, {"type": "boolean", "v": True},
            {"type": "boolean", "v": False}, {"type": "number", "v": True},
            {"type": "number", "v": 9007199254740992.0}, {"type": "number", "v": 2.5},
            {"type": "null", "v": None}, {"type": "null", "v": 5}, {"type": "text", "v": 5},
            {"type": "string", "v": None}, {"type": "text"}, {"v": "x"}, "x", [],
            {"type": "text", "v": "x", "z": 1}, {"type": 5, "v": "x"}, {"type": "foo", "v": "x"},
            {"type": "text", "v": "x", "interpret_as": "other"},
            {"type": "text", "v": "x", "interpret_as": None},
        )
    ]  # fmt: skip
    changes += [
        {"extra": 1}, {"extra": "x"}, {"extra": {"n": big}}, {"extra": {"n": 1}},
        {"extra": 9007199254740991}, {"extra": 9007199254740992}, {"extra": -9007199254740991},
        {"extra": -9007199254740992}, {"extra": 9007199254740992.0}, {"extra": -1e300},
        {"extra": [[big]]},
        {"entity": 5}, {"entity": "1a:b"}, {"entity": "urn:" + "a" * 2044},
        {"entity": "urn:" + "a" * 2045}, {"entity": "urn:\u00e9" + "a" * 2043},
        {"source": "x y:z"}, {"source": "urn:x y"},
        {"relation": 5}, {"relation": "1a:b"}, {"relation": "a:b!"}, {"relation": "a:b:c"},
        {"relation": "a"}, {"relation": "a:" + "b" * 2046}, {"relation": "a:" + "b" * 2047},
        {"confidence": -0.1}, {"confidence": "0.5"}, {"confidence": 1.5}, {"confidence": None},
        {"ts": 5}, {"ts": "x2026-01-01T00:00:00Z"}, {"ts": "2026-01-01T00:00:00Zx"},
        {"ts": "2026-10-20T20:00:00Z"}, {"ts": "2026-11-30T21:00:00Z"},
        {"ts": "2026-12-31T23:59:59Z"}, {"ts": "2026-13-01T00:00:00Z"},
        {"ts": "2026-01-32T00:00:00Z"}, {"ts": "2026-01-01T24:00:00Z"},
        {"ts": "2026-01-01T00:00:60Z"}, {"ts": "2026-01-01T00:00:00.5Z"},
        {"id": 5}, {"id": ""}, {"id": "i"}, {"id": "i" * 2048}, {"id": "i" * 2049},
        {"derived_from": "ab" * 32}, {"derived_from": []}, {"derived_from": [5]},
        {"derived_from": [["ab" * 32]]}, {"derived_from": [{"fact_id": "x"}]},
        {"derived_from": [{"hash": "ab" * 32, "fact_id": 5}]},
        {"derived_from": [{"hash": "ab" * 32, "fact_id": None}]},
        {"derived_from": [{"hash": "ab" * 32, "n": big}]},
        {"derived_from": [{"hash": "AB" * 32}]}, {"derived_from": ["ab" * 32 + "a"]},
        {"entity": ["urn:x"]}, {"source": ["urn:x"]}, {"relation": ["a:b"]},
        {"ts": ["2026-01-01T00:00:00Z"]}, {"id": ["i"]},
        {"value": {"type": "foo", "v": None}}, {"value": {"type": ["text"], "v": "x"}},
    ]  # fmt: skip
    sig = {"alg": "Ed25519", "key_id": "k", "sig": "abc_-"}
    changes += [
        {"signature": signature}
        for signature in (
            sig, "x", {**sig, "x": 1}, {"alg": "Ed25519", "key_id": "k"},
            {"alg": "Ed25519", "key_id": "k", "x": "abc"}, {**sig, "alg": "RS256"},
            {**sig, "key_id": ""}, {**sig, "key_id": 5}, {**sig, "key_id": "k" * 256},
            {**sig, "key_id": "k" * 257}, {**sig, "key_id": ["k"]}, {**sig, "sig": ["abc"]},
            {**sig, "sig": 5}, {**sig, "sig": "s" * 256},
            {**sig, "sig": "s" * 257}, {**sig, "sig": "a+b"},
        )
    ]  # fmt: skip
    out = [{**base, **change} for change in changes]
    out += [{k: v for k, v in base.items() if k != missing} for missing in base]
    out += [{"relation": "a:b"}, {"entity": "urn:x"}]
    return out


def _edge_statements() -> list[Any]:
    """DSSE envelopes of Statements (docs/formats.md §8) at each edge of the rules."""
    subject = {"name": "deal-1", "digest": {"sha256": "ab" * 32}}
    statement = _statement([subject])
    subjects: list[Any] = [
        [{"digest": {"sha256": "ab" * 32}}], [{**subject, "uri": 5}], [{**subject, "uri": "u"}],
        [{**subject, "mediaType": 5}], [{**subject, "downloadLocation": 5}],
        [{**subject, "annotations": []}], [{**subject, "annotations": {"a": 1}}],
        [{"name": "n", "digest": []}], [{"name": "n", "digest": {}}],
        [{"name": "n", "digest": {"": "ab"}}], [{"name": "n", "digest": {"x": 5}}],
        [{"name": "n", "digest": {"x": ""}}], [{"name": "n", "digest": {"x": "zz"}}],
        [{"name": "n", "digest": {"sha1": "g" + "a" * 39}}],
        [{"name": "n", "digest": {"sha1": "a" * 39 + "g"}}],
        [{"name": "n", "digest": {"sha1": "a" * 41}}],
        [{"name": "n", "digest": {"sha1": "a" * 40}}],
        [{"name": "n", "digest": {"md5": "a" * 32, "sha256": "cd" * 32}}],
        [{"name": 5, "digest": {"sha256": "ab" * 32}}], ["x"], [], "x",
        [{"name": f"n{k}", "digest": {"sha256": f"{k:064x}"}} for k in range(64)],
    ]  # fmt: skip
    statements: list[Any] = [{**statement, "subject": s} for s in subjects]
    statements += [
        {**statement, "_type": "https://in-toto.io/Statement/v0.1"}, [statement],
        {**statement, "predicateType": 5}, {**statement, "predicateType": "1https://x"},
        {**statement, "predicateType": ["https://x"]},
        {**statement, "predicateType": "https://x y"}, {**statement, "predicateType": "https://x\x01"},
        {k: v for k, v in statement.items() if k != "predicate"},
    ]  # fmt: skip
    return statements


def _dsse(payload: Any, **fields: Any) -> bytes:
    return json.dumps({
        "payload": payload, "payloadType": "application/vnd.in-toto+json",
        "signatures": [{"keyid": "k", "sig": base64.b64encode(b"s" * 64).decode()}], **fields,
    }).encode()  # fmt: skip


def _edge_envelopes() -> list[bytes]:
    good = base64.b64encode(jcs(_statement([{"name": "n", "digest": {"sha256": "ab" * 32}}])))
    text = good.decode()
    sig = {"keyid": "k", "sig": base64.b64encode(b"s" * 64).decode()}
    out = [_dsse(base64.b64encode(jcs(s)).decode()) for s in _edge_statements()]
    # a payload whose base64 holds "+" and "/" (and "==" padding): each spelling DSSE allows
    # (URL-safe, unpadded), one alphabet mixed with the other, and the padding cut short
    both = base64.b64encode(
        jcs(_statement([{"name": "n~?>~?>x~?>~?>y", "digest": {"sha256": "ab" * 32}}]))
    ).decode()
    url = both.replace("+", "-").replace("/", "_")
    out += [_dsse(p) for p in (
        both, both.rstrip("="), url, url.rstrip("="), both.replace("/", "_", 1),
        both.replace("+", "-", 1), url.replace("_", "/", 1), both[:-1], url[:-1], " " + both,
    )]  # fmt: skip
    out += [_dsse(p) for p in (
        5, None, "!!!!", "a", "YQ=", "YQ==", "YR==", "YQ", "YQ==YQ==", "a+b_", text + "=",
        text.replace("+", "-").replace("/", "_"), text.rstrip("="), "=" + text,
        base64.b64encode(b"\xef\xbb\xbf" + jcs(_statement([]))).decode(),
    )]  # fmt: skip
    out += [_dsse(text, signatures=signatures) for signatures in (
        "x", ["x"], [{"sig": sig["sig"]}], [{**sig, "keyid": 5}],
        [{"keyid": "k"}], [{**sig, "sig": 5}], [{**sig, "sig": "YR=="}],
    )]  # fmt: skip
    out += [
        _dsse(text, payloadType=5),
        _dsse(text, payloadType="text/plain"),
        json.dumps({"payloadType": "application/vnd.in-toto+json", "signatures": [sig]}).encode(),
        json.dumps({"payload": text, "signatures": [sig]}).encode(),
        json.dumps({"payload": text, "payloadType": "application/vnd.in-toto+json"}).encode(),
    ]
    return out


def edge_leaves() -> list[bytes]:
    """The edge of each rule registry/index.py ``subjects`` applies (docs/formats.md §11)."""
    declaration = contract()
    entry = {"entry_schema_version": "1.0.0", "adapter_id": declaration["adapter_id"],
             "adapter_version": "0.1.0", "contract_hash": declaration["contract_hash"]}  # fmt: skip
    record = {"record_type": RECORD, "entry": entry, "declaration": declaration}
    records: list[Any] = [
        {**record, "declaration": {**declaration, field: value}}
        for field in ("output_fields", "allowed_policy_fields")
        for value in (None, False, "", 0, 0.0, [], {}, ["b", "a"], ["a", 1], ["a", {"x": 1}], 5,
                      "ba", {"b": 1})
    ]  # fmt: skip
    records += [
        {**record, "declaration": {k: v for k, v in declaration.items() if k != missing}}
        for missing in ("adapter_contract_version", "input_schema_version", "validator_name",
                        "validator_version", "adapter_id", "output_fields")
    ]  # fmt: skip
    records += [
        {**record, "declaration": {**declaration, "adapter_contract_version": "2.0.0"}},
        {**record, "declaration": {**declaration, "adapter_id": 5}},
        {**record, "declaration": {**declaration, "adapter_version": 5}},
        {**record, "declaration": []},
        {**record, "record_type": "other"},
        {k: v for k, v in record.items() if k != "entry"},
        {k: v for k, v in record.items() if k != "declaration"},
        {**record, "entry": {**entry, "status": "active", "x": 1}},
    ]
    event = {"deal_id": "deal-1", "event_hash": "ab" * 32, "event_id": "e1",
             "event_type": "OUTCOME_RECORDED", "timestamp": "2026-01-01T00:00:00Z"}  # fmt: skip
    events: list[dict[str, Any]] = [
        {**event, "event_type": t}
        for t in ("PROOF_READY", "PROOF_VERIFIED", "GO_APPROVED", "AUTO_GO_APPROVED", "SETTLED",
                  "PAYOUT_CONFIRMED", "OUTCOME_RECORDED", "outcome_recorded")
    ]  # fmt: skip
    events += [
        {**event, "event_hash": "ab" * 32 + "c"},
        {**event, "event_hash": "c" + "ab" * 32},
        {**event, "timestamp": 5},
        {**event, "x": "y"},
        {k: v for k, v in event.items() if k != "event_id"},
        {**{k: v for k, v in event.items() if k != "event_id"}, "other": "e1"},
    ]
    leaves = [jcs(r) for r in records] + [py_compact(e) for e in events]
    leaves.append(json.dumps(event, separators=(",", ":")).encode())  # same length, not sorted
    leaves.append(json.dumps(dict(reversed(event.items())), separators=(",", ":")).encode())
    leaves += [json.dumps(f, ensure_ascii=False).encode() for f in _edge_facts()]
    leaves += _edge_envelopes()
    leaves += [b" " + jcs(fact("urn:space")), b"\n" + py_compact(event), py_compact(event) + b" "]
    leaves += [b"\xd2" + jcs(fact("urn:cose")), b"\xd2" + bytes(31)]
    return leaves


def _note(body: str, signers: list[tuple[str, SigningKey]]) -> str:
    lines = [
        note_signature_line(name, key.public_key.key_id_c2sp(name), key.sign(body.encode()))
        for name, key in signers
    ]
    return format_note(body, lines)


def build() -> dict[str, Any]:
    data = leaves()
    hashes = [leaf_hash(d) for d in data] + [HASH_ONLY]
    size = len(hashes)
    records: list[dict[str, Any]] = []
    for d in data:
        rows = subjects(d)
        records.append(
            {
                "data_b64": base64.b64encode(d).decode(),
                "leaf_hash": leaf_hash(d).hex(),
                "kind": rows[0].kind,
                "rows": [[row.field, row.digest] for row in rows],
            }
        )
    records.append(  # registry/lookup.py: a leaf appended by hash is filed under its leaf hash
        {"data_b64": None, "leaf_hash": HASH_ONLY.hex(), "kind": "hash_only",
         "rows": [["leaf_hash", HASH_ONLY.hex()]]}
    )  # fmt: skip
    proofs = [
        {
            "index": index,
            "size": n,
            "hashes": [h.hex() for h in inclusion_proof(hashes, index, n)],
            "root": root_of(hashes[:n]).hex(),
        }
        for n in range(1, size + 1)
        for index in range(n)
    ]
    root = root_of(hashes)
    body = checkpoint_body(ORIGIN, size, root)
    notes = {
        "log": _note(body, [(ORIGIN, LOG_KEY)]),
        "forged": _note(body, [(ORIGIN, FORGER)]),
        "cosigned": _note(body, [(ORIGIN, LOG_KEY), (WITNESS_NAME, WITNESS)]),
    }
    answers: dict[str, Any] = {}
    for index, record in enumerate(records):
        for field, digest in record["rows"]:
            answers.setdefault(digest, {})
            answers[digest].setdefault(index, (record["kind"], []))[1].append(field)
    documents = {}
    for digest, grouped in answers.items():
        documents[digest] = {
            "hash": digest,
            "entries": [
                {
                    "index": index,
                    "leaf_hash": records[index]["leaf_hash"],
                    "kind": kind,
                    "matched": fields,
                    "inclusion_proof": {
                        "tree_size": size,
                        "hashes": [h.hex() for h in inclusion_proof(hashes, index, size)],
                    },
                }
                for index, (kind, fields) in grouped.items()
            ],
            "checkpoint": notes["log"],
            "next_cursor": None,
        }
    return {
        "origin": ORIGIN,
        "size": size,
        "root": root.hex(),
        "leaves": records,
        "proofs": proofs,
        "subtrees": {"0-8": root_of(hashes[:8]).hex(), f"8-{size}": root_of(hashes[8:]).hex()},
        "notes": notes,
        "vkeys": {
            "log": verifier_key_string(ORIGIN, LOG_KEY.public_key),
            "forger": verifier_key_string(ORIGIN, FORGER.public_key),
            "witness": verifier_key_string(WITNESS_NAME, WITNESS.public_key),
        },
        "public_key_base64": base64.b64encode(LOG_KEY.public_key.raw).decode(),
        "answers": documents,
    }


def subject_cases() -> list[dict[str, Any]]:
    """The leaves of tests/registry/test_explorer_subjects.py (each kind as Affidavit writes it,
    the edge cases of each rule) and SUBJECT_MUTANTS seeded byte changes of them, each with the
    kind and rows registry/index.py ``subjects`` gives (docs/formats.md §11)."""
    written = _written()
    cases = []
    mutants = _mutants(written, random.Random(SUBJECT_SEED))[:SUBJECT_MUTANTS]
    for data in written + mutants + edge_leaves():
        rows = subjects(data)
        cases.append(
            {
                "data_b64": base64.b64encode(data).decode(),
                "kind": rows[0].kind,
                "rows": sorted([row.field, row.digest] for row in rows),
            }
        )
    return cases


def _documents() -> list[bytes]:
    """Strict JSON at the edge of each rule (docs/formats.md §1 "Strict input"), one fault each."""
    nested = 127
    return [
        b"\xef\xbb\xbf{}", b"\xef\xbb\xbf", b"\xef\xbb", b"\xef\xbf\xbf{}", b"\xef\xbb\xbe{}",
        b"\xef{}", b'{"a":"\xff"}', b'{"a":"\xc3"}',
        b' {"a" : [ 1 ,\t2 ]\r\n} ', b'{\t"a":1}', b'{\n"a":1}', b'{\r"a":1}', b"{ }", b"[ ]",
        b'{"a":1 }', b'{"a" :1}', b'{"a" 1}', b'{a:1}', b'{1:1}', b'{"a":1]', b"[1}", b"[1,]",
        b'{"a":1,}', b"[1 2]", b"{}x", b"{} ", b"", b" ", b"x", b"[-]", b"[+1]", b"[.5]",
        b"{\xbb\xbf}", b'["\\x0041"]', b'{xa":1}', b'{"a"x1}',
        b"[01]", b"[1.]", b"[1e5]", b"[1E+5]", b"[1e-5]", b"[-0]", b"[-0.0]", b"[1e400]",
        b"[-1e400]", b"[NaN]", b"[Infinity]", b"[true,false,null]", b"[tru]", b"[nul]",
        b'["abc', b'["\x01"]', b'["\x1f"]', b'["\x7f"]', b'["\\x"]', b'["\\u12G4"]', b'["\\u12"]',
        b'["\\"\\\\\\/\\b\\f\\n\\r\\t"]', b'["\\u0041\\u00e9\\uffff"]', b'["\\ud83d\\ude00"]',
        b'["\\ud800"]', b'["\\udc00"]', b'["\\udc00x"]', b'["x\\udc00"]', b'["\\ud800\\ud800"]',
        b'["\\ud800x"]', b'{"a":1,"a":2}', b'{"a":{"a":1},"b":{"a":2}}',
        b"[" + b"1" * 4300 + b"]", b"[-" + b"1" * 4300 + b"]", b"[" + b"1" * 4301 + b"]",
        b"[1." + b"1" * 4400 + b"]",
        b"[" * 128 + b"]" * 128, b"[" * 129 + b"]" * 129,
        b'{"a":' * 128 + b"1" + b"}" * 128, b'{"a":' * 129 + b"1" + b"}" * 129,
        b"[" * nested + b"{}," * 20 + b"{}" + b"]" * nested,
        b"[" * nested + b"[]," * 20 + b"[]" + b"]" * nested,
        b"[" * nested + b"[1]," * 20 + b"[1]" + b"]" * nested,
        b"[" * nested + b'{"a":1},' * 20 + b'{"a":1}' + b"]" * nested,
        b'{"b":1,"a":2,"ab":3,"\xc3\xa4":4,"\xef\xbf\xbf":5,"\xf0\x9f\x98\x80":6,"A":7}',
        b'{"ab":1,"a":2}', b'{"a":1,"ab":2}',
        b'{"a":"\\"\\\\\\r\\t\\b\\f\\n~\\u007f\\u0001 \\u00e9"}',
        b'{"a":[9007199254740991,-9007199254740991]}', b'{"a":9007199254740992}',
        b'{"a":-9007199254740992}', b'{"a":[1.5,-2.25,1e16,1e-7,0.1,100.0,1E2]}',
        b'{"a":[{}],"b":[[]],"c":""}',
    ]  # fmt: skip


FLOATS = [
    "0.0", "-0.0", "1.0", "-1.5", "0.1", "1e-4", "1e-5", "0.00012", "1.5e-5", "-1e-7", "123.456",
    "2.5", "100.0", "1234567.0", "1e15", "9999999999999998.0", "1e16", "-1.2345e16", "1e21",
    "1e22", "12345678901234567890.0", "1.7976931348623157e308", "5e-324", "1e-300", "-2.5e-300",
    "0.5e-4", "123e-10",
]  # fmt: skip


def canonical_cases() -> dict[str, Any]:
    """What Python makes of each document of ``_documents`` and each float of ``FLOATS``."""
    documents = []
    for data in _documents():
        case: dict[str, Any] = {"data_b64": base64.b64encode(data).decode()}
        try:
            value = loads(data)
        except AffidavitError as e:
            case["code"] = e.code
            documents.append(case)
            continue
        case["py_compact"] = py_compact(value).decode()
        try:
            case["jcs"] = jcs(value).decode()
        except AffidavitError as e:
            case["jcs_code"] = e.code
        documents.append(case)
    return {"documents": documents, "floats": [[f, repr(float(f))] for f in FLOATS]}


def canonical_text() -> str:
    return json.dumps(canonical_cases(), indent=1, sort_keys=True) + "\n"


def text() -> str:
    return json.dumps(build(), indent=1, sort_keys=True) + "\n"


def subjects_text() -> str:
    return (
        "[\n" + ",\n".join(json.dumps(case, sort_keys=True) for case in subject_cases()) + "\n]\n"
    )


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    (folder / "fixtures.json").write_text(text())
    (folder / "subjects.json").write_text(subjects_text())
    (folder / "canonical.json").write_text(canonical_text())
