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
``subjects.json``: leaves with the kind and rows ``subjects`` files them under (below).
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
from affidavit.verify.json.canonical import jcs, py_compact

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
    for data in written + _mutants(written, random.Random(SUBJECT_SEED))[:SUBJECT_MUTANTS]:
        rows = subjects(data)
        cases.append(
            {
                "data_b64": base64.b64encode(data).decode(),
                "kind": rows[0].kind,
                "rows": sorted([row.field, row.digest] for row in rows),
            }
        )
    return cases


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
