"""C2SP tlog-proof (verify/tlog/proof.py): the format, strictly, and verification under a policy.

The golden vectors (vectors/tlog/proofs/) are in test_proof_golden.py.
"""

from __future__ import annotations

import base64

import pytest
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import parse_checkpoint_body, parse_note
from affidavit.verify.tlog.policy import parse_policy
from affidavit.verify.tlog.proof import (
    HEADER,
    MAX_EXTRA_BYTES,
    MAX_PROOF_BYTES,
    MAX_PROOF_HASHES,
    STEPS,
    TlogProof,
    check_proof,
    format_proof,
    parse_proof,
    proof_leaf_hash,
    verify_proof,
    verify_proof_inclusion,
)

from tests.conftest import raises_code
from tests.verify.tlog.proof_fixtures import (
    UNKNOWN_KEY,
    UNKNOWN_NAME,
    ed_cosignature,
    ed_cosigner,
    log_vkey,
    policy_text,
    pq_cosignature,
    pq_cosigner,
    signed_checkpoint,
    vkey_of,
    with_lines,
)

ENTRIES = [f"entry {i}\n".encode() for i in range(7)]
LEAVES = [merkle.leaf_hash(e) for e in ENTRIES]
ROOT = merkle.root_of(LEAVES)
NOTE = signed_checkpoint(len(LEAVES), ROOT)
COSIGNED = with_lines(NOTE, [ed_cosignature(NOTE), pq_cosignature(NOTE)])
POLICY = parse_policy(
    policy_text(
        logs=[log_vkey()],
        witnesses=[("ed", vkey_of(ed_cosigner())), ("pq", vkey_of(pq_cosigner()))],
        groups=["both all ed pq"],
        quorum="both",
    )
)


def _proof(index: int = 3, *, note: str = COSIGNED, extra: bytes | None = None) -> TlogProof:
    return TlogProof(index, tuple(merkle.inclusion_proof(LEAVES, index)), note, extra)


def _text(index: int = 3, **kwargs: object) -> str:
    return format_proof(_proof(index, **kwargs))  # type: ignore[arg-type]


# -- the format -----------------------------------------------------------------------------------


def test_format_is_the_spec_layout() -> None:
    text = _text(extra=b"opaque")
    lines = text.split("\n")
    path = merkle.inclusion_proof(LEAVES, 3)
    assert lines[:3] == [HEADER, "extra " + base64.b64encode(b"opaque").decode(), "index 3"]
    assert lines[3 : 3 + len(path)] == [base64.b64encode(h).decode() for h in path]
    assert lines[3 + len(path)] == ""
    assert text.endswith("\n\n" + COSIGNED)


@pytest.mark.parametrize("extra", [None, b"x", bytes(range(256))])
def test_parse_reads_back_what_format_writes(extra: bytes | None) -> None:
    proof = _proof(extra=extra)
    assert parse_proof(format_proof(proof)) == proof
    assert parse_proof(format_proof(proof).encode()) == proof
    assert proof.to_text() == format_proof(proof)


def test_a_one_leaf_tree_has_no_proof_hashes() -> None:
    note = signed_checkpoint(1, LEAVES[0])
    proof = TlogProof(0, (), note)
    assert format_proof(proof) == f"{HEADER}\nindex 0\n\n{note}"
    assert parse_proof(format_proof(proof)) == proof
    policy = parse_policy(policy_text(logs=[log_vkey()]))
    assert verify_proof(proof, policy, entry=ENTRIES[0]).leaf_hash == LEAVES[0]


def _replace(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


GOOD = _text(extra=b"extra")
HASH0 = base64.b64encode(merkle.inclusion_proof(LEAVES, 3)[0]).decode()

MALFORMED: dict[str, str | bytes] = {
    "wrong-header": _replace(GOOD, HEADER, "c2sp.org/tlog-proof@v2"),
    "header-with-space": _replace(GOOD, HEADER, HEADER + " "),
    "crlf": GOOD.replace("\n", "\r\n", 3),
    "no-index": _replace(GOOD, "index 3\n", ""),
    "index-leading-zero": _replace(GOOD, "index 3", "index 03"),
    "index-negative": _replace(GOOD, "index 3", "index -3"),
    "index-plus": _replace(GOOD, "index 3", "index +3"),
    "index-two-spaces": _replace(GOOD, "index 3", "index  3"),
    "index-unicode-digit": _replace(GOOD, "index 3", "index \u0663"),
    "index-2^64": _replace(GOOD, "index 3", f"index {2**64}"),
    "extra-empty": _replace(GOOD, "extra " + base64.b64encode(b"extra").decode(), "extra "),
    "extra-not-base64": _replace(GOOD, "extra " + base64.b64encode(b"extra").decode(), "extra !"),
    "extra-after-index": _replace(
        _replace(GOOD, "extra ZXh0cmE=\n", ""), "index 3\n", "index 3\nextra ZXh0cmE=\n"
    ),
    "extra-too-large": format_proof(_proof()).replace(
        "index 3", "extra " + base64.b64encode(b"x" * (MAX_EXTRA_BYTES + 1)).decode() + "\nindex 3"
    ),
    "hash-31-bytes": _replace(GOOD, HASH0, base64.b64encode(bytes(31)).decode()),
    "hash-33-bytes": _replace(GOOD, HASH0, base64.b64encode(bytes(33)).decode()),
    "hash-not-canonical-base64": _replace(GOOD, HASH0, HASH0[:-2] + "R="),
    "hash-unpadded": _replace(GOOD, HASH0, HASH0.rstrip("=")),
    "hash-hex": _replace(GOOD, HASH0, "00" * 32),
    "too-many-hashes": _replace(GOOD, "index 3\n", "index 3\n" + (HASH0 + "\n") * 65),
    "no-empty-line": _replace(GOOD, "\n\n" + COSIGNED, "\n" + COSIGNED),
    "truncated-in-hashes": GOOD[: GOOD.index(HASH0) + len(HASH0)],
    "nothing-after-empty-line": GOOD[: GOOD.index("\n\n") + 2],
    "not-utf8": GOOD.encode().replace(b"index 3", b"index 3\xff"),
    "empty": "",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_proofs_are_refused(case: str) -> None:
    with raises_code("tlog.proof_malformed"):
        parse_proof(MALFORMED[case])


def test_a_proof_over_the_size_limit_is_refused() -> None:
    with raises_code("tlog.proof_malformed"):
        parse_proof(GOOD + "#" * MAX_PROOF_BYTES)
    assert MAX_PROOF_HASHES == 64


@pytest.mark.parametrize(
    "checkpoint",
    [
        "example.com/log\n7\n",  # no signature block
        NOTE.replace("\n7\n", "\n07\n", 1),  # checkpoint body malformed
        NOTE.replace("\u2014", "-", 1),  # signature line malformed
        NOTE + "\n",  # an empty line where a signature line belongs
    ],
)
def test_a_malformed_checkpoint_is_a_checkpoint_error(checkpoint: str) -> None:
    text = f"{HEADER}\nindex 0\n\n{checkpoint}"
    with raises_code("checkpoint.malformed"):
        parse_proof(text)


@pytest.mark.parametrize(
    "proof",
    [
        TlogProof(-1, (), NOTE),
        TlogProof(2**64, (), NOTE),
        TlogProof(0, (bytes(31),), NOTE),
        TlogProof(0, (bytes(32),) * 65, NOTE),
        TlogProof(0, (), NOTE, b""),
        TlogProof(0, (), NOTE, bytes(MAX_EXTRA_BYTES + 1)),
        TlogProof(0, (), "not a note\n"),
    ],
)
def test_format_refuses_what_parse_would_refuse(proof: TlogProof) -> None:
    with raises_code("usage.invalid"):
        format_proof(proof)


# -- the spec's example (tlog-proof "Format") -----------------------------------------------------
# The spec's own example is not in the checkout or ../shared (its signatures are elided, so it
# cannot verify anyway); its layout is checked through this twin with our own values.


def test_our_twin_of_the_spec_example_round_trips() -> None:
    # The same layout as the spec's example, with our own values: extra, index, five hashes,
    # a checkpoint with the log's and three witnesses' signature lines.
    hashes = [merkle.leaf_hash(bytes([i])) for i in range(5)]
    note = signed_checkpoint(109482, ROOT, origin="example.com/fancylog")
    for n in range(1, 4):
        note += ed_cosignature(note, UNKNOWN_KEY, f"witness{n}.example")
    text = (
        f"{HEADER}\nextra {base64.b64encode(b'age-v1.2.1-darwin-arm64.tar.gz').decode()}\n"
        "index 73894\n" + "".join(base64.b64encode(h).decode() + "\n" for h in hashes) + "\n" + note
    )
    proof = parse_proof(text)
    assert (proof.index, proof.path, proof.extra) == (
        73894,
        tuple(hashes),
        b"age-v1.2.1-darwin-arm64.tar.gz",
    )
    assert format_proof(proof) == text


# -- verification ---------------------------------------------------------------------------------


def test_a_proof_verifies_for_the_entry_and_for_its_leaf_hash() -> None:
    verified = verify_proof(_text(extra=b"context"), POLICY, entry=ENTRIES[3])
    assert verified.leaf_hash == LEAVES[3]
    assert verified.extra == b"context"
    assert verified.checkpoint.tree_size == len(LEAVES)
    assert verified.verified.witnesses == ("ed", "pq")
    document = verified.to_json()
    assert document["index"] == 3
    assert document["origin"] == "vectors.affidavit.test/tlog"
    assert document["witnesses"] == ["ed", "pq"]
    assert document["quorum"] == "both"
    assert document["extra_base64"] == base64.b64encode(b"context").decode()
    by_hash = verify_proof(_proof(), POLICY, leaf_hash=LEAVES[3])
    assert by_hash.leaf_hash == LEAVES[3]


@pytest.mark.parametrize("index", range(len(LEAVES)))
def test_every_index_verifies(index: int) -> None:
    assert verify_proof(_text(index), POLICY, entry=ENTRIES[index]).proof.index == index


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("entry", "tlog.entry_mismatch"),
        ("index", "tlog.entry_mismatch"),
        ("hash", "tlog.entry_mismatch"),
        ("index-beyond-size", "merkle.index_out_of_range"),
        ("hash-dropped", "merkle.bad_proof_length"),
        ("hash-added", "merkle.bad_proof_length"),
        ("cosignature-dropped", "tlog.quorum_not_met"),
        ("unknown-witness-only", "tlog.quorum_not_met"),
        ("size-edited", "checkpoint.signature_bad"),
    ],
)
def test_tampering_is_caught_with_its_code(change: str, code: str) -> None:
    proof, entry = _proof(), ENTRIES[3]
    path = list(proof.path)
    if change == "entry":
        entry = b"entry 3 edited\n"
    elif change == "index":
        proof = TlogProof(2, proof.path, proof.checkpoint)
    elif change == "hash":
        path[1] = bytes([path[1][0] ^ 1]) + path[1][1:]
        proof = TlogProof(3, tuple(path), proof.checkpoint)
    elif change == "index-beyond-size":
        proof = TlogProof(len(LEAVES), proof.path, proof.checkpoint)
    elif change == "hash-dropped":
        proof = TlogProof(3, tuple(path[:-1]), proof.checkpoint)
    elif change == "hash-added":
        proof = TlogProof(3, (*path, ROOT), proof.checkpoint)
    elif change == "cosignature-dropped":
        proof = _proof(note=with_lines(NOTE, [ed_cosignature(NOTE)]))
    elif change == "unknown-witness-only":
        proof = _proof(note=with_lines(NOTE, [ed_cosignature(NOTE, UNKNOWN_KEY, UNKNOWN_NAME)]))
    elif change == "size-edited":
        proof = _proof(note=COSIGNED.replace("\n7\n", "\n8\n", 1))
    with raises_code(code):
        verify_proof(format_proof(proof), POLICY, entry=entry)


def test_entry_mismatch_names_the_roots() -> None:
    with raises_code("tlog.entry_mismatch") as caught:
        verify_proof_inclusion(_proof(), LEAVES[2], parse_checkpoint_body(parse_note(NOTE).text))
    assert caught.value.details["expected"] == ROOT.hex()
    assert caught.value.details["index"] == 3


def test_leaf_hash_needs_exactly_one_source() -> None:
    assert proof_leaf_hash(entry=b"x") == merkle.leaf_hash(b"x")
    with raises_code("usage.invalid"):
        proof_leaf_hash()
    with raises_code("usage.invalid"):
        proof_leaf_hash(entry=b"x", leaf_hash=LEAVES[0])
    with raises_code("merkle.bad_hash_length"):
        proof_leaf_hash(leaf_hash=LEAVES[0][:31])
    with raises_code("usage.invalid"):
        check_proof(_text(), POLICY)


def test_check_proof_reports_every_step() -> None:
    report = check_proof(_text(), POLICY, entry=ENTRIES[3])
    assert report.verdict == "verified"
    assert (report.kind, report.subject["index"]) == ("tlog_proof", 3)
    assert [s.name for s in report.steps] == list(STEPS)
    assert all(s.status == "ok" for s in report.steps)
    assert report.steps[3].details["witnesses"] == ["ed", "pq"]


def test_check_proof_stops_at_the_first_failure() -> None:
    note = with_lines(NOTE, [ed_cosignature(NOTE)])
    report = check_proof(_text(note=note), POLICY, entry=ENTRIES[3])
    assert (report.verdict, report.code) == ("failed", "tlog.quorum_not_met")
    assert report.subject == {}
    assert [(s.name, s.status) for s in report.steps] == [
        ("parse", "ok"),
        ("leaf_hash", "ok"),
        ("log_signature", "ok"),
        ("cosignatures", "ok"),
        ("quorum", "failed"),
        ("inclusion", "not_checked"),
    ]
    assert report.steps[4].code == "tlog.quorum_not_met"
    unreadable = check_proof(MALFORMED["wrong-header"], POLICY, entry=ENTRIES[3])
    assert unreadable.verdict == "unreadable"
    assert [s.status for s in unreadable.steps] == ["failed"] + ["not_checked"] * 5


def test_the_extra_data_is_not_authenticated() -> None:
    # Any extra data, or none, verifies: it is carried, never trusted.
    for extra in (None, b"a", b"b"):
        assert verify_proof(_proof(extra=extra), POLICY, entry=ENTRIES[3]).extra == extra


# -- issue 36: what the first mutation run showed no test judged ----------------------------------


def test_check_proof_document_for_the_entry_and_for_its_leaf_hash() -> None:
    log_key = parse_note(NOTE).signatures[0]
    label = f"{log_key.name}+{log_key.key_id.hex()}"
    for given, source in (({"entry": ENTRIES[3]}, "entry"), ({"leaf_hash": LEAVES[3]}, "given")):
        document = check_proof(_text(), POLICY, source="p.txt", **given).to_json()
        assert document == {
            "kind": "tlog_proof",
            "source": "p.txt",
            "verdict": "verified",
            "verified": True,
            "index": 3,
            "leaf_hash": LEAVES[3].hex(),
            "origin": "vectors.affidavit.test/tlog",
            "tree_size": 7,
            "root_hash": ROOT.hex(),
            "log_keys": [label],
            "witnesses": ["ed", "pq"],
            "quorum": "both",
            "ignored_signatures": 0,
            "extra_base64": None,
            "steps": [
                {"name": "parse", "status": "ok", "details": {"index": 3, "proof_hashes": 3}},
                {
                    "name": "leaf_hash",
                    "status": "ok",
                    "details": {"leaf_hash": LEAVES[3].hex(), "source": source},
                },
                {
                    "name": "log_signature",
                    "status": "ok",
                    "details": {"origin": "vectors.affidavit.test/tlog", "log_keys": [label]},
                },
                {"name": "cosignatures", "status": "ok", "details": {"witnesses": ["ed", "pq"]}},
                {"name": "quorum", "status": "ok", "details": {"quorum": "both"}},
                {"name": "inclusion", "status": "ok", "details": {"index": 3, "tree_size": 7}},
            ],
        }
    failed = check_proof(MALFORMED["wrong-header"], POLICY, entry=ENTRIES[3], source="p.txt")
    assert (failed.verdict, failed.to_json()["source"]) == ("unreadable", "p.txt")


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_malformed_proof_says_why(case: str) -> None:
    with raises_code("tlog.proof_malformed") as caught:
        parse_proof(MALFORMED[case])
    assert isinstance(caught.value.message, str)
    assert caught.value.message


def test_the_size_limit_counts_utf8_bytes_and_is_inclusive() -> None:
    start = f"{HEADER}\nindex 0\n\n"
    # exactly the limit: read on, and refused later as a checkpoint (a note is at most 1 MiB)
    exact = start + "x" * (MAX_PROOF_BYTES - len(start))
    with raises_code("checkpoint.malformed"):
        parse_proof(exact)
    with raises_code("checkpoint.malformed"):
        parse_proof(exact.encode())
    # 1.5 M characters of two bytes each: within the limit in characters, not in bytes
    wide = start + "\u00e9" * (3 * MAX_PROOF_BYTES // 4)
    assert len(wide) < MAX_PROOF_BYTES < len(wide.encode())
    with raises_code("tlog.proof_malformed") as caught:
        parse_proof(wide)
    assert caught.value.message


def test_the_extra_data_and_path_limits_are_inclusive() -> None:
    largest = _proof(extra=bytes(MAX_EXTRA_BYTES))
    assert parse_proof(format_proof(largest)).extra == bytes(MAX_EXTRA_BYTES)
    longest = TlogProof(0, (bytes(32),) * MAX_PROOF_HASHES, NOTE)
    assert parse_proof(format_proof(longest)).path == longest.path


@pytest.mark.parametrize(
    "proof",
    [
        TlogProof(-1, (), NOTE),
        TlogProof(0, (bytes(32),) * 65, NOTE),
        TlogProof(0, (), NOTE, b""),
        TlogProof(0, (), "not a note\n"),
    ],
)
def test_format_refusals_say_why(proof: TlogProof) -> None:
    with raises_code("usage.invalid") as caught:
        format_proof(proof)
    assert isinstance(caught.value.message, str)
    assert caught.value.message


def test_leaf_hash_and_entry_mismatch_refusals_say_why() -> None:
    for call, code in (
        (proof_leaf_hash, "usage.invalid"),
        (lambda: proof_leaf_hash(leaf_hash=LEAVES[0][:31]), "merkle.bad_hash_length"),
        (
            lambda: check_proof(_text(), POLICY, entry=ENTRIES[3], leaf_hash=LEAVES[3]),
            "usage.invalid",
        ),
    ):
        with raises_code(code) as caught:
            call()
        assert isinstance(caught.value.message, str)
        assert caught.value.message
    checkpoint = parse_checkpoint_body(parse_note(NOTE).text)
    with raises_code("tlog.entry_mismatch") as caught:
        verify_proof_inclusion(_proof(), LEAVES[2], checkpoint)
    assert caught.value.details == {
        "expected": ROOT.hex(),
        "computed": merkle.root_from_inclusion_proof(LEAVES[2], 3, 7, _proof().path).hex(),
        "index": 3,
        "leaf_hash": LEAVES[2].hex(),
    }
    assert caught.value.message
