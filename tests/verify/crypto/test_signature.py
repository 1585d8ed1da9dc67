"""Ed25519 verification (verify/crypto/signature.py): strict decoding, Wycheproof and speccheck
policy."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import nacl.bindings
import pytest
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey, b64url_encode
from affidavit.verify.crypto.signature import (
    decode_signature_b64,
    decode_signature_b64url,
    verify_ed25519,
    verify_ed25519_b64,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

# RFC 8032 §7.1 test 2 (one-byte message), an independent source for a valid signature.
RFC_PK = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
RFC_MSG = bytes.fromhex("72")
RFC_SIG = bytes.fromhex(
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)

# ed25519-speccheck cases.json: index -> accepted under our policy (docs/adr/0002).
# Only case 3 (mixed-order A and R, both equations hold, canonical everything) is accepted.
SPECCHECK_POLICY = [False, False, False, True] + [False] * 8
# Where each rejected case is caught: at key parsing (code) or at verification (signature.bad).
SPECCHECK_CODES = {
    0: "key.weak",
    1: "key.weak",
    2: "signature.bad",
    4: "signature.bad",
    5: "signature.bad",
    6: "signature.bad",
    7: "signature.bad",
    8: "signature.bad",
    9: "signature.bad",
    10: "key.non_canonical",
    11: "key.non_canonical",
}


def test_rfc8032_vector_verifies() -> None:
    verify_ed25519(Ed25519PublicKey(RFC_PK), RFC_MSG, RFC_SIG)


def test_tampered_message_is_bad() -> None:
    with raises_code("signature.bad") as caught:
        verify_ed25519(Ed25519PublicKey(RFC_PK), b"\x73", RFC_SIG)
    assert caught.value.code == "signature.bad"
    assert caught.value.exit_code == 1


@pytest.mark.parametrize("index", [0, 31, 32, 63])
def test_any_flipped_signature_bit_is_bad(index: int) -> None:
    tampered = bytearray(RFC_SIG)
    tampered[index] ^= 0x01
    with raises_code("signature.bad"):
        verify_ed25519(Ed25519PublicKey(RFC_PK), RFC_MSG, bytes(tampered))


def test_malleable_s_is_bad() -> None:
    # S + L verifies under a lax cofactorless check; RFC 8032 §5.1.7 requires S < L.
    order = 2**252 + 27742317777372353535851937790883648493
    s = int.from_bytes(RFC_SIG[32:], "little") + order
    with raises_code("signature.bad"):
        verify_ed25519(Ed25519PublicKey(RFC_PK), RFC_MSG, RFC_SIG[:32] + s.to_bytes(32, "little"))


@pytest.mark.parametrize("length", [0, 63, 65])
def test_wrong_signature_length_is_malformed(length: int) -> None:
    with raises_code("signature.malformed") as caught:
        verify_ed25519(Ed25519PublicKey(RFC_PK), RFC_MSG, b"\x00" * length)
    assert caught.value.exit_code == 2


def test_decode_b64() -> None:
    text = base64.b64encode(RFC_SIG).decode()
    assert decode_signature_b64(text) == RFC_SIG
    verify_ed25519_b64(Ed25519PublicKey(RFC_PK), RFC_MSG, text)
    for bad in [
        text[:-2],
        text + "\n",
        text.replace("+", "-"),
        base64.b64encode(b"x" * 63).decode(),
    ]:
        with raises_code("signature.malformed") as caught:
            decode_signature_b64(bad)
        assert caught.value.code == "signature.malformed"


def test_decode_b64url() -> None:
    text = b64url_encode(RFC_SIG)
    assert decode_signature_b64url(text) == RFC_SIG
    assert decode_signature_b64url(base64.urlsafe_b64encode(RFC_SIG).decode()) == RFC_SIG
    for bad in [text[:-1], text + "+", b64url_encode(b"x" * 65)]:
        with raises_code("signature.malformed"):
            decode_signature_b64url(bad)


@settings(max_examples=40, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=200))
def test_agrees_with_cryptography_on_honest_signatures(seed: bytes, message: bytes) -> None:
    # An independent implementation signs; we must accept, and reject it for another message.
    private = Ed25519PrivateKey.from_private_bytes(seed)
    signature = private.sign(message)
    key = Ed25519PublicKey(private.public_key().public_bytes_raw())
    verify_ed25519(key, message, signature)
    with raises_code("signature.bad"):
        verify_ed25519(key, message + b"\x00", signature)


def _wycheproof_cases(peer_vectors: Path) -> list[tuple[int, str, bytes, bytes, bytes]]:
    document = json.loads((peer_vectors / "ed25519" / "wycheproof_ed25519_test.json").read_text())
    return [
        (
            test["tcId"],
            test["result"],
            bytes.fromhex(group["publicKey"]["pk"]),
            bytes.fromhex(test["msg"]),
            bytes.fromhex(test["sig"]),
        )
        for group in document["testGroups"]
        for test in group["tests"]
    ]


def _verdict(pk: bytes, message: bytes, signature: bytes) -> str:
    """'valid' or the error code that rejected the case."""
    try:
        verify_ed25519(Ed25519PublicKey.from_bytes(pk), message, signature)
    except errors.AffidavitError as e:
        return e.code
    return "valid"


def test_wycheproof_all_151_cases(peer_vectors: Path) -> None:
    cases = _wycheproof_cases(peer_vectors)
    assert len(cases) == 151
    wrong = []
    for tc_id, expected, pk, message, signature in cases:
        verdict = _verdict(pk, message, signature)
        assert verdict in {"valid", "signature.bad", "signature.malformed"}, (tc_id, verdict)
        if (verdict == "valid") != (expected == "valid"):
            wrong.append((tc_id, expected, verdict))
    assert wrong == []
    assert sum(1 for case in cases if case[1] == "valid") > 0


def test_speccheck_policy(peer_vectors: Path) -> None:
    cases = json.loads((peer_vectors / "ed25519" / "speccheck_cases.json").read_text())
    assert len(cases) == 12
    for index, case in enumerate(cases):
        verdict = _verdict(
            bytes.fromhex(case["pub_key"]),
            bytes.fromhex(case["message"]),
            bytes.fromhex(case["signature"]),
        )
        expected = "valid" if SPECCHECK_POLICY[index] else SPECCHECK_CODES[index]
        assert verdict == expected, (index, verdict)


def test_speccheck_keys_would_pass_libsodium_verify_only_where_policy_allows(
    peer_vectors: Path,
) -> None:
    # Independent: libsodium's own verdicts (README: X X X V X X X X X X X X) equal our policy.
    cases = json.loads((peer_vectors / "ed25519" / "speccheck_cases.json").read_text())
    verdicts = []
    for case in cases:
        signed = bytes.fromhex(case["signature"]) + bytes.fromhex(case["message"])
        try:
            nacl.bindings.crypto_sign_open(signed, bytes.fromhex(case["pub_key"]))
            verdicts.append(True)
        except Exception:
            verdicts.append(False)
    assert verdicts == SPECCHECK_POLICY
