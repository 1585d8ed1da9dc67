"""Ed25519 conformance from a package a user's clone installs: ``cryptography-vectors`` (dev extra).

Its ``asymmetric/Ed25519/sign.input`` is the 1024-vector set of the Ed25519 reference software
(one line each: ``secret||public : public : message : signature||message :``, hex); RFC 8032
§7.1 TEST 1, 2, 3 and 1024 are its lines 1, 2, 3 and 1024 (checked below against the RFC's
values). Every vector must verify through the project's strict verifier and be reproduced by its
signer; any flipped bit must fail with ``signature.bad``. ``../shared/peer-vectors`` (Wycheproof,
speccheck) stays an extra source in ``test_signature.py``.
"""

from __future__ import annotations

from importlib.resources import files
from typing import NamedTuple

import pytest
from affidavit.attest.keyring import SigningKey
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519

from tests.conftest import raises_code

pytest.importorskip(
    "cryptography_vectors", reason="cryptography-vectors (dev extra) is not installed"
)


class Vector(NamedTuple):
    line: int
    seed: bytes
    public: bytes
    message: bytes
    signature: bytes


def _vectors() -> list[Vector]:
    text = (files("cryptography_vectors") / "asymmetric" / "Ed25519" / "sign.input").read_text()
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        secret, public, message, signed, rest = line.split(":")
        assert rest == ""
        sig_and_msg = bytes.fromhex(signed)
        assert sig_and_msg[64:] == bytes.fromhex(message)
        assert bytes.fromhex(secret)[32:] == bytes.fromhex(public)
        out.append(
            Vector(number, bytes.fromhex(secret)[:32], bytes.fromhex(public),
                   bytes.fromhex(message), sig_and_msg[:64])
        )  # fmt: skip
    return out


VECTORS = _vectors()

# RFC 8032 §7.1: (line in sign.input, public key, message, signature), copied from the RFC.
RFC8032 = [
    (1, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9"
     "b46bd25bf5f0595bbe24655141438e7a100b"),
    (2, "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f1"
     "1d8c387b2eaeb4302aeeb00d291612bb0c00"),
    (3, "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984d"
     "c6594a7c15e9716ed28dc027beceea1ec40a"),
]  # fmt: skip


def test_the_file_holds_1024_vectors() -> None:
    assert len(VECTORS) == 1024
    assert [v.line for v in VECTORS] == list(range(1, 1025))
    assert len({v.public for v in VECTORS}) == 1024


@pytest.mark.parametrize(("line", "public", "message", "signature"), RFC8032)
def test_rfc8032_section_7_1_tests_are_in_the_file(
    line: int, public: str, message: str, signature: str
) -> None:
    vector = VECTORS[line - 1]
    assert (vector.public.hex(), vector.message.hex(), vector.signature.hex()) == (
        public,
        message,
        signature,
    )


def test_rfc8032_test_1024_is_the_last_line() -> None:
    # RFC 8032 §7.1 TEST 1024: a 1023-byte message under public key 278117fc...
    last = VECTORS[-1]
    assert len(last.message) == 1023
    assert last.public.hex().startswith("278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c59")


def test_every_vector_verifies() -> None:
    for vector in VECTORS:
        key = Ed25519PublicKey(vector.public)  # passes the strict key checks (docs/adr/0002)
        verify_ed25519(key, vector.message, vector.signature)


def test_the_project_signer_reproduces_every_signature() -> None:
    for vector in VECTORS:
        signer = SigningKey(vector.seed)
        assert signer.public_key.raw == vector.public, vector.line
        assert signer.sign(vector.message) == vector.signature, vector.line


def test_a_flipped_signature_bit_fails_with_signature_bad() -> None:
    for vector in VECTORS:
        bit = (vector.line * 37) % 512  # spread over R and S
        flipped = bytearray(vector.signature)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with raises_code("signature.bad") as caught:
            verify_ed25519(Ed25519PublicKey(vector.public), vector.message, bytes(flipped))
        assert caught.value.code == "signature.bad", vector.line


def test_a_flipped_message_bit_fails_with_signature_bad() -> None:
    for vector in VECTORS:
        message = bytearray(vector.message or b"\x00")
        if vector.message:
            bit = (vector.line * 11) % (8 * len(message))
            message[bit // 8] ^= 1 << (bit % 8)
        with raises_code("signature.bad") as caught:
            verify_ed25519(Ed25519PublicKey(vector.public), bytes(message), vector.signature)
        assert caught.value.code == "signature.bad", vector.line
