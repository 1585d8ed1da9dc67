"""The peer's single-object checks side by side with ours: attestations, inclusion proofs, tree
head signatures and anchor receipts with real RFC 3161 tokens (docs/parity.md rows T, M, N).

The peer (``aigentsy-verify`` 1.6.3) is the oracle: for each input both decide, and the test
asserts the same decision, or the documented stricter one.
"""

from __future__ import annotations

import base64
import copy
import random
from typing import Any, Final

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify import errors
from affidavit.verify.bundles.attestation import verify_attestation
from affidavit.verify.crypto.merkle import inclusion_proof, leaf_hash, root_of, verify_inclusion
from affidavit.verify.crypto.treehead import sth_message, verify_sth
from affidavit.verify.json.canonical import py_compact, sha256_hex
from aigentsy_verify import verify_attestation as peer_verify_attestation
from aigentsy_verify import verify_inclusion as peer_verify_inclusion
from aigentsy_verify import verify_sth_signature as peer_verify_sth
from aigentsy_verify.anchor import verify_anchor_receipt as peer_anchor

from tests.verify.anchor_tsa import TestCa, receipt_for, requires_openssl, signed_sth, sth_bytes

SIGNER: Final = derive_test_key("parity: attestation signer")  # TEST-ONLY
STRANGER: Final = derive_test_key("parity: some other signer")  # TEST-ONLY


# -- attestations (T-01..T-03) ---------------------------------------------------------------------


def _attestation(**changes: Any) -> dict[str, Any]:
    body = {"agent_id": "agent:seller", "ocs_score": 91, "deals": 12, "issued_at": "2026-03-01"}
    message = py_compact(body)
    document: dict[str, Any] = {
        "attestation": body,
        "payload_hash": sha256_hex(message),
        "signature": SIGNER.sign_b64(message),
        "algorithm": "Ed25519",
        "public_key_base64": SIGNER.public_key.b64,
        "verify_url": "http://127.0.0.1:9/verify",
    }
    document.update(changes)
    return document


def _edited() -> dict[str, Any]:
    document = _attestation()
    document["attestation"] = {**document["attestation"], "ocs_score": 99}
    return document


# name -> (document, key the verifier trusts, peer decision, our verdict)
ATTESTATIONS: Final = {
    "valid": (_attestation(), SIGNER, True, "verified"),
    "wrong_algorithm": (_attestation(algorithm="RSA"), SIGNER, False, "unreadable"),
    "bad_signature": (
        _attestation(signature=base64.b64encode(bytes(64)).decode()),
        SIGNER,
        False,
        "failed",
    ),
    "edited_body": (_edited(), SIGNER, False, "failed"),
    "other_key": (_attestation(), STRANGER, False, "failed"),
    # the peer never compares payload_hash (row T-03): ours is stricter
    "payload_hash_wrong": (_attestation(payload_hash="0" * 64), SIGNER, True, "failed"),
}


@pytest.mark.parametrize("name", list(ATTESTATIONS))
def test_attestation_agrees(name: str) -> None:
    document, key, peer_expected, ours_expected = ATTESTATIONS[name]
    peer = peer_verify_attestation(
        document["attestation"], document["signature"], key.public_key.b64, document["algorithm"]
    )
    ours = verify_attestation(document, [key.public_key])
    assert (peer, ours.verdict) == (peer_expected, ours_expected), ours.to_json()
    if name == "payload_hash_wrong":
        assert ours.code == "attestation.payload_hash_mismatch"


# -- inclusion proofs (M-01) -----------------------------------------------------------------------


def test_inclusion_agrees() -> None:
    """Seeded: valid proofs and single edits (index, a flipped bit, a node added or dropped)."""
    rng = random.Random(2026)
    decided = {True: 0, False: 0}
    for _ in range(300):
        size = rng.randint(1, 70)
        leaves = [leaf_hash(rng.randbytes(8)) for _ in range(size)]
        root, index = root_of(leaves), rng.randrange(size)
        proof, leaf = inclusion_proof(leaves, index), leaves[index]
        edit = rng.choice(["none", "index", "bit", "extra", "drop"])
        if edit == "index":
            index = (index + 1) % size
        elif edit == "bit" and proof:
            node = bytearray(proof[0])
            node[rng.randrange(32)] ^= 1 << rng.randrange(8)
            proof = [bytes(node), *proof[1:]]
        elif edit == "extra":
            proof = [*proof, leaves[0]]
        elif edit == "drop" and proof:
            proof = proof[:-1]
        peer = peer_verify_inclusion(leaf.hex(), index, size, [p.hex() for p in proof], root.hex())
        try:
            verify_inclusion(leaf, index, size, proof, root)
            ours = True
        except errors.AffidavitError:
            ours = False
        assert peer == ours, (size, index, edit)
        decided[ours] += 1
    assert min(decided.values()) > 50


# -- tree head signatures (M-03, B-09) -------------------------------------------------------------


def _sth(**changes: Any) -> dict[str, Any]:
    head: dict[str, Any] = {
        "log_id": "parity-log",
        "tree_size": 7,
        "root_hash": "ab" * 32,
        "timestamp": "2026-03-01T12:00:00Z",
        "key_id": "k1",
        "algorithm": "Ed25519",
    }
    head.update(changes)
    message = f"{head['log_id']}|{head['tree_size']}|{head['root_hash']}|{head['timestamp']}"
    head["signature"] = SIGNER.sign_b64(message.encode())
    return head


def _tampered(field: str, value: Any) -> dict[str, Any]:
    head = _sth()
    head[field] = value
    return head


# name -> (head, peer decision, ours); the last two are ours-stricter (strict parse, row M-03)
HEADS: Final = {
    "valid": (_sth(), True, True),
    "no_algorithm": ({k: v for k, v in _sth().items() if k != "algorithm"}, True, True),
    "other_algorithm": (_sth(algorithm="RSA"), False, False),
    "size_edited": (_tampered("tree_size", 8), False, False),
    "root_edited": (_tampered("root_hash", "cd" * 32), False, False),
    "time_edited": (_tampered("timestamp", "2026-03-01T12:00:01Z"), False, False),
    "log_edited": (_tampered("log_id", "other-log"), False, False),
    "size_as_text": (_sth(tree_size="7"), True, False),
    "time_not_utc_form": (_sth(timestamp="2026-03-01 12:00:00"), True, False),
}


@pytest.mark.parametrize("name", list(HEADS))
def test_sth_signature_agrees(name: str) -> None:
    head, peer_expected, ours_expected = HEADS[name]
    peer = peer_verify_sth(copy.deepcopy(head), SIGNER.public_key.b64)
    try:
        verify_sth(head, SIGNER.public_key)
        ours = True
    except errors.SignatureError:
        ours = False
    assert (peer, ours) == (peer_expected, ours_expected)
    assert peer_verify_sth(copy.deepcopy(head), STRANGER.public_key.b64) is False


def test_sth_message_is_the_peers() -> None:
    head = _sth()
    assert sth_message(head["log_id"], 7, head["root_hash"], head["timestamp"]) == (
        f"parity-log|7|{'ab' * 32}|2026-03-01T12:00:00Z".encode()
    )


# -- anchor receipts with real RFC 3161 tokens (N-07) ----------------------------------------------


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return TestCa(tmp_path_factory.mktemp("parity-pki")).tsa("parity-tsa")


@requires_openssl
def test_anchor_real_token_verifies(tsa: Any) -> None:
    from affidavit.verify.anchor.receipt import verify_anchor_receipt

    sth = signed_sth(9)
    receipt = receipt_for(sth, tsa.stamp(sth_bytes(sth)))
    assert peer_anchor(copy.deepcopy(receipt))[0] is True
    ours = verify_anchor_receipt(receipt, tsa_certs=[tsa.cert.read_bytes()])
    assert ours.verdict == "verified", ours.to_json()
    without = verify_anchor_receipt(receipt)  # no trusted TSA: the token is not proven
    assert (without.verdict, without.code) == ("unanchored", "anchor.token_unchecked")


@requires_openssl
def test_anchor_token_over_another_head(tsa: Any) -> None:
    """The receipt's digest matches its head, but its token time-stamps another head: the peer
    passes it (it never reads the token); openssl and we refuse it."""
    from affidavit.verify.anchor.receipt import verify_anchor_receipt

    sth, other = signed_sth(9), signed_sth(10)
    token = tsa.stamp(sth_bytes(other))
    receipt = receipt_for(sth, token)
    assert peer_anchor(copy.deepcopy(receipt))[0] is True
    assert tsa.openssl_verify(sth_bytes(sth), token) is False
    assert tsa.openssl_verify(sth_bytes(other), token) is True
    ours = verify_anchor_receipt(receipt, tsa_certs=[tsa.cert.read_bytes()])
    assert (ours.verdict, ours.code) == ("failed", "anchor.imprint_mismatch")
