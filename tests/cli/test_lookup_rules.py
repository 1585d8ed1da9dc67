"""The lookup's rules offline (issue 36 mutation campaign; registry/clients/lookup.py
``check_answer``, docs/transparency.md "Lookup"): an answer is ``verified`` only when its
checkpoint verifies under a trusted key, each proof leads to that root and each leaf is filed, as
the kind the registry says, under every field it claims for the hash asked. The answers are built
from a real log (TEST-ONLY key) and changed one part at a time; no registry process is needed."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients.lookup import Answer, Entry, check_answer, parse_page
from affidavit.registry.index import name_digest
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verifier_key_string
from affidavit.verify.crypto.trusted_keys import TrustedKey
from affidavit.verify.scitt.statement import parse_statement
from affidavit.verify.trust import TrustRoot

from tests.conftest import raises_code
from tests.verify.scitt.support import LOG_KEY, OTHER, statement

ORIGIN = "lookup.test/log"
SIGNED = statement(subject="pkg:lookup@1")
ENTRY_OF_SIGNED = parse_statement(SIGNED).leaf_entry  # a 32-byte registration entry
LEAVES = [b"raw bytes, no kind", SIGNED, ENTRY_OF_SIGNED]
TRUST = TrustRoot(keys=(TrustedKey(LOG_KEY.public_key, "log.pub", "base64"),))
SUBJECT = name_digest("pkg:lookup@1")


@pytest.fixture(scope="module")
def log() -> dict[str, Any]:
    """The three leaves logged, the checkpoint and each leaf's proof."""
    path = Path(tempfile.mkdtemp()) / "log.db"
    tlog = TransparencyLog.create(path, LOG_KEY, ORIGIN)
    try:
        tlog.append(LEAVES)
        note = tlog.checkpoint()
        proofs = [tlog.inclusion_proof(i, 3) for i in range(3)]
    finally:
        tlog.close()
    return {"note": note, "proofs": proofs, "root": proofs[0].root_hash}


def _entry(log: dict[str, Any], index: int, kind: str, *matched: str, **changes: Any) -> Entry:
    fields: dict[str, Any] = {
        "index": index,
        "leaf_hash": hashlib.sha256(b"\x00" + LEAVES[index]).hexdigest(),
        "kind": kind,
        "matched": matched,
        "tree_size": 3,
        "hashes": tuple(h.hex() for h in log["proofs"][index].path),
    }
    fields.update(changes)
    return Entry(**fields)


def _check(
    log: dict[str, Any],
    digest: str,
    *entries: Entry,
    leaves: dict[int, bytes | None] | None = None,
    trust: TrustRoot = TRUST,
    truncated: bool = False,
) -> dict[str, Any]:
    page = Answer(log["note"], entries, None)
    read = {e.index: LEAVES[e.index] for e in entries} if leaves is None else leaves
    result = check_answer("https://r.test", digest, [page], read, trust, truncated=truncated)
    return result.to_json()


def _failed(document: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(s["name"], s.get("code")) for s in document["steps"] if s["status"] != "ok"]


def test_a_proven_entry_is_verified_and_reported(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    page = Answer(log["note"], (_entry(log, 0, "raw", "data_sha256"),), None)
    result = check_answer("https://r.test", digest, [page], {0: LEAVES[0]}, TRUST)
    key_name = f"{ORIGIN}+{LOG_KEY.public_key.key_id_c2sp(ORIGIN).hex()}"
    assert result.to_json() == {
        "kind": "lookup",
        "source": "https://r.test",
        "verdict": "verified",
        "verified": True,
        "hash": digest,
        "found": True,
        "entries": [
            {
                "index": 0,
                "leaf_hash": hashlib.sha256(b"\x00" + LEAVES[0]).hexdigest(),
                "kind": "raw",
                "matched": ["data_sha256"],
                "tree_size": 3,
            }
        ],
        "checkpoint": {
            "origin": ORIGIN,
            "tree_size": 3,
            "root_hash": log["root"].hex(),
            "verified_by": [key_name],
            "other_signers": [],
        },
        "truncated": False,
        "steps": [
            {"name": "checkpoint", "status": "ok", "details": {"tree_size": 3, "origin": ORIGIN}},
            {"name": "inclusion 0", "status": "ok"},
            {
                "name": "leaf 0",
                "status": "ok",
                "details": {"kind": "raw", "matched": ["data_sha256"]},
            },
            {"name": "found", "status": "ok", "details": {"entries": 1}},
        ],
    }
    truncated = _check(log, digest, _entry(log, 0, "raw", "data_sha256"), truncated=True)
    assert (truncated["verdict"], truncated["truncated"]) == ("verified", True)


def test_a_verifier_key_is_trusted_as_it_is(log: dict[str, Any]) -> None:
    vkey = verifier_key_string(ORIGIN, LOG_KEY.public_key)
    trusted = TrustedKey(LOG_KEY.public_key, "log.vkey", "vkey", verifier=parse_verifier_key(vkey))
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    entry = _entry(log, 0, "raw", "data_sha256")
    assert _check(log, digest, entry, trust=TrustRoot(keys=(trusted,)))["verdict"] == "verified"
    renamed = verifier_key_string("another.name/log", LOG_KEY.public_key)
    other = TrustedKey(LOG_KEY.public_key, "o.vkey", "vkey", verifier=parse_verifier_key(renamed))
    document = _check(log, digest, entry, trust=TrustRoot(keys=(other,)))
    assert _failed(document) == [("checkpoint", "checkpoint.no_trusted_signature")]


def test_a_checkpoint_that_is_not_a_note_is_malformed(log: dict[str, Any]) -> None:
    """Under a bare key as under a verifier key: the registry's note is malformed, the
    caller's input is not (exact code)."""
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    page = Answer("not a signed note", (_entry(log, 0, "raw", "data_sha256"),), None)
    document = check_answer("https://r.test", digest, [page], {0: LEAVES[0]}, TRUST).to_json()
    assert _failed(document) == [("checkpoint", "checkpoint.malformed")]
    assert document["verdict"] == "failed"


@pytest.mark.parametrize(
    ("leaf", "digest", "message"),
    [
        ((0, "scitt", "data_sha256"), "data", "the leaf is a raw entry, not a scitt"),
        ((0, "raw", "leaf_hash"), "data",
         "the leaf holds {digest} under ['data_sha256'], not ['leaf_hash']"),
        ((0, "raw", "data_sha256"), "0" * 64,
         "the leaf holds {digest} under no field, not ['data_sha256']"),
        ((1, "scitt", "subject", "issuer"), "subject",
         "the leaf holds {digest} under ['subject'], not ['issuer']"),
    ],
)  # fmt: skip
def test_a_leaf_not_filed_as_the_answer_says_is_not_about(
    log: dict[str, Any], leaf: tuple[Any, ...], digest: str, message: str
) -> None:
    index, kind, *matched = leaf
    digest = {"data": hashlib.sha256(LEAVES[index]).hexdigest(), "subject": SUBJECT}.get(
        digest, digest
    )
    document = _check(log, digest, _entry(log, index, kind, *matched))
    assert (document["verdict"], document["found"], document["entries"]) == ("failed", False, [])
    assert _failed(document) == [(f"leaf {index}", "lookup.not_about")]
    assert document["message"] == f"leaf {index}: " + message.format(digest=digest)


def test_a_registration_entry_is_about_a_subject_only_with_its_statement(
    log: dict[str, Any],
) -> None:
    proven = _entry(log, 2, "digest", "subject", statement=SIGNED)
    assert _check(log, SUBJECT, proven)["verdict"] == "verified"
    for statement_bytes in (None, SIGNED + b"\x00", statement(subject="pkg:other@1")):
        unproven = _entry(log, 2, "digest", "subject", statement=statement_bytes)
        assert _failed(_check(log, SUBJECT, unproven)) == [("leaf 2", "lookup.not_about")]
    by_hash = _entry(log, 2, "digest", "statement_hash")
    assert _check(log, ENTRY_OF_SIGNED.hex(), by_hash)["verdict"] == "verified"


def test_a_leaf_appended_by_hash_only_is_about_its_leaf_hash_only(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(b"\x00" + LEAVES[0]).hexdigest()
    hash_only = _entry(log, 0, "hash_only", "leaf_hash")
    assert _check(log, digest, hash_only, leaves={0: None})["verdict"] == "verified"
    raw = _entry(log, 0, "raw", "leaf_hash")
    assert _failed(_check(log, digest, raw, leaves={0: None})) == [("leaf 0", "lookup.not_about")]


def test_leaf_bytes_that_do_not_hash_to_the_leaf_fail(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    document = _check(log, digest, _entry(log, 0, "raw", "data_sha256"), leaves={0: LEAVES[1]})
    assert _failed(document) == [("leaf 0", "lookup.leaf_mismatch")]
    assert document["steps"][2] == {
        "name": "leaf 0",
        "status": "failed",
        "code": "lookup.leaf_mismatch",
        "message": "leaf 0's bytes do not hash to the leaf hash of the answer",
        "expected": hashlib.sha256(b"\x00" + LEAVES[0]).hexdigest(),
    }


def test_a_proof_for_another_size_or_root_fails_before_its_leaf(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    other_size = _entry(log, 0, "raw", "data_sha256", tree_size=2)
    document = _check(log, digest, other_size)
    assert _failed(document) == [("inclusion 0", "lookup.size_mismatch")]
    assert document["message"] == (
        "inclusion 0: the proof of leaf 0 is for size 2, the checkpoint's is 3"
    )
    other_index = dataclasses.replace(_entry(log, 0, "raw", "data_sha256"), index=1)
    document = _check(log, digest, other_index, leaves={1: LEAVES[0]})
    assert _failed(document) == [("inclusion 1", "merkle.root_mismatch")]
    assert [s["name"] for s in document["steps"]] == ["checkpoint", "inclusion 1", "found"]


def test_a_leaf_that_was_not_read_is_not_checked(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    document = _check(log, digest, _entry(log, 0, "raw", "data_sha256"), leaves={})
    assert (document["verdict"], document["found"], document.get("code")) == (
        "unanchored",
        False,
        None,
    )
    assert document["message"] == (
        "leaf 0: not read: an earlier step failed, so the lookup read no more"
    )
    assert document["steps"][1:] == [
        {"name": "inclusion 0", "status": "ok"},
        {
            "name": "leaf 0",
            "status": "not_checked",
            "message": "not read: an earlier step failed, so the lookup read no more",
        },
        {"name": "found", "status": "ok", "details": {"entries": 1}},
    ]


def test_every_page_is_checked_and_named(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    entry = _entry(log, 0, "raw", "data_sha256")
    pages = [Answer(log["note"], (entry,), 1), Answer(log["note"], (), None)]
    document = check_answer("https://r.test", digest, pages, {0: LEAVES[0]}, TRUST).to_json()
    assert document["verdict"] == "verified"
    assert [s["name"] for s in document["steps"]] == [
        "checkpoint",
        "inclusion 0",
        "leaf 0",
        "checkpoint (page 2)",
        "found",
    ]


def test_a_checkpoint_under_no_trusted_key_proves_nothing(log: dict[str, Any]) -> None:
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    entry = _entry(log, 0, "raw", "data_sha256")
    other = TrustRoot(keys=(TrustedKey(OTHER.public_key, "other.pub", "base64"),))
    document = _check(log, digest, entry, trust=other)
    assert (document["verdict"], document["found"], document["checkpoint"]) == (
        "failed",
        False,
        None,
    )
    assert _failed(document) == [("checkpoint", "checkpoint.no_trusted_signature")]
    untrusted = _check(log, digest, entry, trust=TrustRoot())
    assert (untrusted["verdict"], untrusted["found"]) == ("unanchored", False)
    assert untrusted["entries"] == []
    assert untrusted["steps"][0] == {
        "name": "checkpoint",
        "status": "not_checked",
        "message": "no trusted log key (fail closed)",
    }


def test_no_entry_under_a_verified_checkpoint_is_not_found(log: dict[str, Any]) -> None:
    document = _check(log, "0" * 64)
    assert (document["verdict"], document["code"], document["found"]) == (
        "unanchored",
        "lookup.not_found",
        False,
    )
    assert document["checkpoint"]["tree_size"] == 3
    assert document["steps"][-1] == {
        "name": "found",
        "status": "not_checked",
        "message": "no entry about the hash under the verified checkpoint; a lookup proves "
        "presence only (replaying the log proves absence)",
    }


def test_each_entry_of_a_page_is_checked_after_one_fails(log: dict[str, Any]) -> None:
    """A failed proof, or a leaf not read, does not hide the entries after it."""
    digest = hashlib.sha256(LEAVES[0]).hexdigest()
    bad = _entry(log, 0, "raw", "data_sha256", tree_size=2)
    unread = _entry(log, 0, "raw", "data_sha256")
    good = _entry(log, 2, "digest", "data_sha256")
    names = ["checkpoint", "inclusion 0", "inclusion 2", "leaf 2", "found"]
    document = _check(log, digest, bad, good, leaves={2: LEAVES[2]})
    assert [s["name"] for s in document["steps"]] == names
    assert _failed(document) == [
        ("inclusion 0", "lookup.size_mismatch"),
        ("leaf 2", "lookup.not_about"),
    ]
    unread_first = _check(log, digest, unread, good, leaves={2: LEAVES[2]})
    assert [s["name"] for s in unread_first["steps"]] == [
        "checkpoint",
        "inclusion 0",
        "leaf 0",
        "inclusion 2",
        "leaf 2",
        "found",
    ]


# -- the answer read strictly (specs/registry-v1.yaml Lookup) -------------------------------

HEX = "ab" * 32
ANSWERED: dict[str, Any] = {
    "index": 0,
    "leaf_hash": HEX,
    "kind": "raw",
    "matched": ["data_sha256"],
    "inclusion_proof": {"tree_size": 3, "hashes": [HEX]},
}


def _page(*entries: dict[str, Any], **fields: Any) -> bytes:
    document = {"checkpoint": "note", "entries": list(entries) or [ANSWERED], **fields}
    return json.dumps(document).encode()


def test_a_page_is_read_whole() -> None:
    with_statement = {**ANSWERED, "index": 2, "statement": "AAEC"}
    answer = parse_page(_page(ANSWERED, with_statement, next_cursor=7))
    first = Entry(0, HEX, "raw", ("data_sha256",), 3, (HEX,))
    assert answer == Answer("note", (first, dataclasses.replace(first, index=2,
                            statement=b"\x00\x01\x02")), 7)  # fmt: skip
    assert parse_page(_page()).next_cursor is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[]", "not a JSON object"),
        (b'{"checkpoint": "n", "checkpoint": "n"}', "not strict JSON: json.duplicate_key"),
        (json.dumps({"entries": []}).encode(), "entries or checkpoint missing"),
        (json.dumps({"checkpoint": "n", "entries": {}}).encode(), "entries or checkpoint missing"),
        (_page(entries=[1]), "an entry is not an object"),
        (_page({**ANSWERED, "inclusion_proof": []}), "an entry lacks inclusion_proof or matched"),
        (_page({**ANSWERED, "matched": []}), "an entry lacks inclusion_proof or matched"),
        (_page({**ANSWERED, "matched": "x"}), "an entry lacks inclusion_proof or matched"),
        (_page({**ANSWERED, "inclusion_proof": {"tree_size": 3, "hashes": HEX}}),
         "inclusion_proof.hashes is not a list of 64-hex hashes"),
        (_page({**ANSWERED, "inclusion_proof": {"tree_size": 3, "hashes": [HEX.upper()]}}),
         "inclusion_proof.hashes is not a list of 64-hex hashes"),
        (_page({**ANSWERED, "leaf_hash": "x"}), "an entry's leaf_hash or kind is malformed"),
        (_page({**ANSWERED, "kind": 1}), "an entry's leaf_hash or kind is malformed"),
        (_page({**ANSWERED, "matched": ["a", 1]}), "matched is not a list of field names"),
        (_page({**ANSWERED, "statement": "!!"}), "an entry's statement is not base64"),
        (_page({**ANSWERED, "statement": 5}), "an entry's statement is not base64"),
        (_page({**ANSWERED, "index": -1}), "index is not a non-negative integer"),
        (_page({**ANSWERED, "index": True}), "index is not a non-negative integer"),
        (_page({**ANSWERED, "inclusion_proof": {"tree_size": "3", "hashes": [HEX]}}),
         "inclusion_proof.tree_size is not a non-negative integer"),
        (_page(next_cursor=-1), "next_cursor is not a non-negative integer"),
        (_page(next_cursor=1.0), "next_cursor is not a non-negative integer"),
    ],
)  # fmt: skip
def test_an_answer_of_another_shape_is_a_bad_response(data: bytes, message: str) -> None:
    with raises_code("registry.bad_response") as info:
        parse_page(data)
    assert info.value.message.startswith(f"lookup answer: {message}")


def test_a_page_is_read_up_to_8_mib() -> None:
    """docs/transparency.md "Lookup": a page is bounded at 8 MiB, whoever hands it in."""
    page = _page()
    limit = 8 * 1024 * 1024
    assert parse_page(page + b" " * (limit - len(page))).checkpoint == "note"
    with raises_code("registry.bad_response") as info:
        parse_page(page + b" " * (limit - len(page) + 1))
    assert info.value.message.startswith("lookup answer: not strict JSON: json.")
