"""Golden vectors for tlog-policies and tlog-proofs (vectors/tlog/proofs/).

This file is the deterministic generator: TEST-ONLY keys derived from fixed labels, Ed25519's
deterministic signatures, fixed timestamps. ML-DSA-44 signing is randomized, so an ML-DSA-44
cosignature already in the folder is reused whenever it still verifies over the same message
(:class:`~tests.verify.tlog.proof_fixtures.SignatureReuse`); the files are then stable byte for
byte. ``UPDATE_GOLDENS=1`` rewrites them; otherwise each is byte-compared, and every case is run
from the files on disk to check its expected outcome (an exact error code, or ``ok``).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from affidavit.verify.tlog.policy import parse_policy
from affidavit.verify.tlog.proof import TlogProof, format_proof, verify_proof

from tests.conftest import VECTORS, assert_golden
from tests.verify.tlog.proof_fixtures import (
    ED_NAME,
    LOG,
    ORIGIN,
    OTHER_LOG,
    PQ_LABEL,
    PQ_NAME,
    TIMESTAMP,
    UNKNOWN_KEY,
    UNKNOWN_NAME,
    SignatureReuse,
    ed_cosignature,
    ed_cosigner,
    log_vkey,
    pq_cosignature,
    pq_cosigner,
    signed_checkpoint,
    vkey_of,
    with_lines,
)

FOLDER = VECTORS / "tlog" / "proofs"
REUSE = SignatureReuse(sorted(FOLDER.glob("*.t*")))
ENTRIES = [f"affidavit tlog-proof vector entry {i}\n".encode() for i in range(7)]
LEAVES = [merkle.leaf_hash(entry) for entry in ENTRIES]
ROOT = merkle.root_of(LEAVES)
INDEX = 3
PATH = tuple(merkle.inclusion_proof(LEAVES, INDEX))
EXTRA = b"TEST-ONLY extra data: carried, never authenticated"
OTHER_ORIGIN = "vectors.affidavit.test/other"

POLICY = f"""# TEST-ONLY tlog-policy of the Affidavit tlog-proof vectors (keys from public labels).
log {log_vkey()} https://log.affidavit.test/

witness ed {vkey_of(ed_cosigner())}
witness pq {vkey_of(pq_cosigner())}
group both all ed pq
quorum both
"""


def _cosigned(note: str, *, ed: bool = True, pq: bool = True) -> str:
    lines = [ed_cosignature(note)] if ed else []
    if pq:
        lines.append(pq_cosignature(note, reuse=REUSE))
    return with_lines(note, lines)


NOTE = _cosigned(signed_checkpoint(len(LEAVES), ROOT))


def _proof(index: int = INDEX, path: tuple[bytes, ...] = PATH, note: str = NOTE) -> bytes:
    return format_proof(TlogProof(index, path, note, EXTRA)).encode()


def _flip(value: bytes) -> bytes:
    return bytes([value[0] ^ 1]) + value[1:]


def _retimed(note: str) -> str:
    """``note`` with the Ed25519 cosignature's timestamp edited (signature unchanged)."""
    cosigner = ed_cosigner()
    head, _, block = note.partition("\n\n")
    lines = []
    for line in block.splitlines(keepends=True):
        if not line.startswith(f"\u2014 {ED_NAME} "):
            lines.append(line)
            continue
        blob = bytearray(base64.b64decode(line.split(" ")[2]))
        blob[4:12] = (TIMESTAMP + 1).to_bytes(8, "big")
        assert bytes(blob[:4]) == cosigner.key_id
        lines.append(f"\u2014 {ED_NAME} {base64.b64encode(bytes(blob)).decode()}\n")
    return head + "\n\n" + "".join(lines)


def _policy_edit(old: str, new: str) -> bytes:
    assert old in POLICY
    return POLICY.replace(old, new, 1).encode()


ED_LINE = f"witness ed {vkey_of(ed_cosigner())}\n"
PQ_LINE = f"witness pq {vkey_of(pq_cosigner())}\n"

# file name -> bytes
FILES: dict[str, bytes] = {
    "policy.txt": POLICY.encode(),
    "entry.txt": ENTRIES[INDEX],
    "entry-edited.txt": ENTRIES[INDEX].replace(b"entry", b"ENTRY"),
    "checkpoint.txt": NOTE.encode(),
    "proof.tlog-proof": _proof(),
    "proof-index-edited.tlog-proof": _proof(index=INDEX - 1),
    "proof-hash-edited.tlog-proof": _proof(path=(PATH[0], _flip(PATH[1]), *PATH[2:])),
    "proof-hash-dropped.tlog-proof": _proof(path=PATH[:-1]),
    "proof-index-beyond-size.tlog-proof": _proof(index=len(LEAVES)),
    "proof-cosignature-dropped.tlog-proof": _proof(
        note=_cosigned(signed_checkpoint(len(LEAVES), ROOT), pq=False)
    ),
    "proof-unknown-witness-only.tlog-proof": _proof(
        note=with_lines(
            signed_checkpoint(len(LEAVES), ROOT),
            [ed_cosignature(signed_checkpoint(len(LEAVES), ROOT), UNKNOWN_KEY, UNKNOWN_NAME)],
        )
    ),
    "proof-log-key-not-in-policy.tlog-proof": _proof(
        note=_cosigned(signed_checkpoint(len(LEAVES), ROOT, key=OTHER_LOG))
    ),
    "proof-origin-mismatch.tlog-proof": _proof(
        note=_cosigned(signed_checkpoint(len(LEAVES), ROOT, origin=OTHER_ORIGIN))
    ),
    "proof-cosignature-timestamp-edited.tlog-proof": _proof(note=_retimed(NOTE)),
    "proof-checkpoint-size-edited.tlog-proof": _proof(note=NOTE.replace("\n7\n", "\n8\n", 1)),
    "proof-index-leading-zero.tlog-proof": _proof().replace(b"\nindex 3\n", b"\nindex 03\n"),
    "proof-wrong-header.tlog-proof": _proof().replace(b"@v1\n", b"@v2\n", 1),
    "policy-unknown-line.txt": _policy_edit("quorum both", "threshold both"),
    "policy-log-key-malformed.txt": _policy_edit(log_vkey(), log_vkey()[:-4] + "AAAA"),
    "policy-witness-key-is-a-log-key.txt": _policy_edit(ED_LINE, f"witness ed {log_vkey()}\n"),
    "policy-witness-extra-item.txt": _policy_edit(ED_LINE, ED_LINE[:-1] + " https://w/ more\n"),
    "policy-group-threshold-above-n.txt": _policy_edit("both all", "both 3"),
    "policy-group-later-name.txt": _policy_edit(
        ED_LINE + PQ_LINE + "group both all ed pq\n", ED_LINE + "group both all ed pq\n" + PQ_LINE
    ),
    "policy-group-member-none.txt": _policy_edit("all ed pq", "all ed pq none"),
    "policy-member-listed-twice.txt": _policy_edit(
        "group both all ed pq\n", "group one any ed\ngroup both all ed pq\n"
    ),
    "policy-duplicate-witness-key.txt": _policy_edit(
        PQ_LINE, PQ_LINE + f"witness ed-again {vkey_of(ed_cosigner(name='other.example'))}\n"
    ),
    "policy-duplicate-log-key.txt": _policy_edit(
        "\nwitness ed", f"log {log_vkey(LOG, OTHER_ORIGIN)}\n\nwitness ed"
    ),
    "policy-name-redefined.txt": _policy_edit("group both", "group ed"),
    "policy-no-quorum.txt": _policy_edit("quorum both\n", ""),
    "policy-two-quorums.txt": _policy_edit("quorum both\n", "quorum both\nquorum none\n"),
    "policy-quorum-undefined.txt": _policy_edit("quorum both", "quorum all"),
    "policy-crlf-line-ends.txt": POLICY.replace("\n", "\r\n").encode(),
}

# (id, proof file, entry file, policy file, expected, clause)
PROOF_CASES: list[tuple[str, str, str, str, str, str]] = [
    ("proof-valid", "proof.tlog-proof", "entry.txt", "policy.txt", "ok",
     "c2sp tlog-proof: verifying a tlog proof"),
    ("entry-edited", "proof.tlog-proof", "entry-edited.txt", "policy.txt", "tlog.entry_mismatch",
     "tlog-proof step 4: the inclusion binds the leaf hash"),
    ("index-edited", "proof-index-edited.tlog-proof", "entry.txt", "policy.txt",
     "tlog.entry_mismatch", "tlog-proof step 4"),
    ("proof-hash-edited", "proof-hash-edited.tlog-proof", "entry.txt", "policy.txt",
     "tlog.entry_mismatch", "tlog-proof step 4"),
    ("proof-hash-dropped", "proof-hash-dropped.tlog-proof", "entry.txt", "policy.txt",
     "merkle.bad_proof_length", "RFC 9162 §2.1.3.2"),
    ("index-beyond-size", "proof-index-beyond-size.tlog-proof", "entry.txt", "policy.txt",
     "merkle.index_out_of_range", "RFC 9162 §2.1.3.2"),
    ("cosignature-dropped", "proof-cosignature-dropped.tlog-proof", "entry.txt", "policy.txt",
     "tlog.quorum_not_met", "tlog-policy: the quorum"),
    ("unknown-witness-only", "proof-unknown-witness-only.tlog-proof", "entry.txt", "policy.txt",
     "tlog.quorum_not_met", "tlog-cosignature: unknown cosigners are ignored"),
    ("log-key-not-in-policy", "proof-log-key-not-in-policy.tlog-proof", "entry.txt",
     "policy.txt", "checkpoint.no_trusted_signature", "tlog-proof step 2; signed-note"),
    ("origin-mismatch", "proof-origin-mismatch.tlog-proof", "entry.txt", "policy.txt",
     "tlog.log_untrusted", "tlog-policy: the log's key name is its origin"),
    ("cosignature-timestamp-edited", "proof-cosignature-timestamp-edited.tlog-proof",
     "entry.txt", "policy.txt", "tlog.cosignature_bad", "tlog-cosignature: the time is signed"),
    ("checkpoint-size-edited", "proof-checkpoint-size-edited.tlog-proof", "entry.txt",
     "policy.txt", "checkpoint.signature_bad", "c2sp signed-note"),
    ("index-leading-zero", "proof-index-leading-zero.tlog-proof", "entry.txt", "policy.txt",
     "tlog.proof_malformed", "tlog-proof: no leading zeroes"),
    ("wrong-header", "proof-wrong-header.tlog-proof", "entry.txt", "policy.txt",
     "tlog.proof_malformed", "tlog-proof: the first line"),
]  # fmt: skip

# (id, policy file, expected line of the error, clause)
POLICY_CASES: list[tuple[str, str, int, str]] = [
    ("policy-unknown-line", "policy-unknown-line.txt", 7, "tlog-policy: structure"),
    ("policy-log-key-malformed", "policy-log-key-malformed.txt", 2, "signed-note: verifier keys"),
    ("policy-witness-key-is-a-log-key", "policy-witness-key-is-a-log-key.txt", 4,
     "tlog-policy: witness keys are cosigner keys"),
    ("policy-witness-extra-item", "policy-witness-extra-item.txt", 4,
     "tlog-policy: defining a witness"),
    ("policy-group-threshold-above-n", "policy-group-threshold-above-n.txt", 6,
     "tlog-policy: 1 <= k <= n"),
    ("policy-group-later-name", "policy-group-later-name.txt", 5,
     "tlog-policy: names defined on preceding lines"),
    ("policy-group-member-none", "policy-group-member-none.txt", 6,
     "tlog-policy: none is not a group member"),
    ("policy-member-listed-twice", "policy-member-listed-twice.txt", 7,
     "tlog-policy: a name is listed as a group member at most once"),
    ("policy-duplicate-witness-key", "policy-duplicate-witness-key.txt", 6,
     "tlog-policy: duplicate witnesses (same key, another name)"),
    ("policy-duplicate-log-key", "policy-duplicate-log-key.txt", 3,
     "tlog-policy: duplicate logs"),
    ("policy-name-redefined", "policy-name-redefined.txt", 6,
     "tlog-policy: one namespace"),
    ("policy-no-quorum", "policy-no-quorum.txt", 6, "tlog-policy: exactly one quorum line"),
    ("policy-two-quorums", "policy-two-quorums.txt", 8, "tlog-policy: exactly one quorum line"),
    ("policy-quorum-undefined", "policy-quorum-undefined.txt", 7,
     "tlog-policy: the quorum names an earlier definition"),
    ("policy-crlf-line-ends", "policy-crlf-line-ends.txt", 1, "tlog-policy: character set"),
]  # fmt: skip


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def _manifest() -> bytes:
    return _json(
        {
            "description": (
                "C2SP tlog-policy files and tlog-proofs (c2sp.org/tlog-policy, "
                "c2sp.org/tlog-proof), with an Ed25519 and an ML-DSA-44 witness cosignature. "
                "Generated by tests/verify/tlog/test_proof_golden.py; rewrite with "
                "UPDATE_GOLDENS=1 (ML-DSA-44 signatures already here are reused while they "
                "verify). Keys are TEST-ONLY, derived from the labels below."
            ),
            "keys": {
                "log": {
                    "label": "TEST-ONLY affidavit tlog-proof vectors: log key",
                    "vkey": log_vkey(),
                },
                "other_log": {
                    "label": "TEST-ONLY affidavit tlog-proof vectors: other log key",
                    "vkey": log_vkey(OTHER_LOG),
                },
                "witness_ed25519": {
                    "label": "TEST-ONLY affidavit tlog-proof vectors: Ed25519 witness",
                    "vkey": vkey_of(ed_cosigner()),
                },
                "witness_ml_dsa_44": {
                    "label": f"{PQ_LABEL} (ML-DSA-44 seed = SHA-256 of the label)",
                    "vkey_name": PQ_NAME,
                },
                "witness_unknown": {
                    "label": "TEST-ONLY affidavit tlog-proof vectors: unknown witness",
                    "name": UNKNOWN_NAME,
                    "public_key_base64": UNKNOWN_KEY.public_key.b64,
                },
            },
            "origin": ORIGIN,
            "cosignature_timestamp": TIMESTAMP,
            "vectors": [
                {
                    "id": case_id,
                    "kind": "proof",
                    "input": proof,
                    "entry": entry,
                    "policy": policy,
                    "expected": expected,
                    "clause": clause,
                }
                for case_id, proof, entry, policy, expected, clause in PROOF_CASES
            ]
            + [
                {
                    "id": case_id,
                    "kind": "policy",
                    "input": policy,
                    "expected": "tlog.policy_malformed",
                    "line": line,
                    "clause": clause,
                }
                for case_id, policy, line, clause in POLICY_CASES
            ],
        }
    )


def test_golden_manifest() -> None:
    assert_golden(FOLDER / "manifest.json", _manifest())


@pytest.mark.parametrize("name", sorted(FILES))
def test_golden_file(name: str) -> None:
    assert_golden(FOLDER / name, FILES[name])


def test_every_file_is_used_by_a_case() -> None:
    used = {"checkpoint.txt"}  # the cosigned checkpoint, also inside proof.tlog-proof
    for _, proof, entry, policy, _, _ in PROOF_CASES:
        used |= {proof, entry, policy}
    used |= {case[1] for case in POLICY_CASES}
    assert used == set(FILES)
    assert (FOLDER / "proof.tlog-proof").read_text().endswith(NOTE)


@pytest.mark.parametrize(
    ("case_id", "proof", "entry", "policy", "expected"),
    [case[:5] for case in PROOF_CASES],
    ids=[case[0] for case in PROOF_CASES],
)
def test_proof_vector(case_id: str, proof: str, entry: str, policy: str, expected: str) -> None:
    parsed = parse_policy((FOLDER / policy).read_bytes())
    try:
        verify_proof((FOLDER / proof).read_bytes(), parsed, entry=(FOLDER / entry).read_bytes())
    except errors.AffidavitError as e:
        outcome = e.code
    else:
        outcome = "ok"
    assert outcome == expected, case_id


@pytest.mark.parametrize(
    ("case_id", "policy", "line"),
    [case[:3] for case in POLICY_CASES],
    ids=[case[0] for case in POLICY_CASES],
)
def test_policy_vector(case_id: str, policy: str, line: int) -> None:
    try:
        parse_policy((FOLDER / policy).read_bytes())
    except errors.AffidavitError as e:
        outcome, where = e.code, e.details.get("line")
    else:
        outcome, where = "ok", None
    assert (outcome, where) == ("tlog.policy_malformed", line), case_id


def test_the_valid_vector_has_both_witness_kinds() -> None:
    verified = verify_proof(
        (FOLDER / "proof.tlog-proof").read_bytes(),
        parse_policy((FOLDER / "policy.txt").read_bytes()),
        entry=(FOLDER / "entry.txt").read_bytes(),
    )
    kinds = [c.witness.cosigner.algorithm for c in verified.verified.cosignatures]
    assert kinds == ["ed25519", "ml-dsa-44"]
    assert verified.extra == EXTRA
