"""Golden vectors for keys, signatures, Merkle proofs, tree heads and checkpoints (vectors/crypto/).

This file is the deterministic generator: TEST-ONLY keys derived from fixed labels, Ed25519's
deterministic signatures, fixed timestamps. ``UPDATE_GOLDENS=1`` rewrites the files; otherwise each
is byte-compared, and every case is run through the library to check its expected outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.treehead import (
    sth_message,
    verify_sth,
)

from tests.conftest import VECTORS, assert_golden

FOLDER = VECTORS / "crypto"
LOG = derive_test_key("TEST-ONLY affidavit crypto vectors: log key")
WITNESS = derive_test_key("TEST-ONLY affidavit crypto vectors: witness key")
ORIGIN = "vectors.affidavit.test/log"
LEAVES = [merkle.leaf_hash(f"leaf {i}".encode()) for i in range(7)]
ROOT = merkle.root_of(LEAVES)
TIMESTAMP = "2026-01-01T00:00:00Z"


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def _sth(**changes: Any) -> dict[str, Any]:
    message = sth_message(ORIGIN, len(LEAVES), ROOT.hex(), TIMESTAMP)
    document = {
        "log_id": ORIGIN,
        "tree_size": len(LEAVES),
        "root_hash": ROOT.hex(),
        "timestamp": TIMESTAMP,
        "signature": LOG.sign_b64(message),
        "key_id": "vectors-log-1",
        "algorithm": "Ed25519",
    }
    document.update(changes)
    return document


def _note(body: str, *signers: Any) -> bytes:
    lines = [
        note_signature_line(name, key.public_key.key_id_c2sp(name), key.sign(body.encode()))
        for name, key in signers
    ]
    return format_note(body, lines).encode()


def _inclusion(index: int, proof: list[bytes] | None = None, root: bytes = ROOT) -> bytes:
    path = merkle.inclusion_proof(LEAVES, index) if proof is None else proof
    return _json(
        {
            "leaf_hash": LEAVES[index].hex(),
            "index": index,
            "size": len(LEAVES),
            "proof": [p.hex() for p in path],
            "root": root.hex(),
        }
    )


def _consistency(size1: int, proof: list[bytes] | None = None) -> bytes:
    path = merkle.consistency_proof(LEAVES, size1) if proof is None and size1 else proof or []
    return _json(
        {
            "size1": size1,
            "size2": len(LEAVES),
            "proof": [p.hex() for p in path],
            "root1": merkle.root_of(LEAVES[:size1]).hex(),
            "root2": ROOT.hex(),
        }
    )


_BODY = checkpoint_body(ORIGIN, len(LEAVES), ROOT)
_PROOF = merkle.inclusion_proof(LEAVES, 3)

# id -> (file name, bytes, kind, expected outcome, clause)
CASES: list[tuple[str, str, bytes, str, str, str]] = [
    ("sth-valid", "sth-valid.json", _json(_sth()), "sth", "ok", "docs/formats.md §4"),
    ("sth-tampered-tree-size", "sth-tampered-tree-size.json", _json(_sth(tree_size=8)), "sth",
     "treehead.signature_bad", "docs/formats.md §4"),
    ("sth-tampered-root", "sth-tampered-root.json", _json(_sth(root_hash=LEAVES[0].hex())), "sth",
     "treehead.signature_bad", "docs/formats.md §4"),
    ("sth-malformed-timestamp", "sth-malformed-timestamp.json",
     _json(_sth(timestamp="2026-01-01 00:00:00")), "sth", "treehead.malformed",
         "docs/formats.md §4"),
    ("checkpoint-valid", "checkpoint-valid.txt", _note(_BODY, (ORIGIN, LOG)), "checkpoint", "ok",
     "c2sp tlog-checkpoint"),
    ("checkpoint-cosigned-unknown-witness", "checkpoint-cosigned.txt",
     _note(_BODY, (ORIGIN, LOG), ("witness.affidavit.test", WITNESS)), "checkpoint", "ok",
     "c2sp signed-note: unknown signatures ignored"),
    ("checkpoint-tampered-size", "checkpoint-tampered-size.txt",
     _note(_BODY, (ORIGIN, LOG)).replace(b"\n7\n", b"\n8\n", 1), "checkpoint",
     "checkpoint.signature_bad", "c2sp signed-note"),
    ("checkpoint-only-untrusted-signer", "checkpoint-untrusted.txt",
     _note(_BODY, ("witness.affidavit.test", WITNESS)), "checkpoint",
     "checkpoint.no_trusted_signature", "c2sp signed-note: at least one trusted signature"),
    ("checkpoint-same-name-other-key", "checkpoint-same-name-other-key.txt",
     _note(_BODY, (ORIGIN, WITNESS)), "checkpoint", "checkpoint.no_trusted_signature",
     "c2sp signed-note: name and ID identify the key"),
    ("checkpoint-size-leading-zero", "checkpoint-size-leading-zero.txt",
     _note(_BODY.replace("\n7\n", "\n07\n"), (ORIGIN, LOG)), "checkpoint", "checkpoint.malformed",
     "c2sp tlog-checkpoint: no leading zeroes"),
    ("inclusion-valid", "inclusion-valid.json", _inclusion(3), "inclusion", "ok",
     "RFC 9162 §2.1.3"),
    ("inclusion-flipped-proof-bit", "inclusion-flipped.json",
     _inclusion(3, [bytes([_PROOF[0][0] ^ 1]) + _PROOF[0][1:], *_PROOF[1:]]), "inclusion",
     "merkle.root_mismatch", "RFC 9162 §2.1.3.2"),
    ("inclusion-extra-hash", "inclusion-extra-hash.json", _inclusion(3, [*_PROOF, ROOT]),
     "inclusion", "merkle.bad_proof_length", "RFC 9162 §2.1.3.2"),
    ("inclusion-short-hash", "inclusion-short-hash.json",
     _inclusion(3, [_PROOF[0][:31], *_PROOF[1:]]), "inclusion", "merkle.bad_hash_length",
     "RFC 9162 §2.1.3: hashes are 32 bytes"),
    ("consistency-valid", "consistency-valid.json", _consistency(3), "consistency", "ok",
     "RFC 9162 §2.1.4"),
    ("consistency-from-zero", "consistency-from-zero.json", _consistency(0), "consistency",
     "merkle.consistency_from_zero", "RFC 9162 §2.1.4: consistency from size 0 is an error"),
    ("reject-small-order-key-universal-forgery", "key-small-order.json",
     _json({"public_key_hex": "01" + "00" * 31}), "key", "key.weak", "docs/adr/0002"),
    ("reject-non-canonical-key", "key-non-canonical.json",
     _json({"public_key_hex": "edff" + "ff" * 29 + "7f"}), "key", "key.non_canonical",
     "RFC 8032 §5.1.3"),
]  # fmt: skip


def _run(kind: str, data: bytes, vkey: str) -> str:
    checks: dict[str, Callable[[], object]] = {
        "sth": lambda: verify_sth(json.loads(data), LOG.public_key),
        "checkpoint": lambda: verify_checkpoint(data, [parse_verifier_key(vkey)], origin=ORIGIN),
        "inclusion": lambda: _verify_inclusion(json.loads(data)),
        "consistency": lambda: _verify_consistency(json.loads(data)),
        "key": lambda: Ed25519PublicKey.from_hex(json.loads(data)["public_key_hex"]),
    }
    try:
        checks[kind]()
    except errors.AffidavitError as e:
        return e.code
    return "ok"


def _verify_inclusion(case: dict[str, Any]) -> None:
    merkle.verify_inclusion(
        bytes.fromhex(case["leaf_hash"]),
        case["index"],
        case["size"],
        [bytes.fromhex(p) for p in case["proof"]],
        bytes.fromhex(case["root"]),
    )


def _verify_consistency(case: dict[str, Any]) -> None:
    merkle.verify_consistency(
        case["size1"],
        case["size2"],
        [bytes.fromhex(p) for p in case["proof"]],
        bytes.fromhex(case["root1"]),
        bytes.fromhex(case["root2"]),
    )


def test_crypto_golden_manifest() -> None:
    vkey = verifier_key_string(ORIGIN, LOG.public_key)
    manifest = {
        "description": (
            "Keys, Ed25519, Merkle proofs, tree heads and C2SP checkpoints "
            "(docs/formats.md §3-4, §6). "
            "Generated by tests/verify/crypto/test_crypto_golden.py; "
            "rewrite with UPDATE_GOLDENS=1. "
            "Keys are TEST-ONLY, derived from the labels below."
        ),
        "keys": {
            "log": {
                "label": "TEST-ONLY affidavit crypto vectors: log key",
                "public_key_base64": LOG.public_key.b64,
                "vkey": vkey,
            },
            "witness": {
                "label": "TEST-ONLY affidavit crypto vectors: witness key",
                "public_key_base64": WITNESS.public_key.b64,
            },
        },
        "vectors": [
            {"id": case_id, "kind": kind, "input": name, "expected": expected, "clause": clause}
            for case_id, name, _, kind, expected, clause in CASES
        ],
    }
    assert_golden(FOLDER / "manifest.json", _json(manifest))
    assert_golden(FOLDER / "log.vkey", (vkey + "\n").encode())


@pytest.mark.parametrize(
    ("case_id", "name", "data", "kind", "expected"),
    [case[:5] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_crypto_golden_vector(
    case_id: str, name: str, data: bytes, kind: str, expected: str
) -> None:
    assert_golden(FOLDER / name, data)
    vkey = verifier_key_string(ORIGIN, LOG.public_key)
    assert _run(kind, (FOLDER / name).read_bytes(), vkey) == expected, case_id
