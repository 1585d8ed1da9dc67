"""Public-key parsing (verify/crypto/keys.py): lengths, strict base64, canonical and small-order
points."""

from __future__ import annotations

import base64
import hashlib

import nacl.bindings
import pytest
from affidavit.verify import errors
from affidavit.verify.crypto.keys import (
    Ed25519PublicKey,
    b64decode_strict,
    b64url_decode_strict,
    b64url_encode,
    key_id_c2sp,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

# RFC 8032 §7.1, test 1 public key.
RFC8032_PK = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")

# The eight points of order dividing 8, in their canonical encodings (identity, order 2, two of
# order 4, four of order 8), listed in libsodium's and ed25519-speccheck's blocklists.
SMALL_ORDER = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
]


def test_round_trip_b64() -> None:
    key = Ed25519PublicKey.from_bytes(RFC8032_PK)
    assert key.b64 == base64.b64encode(RFC8032_PK).decode()
    assert Ed25519PublicKey.from_b64(key.b64) == key
    assert Ed25519PublicKey.from_hex(RFC8032_PK.hex()) == key


@pytest.mark.parametrize("length", [0, 31, 33, 64])
def test_wrong_length(length: int) -> None:
    with raises_code("key.wrong_length") as caught:
        Ed25519PublicKey.from_bytes(b"\x01" * length)
    assert caught.value.code == "key.wrong_length"


@pytest.mark.parametrize(
    "text",
    [
        "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo",  # missing padding
        "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURp=",  # non-zero trailing bits
        "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=",  # URL-safe alphabet
        " 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",  # whitespace
        "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n",
        "é1qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
    ],
)
def test_bad_base64(text: str) -> None:
    with raises_code("key.bad_base64") as caught:
        Ed25519PublicKey.from_b64(text)
    assert caught.value.code == "key.bad_base64"
    assert caught.value.exit_code == 2


def test_bad_hex() -> None:
    with raises_code("key.bad_base64"):
        Ed25519PublicKey.from_hex("zz" * 32)


def test_wrong_length_through_base64() -> None:
    with raises_code("key.wrong_length"):
        Ed25519PublicKey.from_b64(base64.b64encode(b"\x05" * 31).decode())


@pytest.mark.parametrize("hex_key", SMALL_ORDER)
def test_small_order_keys_are_weak(hex_key: str) -> None:
    with raises_code("key.weak") as caught:
        Ed25519PublicKey.from_hex(hex_key)
    assert caught.value.code == "key.weak"


@pytest.mark.parametrize(
    "hex_key",
    [
        # y = p (≡ 0) and y = p + 1 (≡ 1): non-reduced encodings (RFC 8032 §5.1.3 step 1).
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        # y = 1 with the sign bit set: x = 0 and sign 1 (step 4).
        "0100000000000000000000000000000000000000000000000000000000000080",
    ],
)
def test_non_canonical_keys(hex_key: str) -> None:
    with raises_code("key.non_canonical"):
        Ed25519PublicKey.from_hex(hex_key)


def test_not_on_curve() -> None:
    # y = 2: (y^2 - 1) / (d y^2 + 1) is not a square mod p, so there is no x.
    with raises_code("key.not_on_curve"):
        Ed25519PublicKey.from_hex("02" + "00" * 31)


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_agrees_with_libsodium_on_prime_order_keys(seed: bytes) -> None:
    public, _ = nacl.bindings.crypto_sign_seed_keypair(seed)
    assert nacl.bindings.crypto_core_ed25519_is_valid_point(public)
    assert Ed25519PublicKey.from_bytes(public).raw == public


@settings(max_examples=80, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_any_32_bytes_give_a_key_or_a_key_error(raw: bytes) -> None:
    try:
        code = Ed25519PublicKey.from_bytes(raw).raw.hex()
    except errors.KeyMaterialError as e:
        code = e.code
    assert code in {raw.hex(), "key.weak", "key.non_canonical", "key.not_on_curve"}


def test_key_id_c2sp_matches_the_formula() -> None:
    # docs/formats.md §6 / signed-note: SHA-256(name || 0x0A || 0x01 || key)[:4]
    expected = hashlib.sha256(b"example.com/log\n\x01" + RFC8032_PK).digest()[:4]
    assert key_id_c2sp("example.com/log", RFC8032_PK) == expected
    assert Ed25519PublicKey(RFC8032_PK).key_id_c2sp("example.com/log") == expected


def test_key_id_of_the_c2sp_example(peer_vectors: object) -> None:
    # The C2SP signed-note example: the verifier key string carries name, key ID and 0x01||key.
    import json
    from pathlib import Path

    assert isinstance(peer_vectors, Path)
    example = json.loads((peer_vectors / "c2sp" / "signed_note_example.json").read_text())
    name, hex_id, encoded = example["verifier_key"].split("+")
    blob = base64.b64decode(encoded)
    assert blob[0] == 1
    assert key_id_c2sp(name, blob[1:]).hex() == hex_id


def test_b64url_strict() -> None:
    raw = bytes(range(40))
    text = b64url_encode(raw)
    assert "=" not in text
    assert b64url_decode_strict(text) == raw
    assert b64url_decode_strict(text + "=" * (-len(text) % 4)) == raw
    for bad in [text + "!", text[:-1] + "B", "ab+c", "é", text + "==="]:
        with pytest.raises(ValueError, match="base64url"):
            b64url_decode_strict(bad)


def test_b64_strict_rejects_non_ascii() -> None:
    with pytest.raises((ValueError, UnicodeError)):
        b64decode_strict("é")


def test_key_is_an_immutable_hashable_value() -> None:
    # Ed25519PublicKey is a slotted class, not a dataclass (docs/adr/0003): same behaviour.
    key, same = Ed25519PublicKey(RFC8032_PK), Ed25519PublicKey.from_hex(RFC8032_PK.hex())
    other = Ed25519PublicKey.from_bytes(
        nacl.bindings.crypto_sign_seed_keypair(hashlib.sha256(b"TEST-ONLY other").digest())[0]
    )
    assert key == same
    assert hash(key) == hash(same)
    assert key != other
    assert len({key, same, other}) == 2
    assert key not in (RFC8032_PK, (RFC8032_PK,))  # a key equals only a key
    assert repr(key) == f"Ed25519PublicKey(raw={RFC8032_PK!r})"
    with pytest.raises(AttributeError):
        key.raw = other.raw  # type: ignore[misc]
    with pytest.raises(AttributeError):
        key._raw = other.raw  # type: ignore[misc]
    assert key.raw == RFC8032_PK


def test_key_pickles_and_unpickling_rechecks() -> None:
    import pickle

    key = Ed25519PublicKey(RFC8032_PK)
    assert pickle.loads(pickle.dumps(key)) == key
    forged = pickle.dumps(key).replace(RFC8032_PK, bytes.fromhex(SMALL_ORDER[0]))
    with raises_code("key.weak"):
        pickle.loads(forged)
