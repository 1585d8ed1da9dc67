"""Private keys (attest/keyring.py): files, modes, refusals, loading, signing round trips."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest
from affidavit.attest import keyring
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.conftest import raises_code


def test_generate_key_files(tmp_path: Path) -> None:
    written = keyring.generate_key_files(
        tmp_path / "keys", "acme", "acme-2025", manifest_url="https://acme.example/m.json"
    )
    assert written.private_key == tmp_path / "keys" / "acme-2025.key"
    assert stat.S_IMODE(os.stat(written.private_key).st_mode) == 0o600
    pub_text = written.public_key_file.read_text()
    assert pub_text == written.public_key.b64 + "\n"
    document = json.loads(written.publisher_document.read_text())
    assert document == {
        "publisher_id": "acme",
        "publisher_key_id": "acme-2025",
        "public_key_base64": written.public_key.b64,
        "manifest_url": "https://acme.example/m.json",
    }
    key = keyring.load_signing_key(written.private_key)
    assert key.key_id == "acme-2025"
    assert key.publisher_id == "acme"
    assert key.public_key == written.public_key
    signature = key.sign(b"payload")
    verify_ed25519(keyring.load_public_key(written.public_key_file), b"payload", signature)
    verify_ed25519(keyring.load_public_key(written.publisher_document), b"payload", signature)


def test_private_key_file_is_pkcs8_readable_by_cryptography(tmp_path: Path) -> None:
    written = keyring.generate_key_files(tmp_path, "p", "k")
    private = serialization.load_pem_private_key(written.private_key.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    assert private.public_key().public_bytes_raw() == written.public_key.raw


def test_refuses_to_overwrite_and_keeps_old_files(tmp_path: Path) -> None:
    first = keyring.generate_key_files(tmp_path, "p", "k")
    before = first.private_key.read_bytes()
    with raises_code("io.exists") as caught:
        keyring.generate_key_files(tmp_path, "p", "k")
    assert caught.value.code == "io.exists"
    assert first.private_key.read_bytes() == before


def test_refuses_when_only_the_publisher_document_exists(tmp_path: Path) -> None:
    (tmp_path / "p-publisher.json").write_text("{}")
    with raises_code("io.exists"):
        keyring.generate_key_files(tmp_path, "p", "k2")
    assert not (tmp_path / "k2.key").exists()
    assert not (tmp_path / "k2.pub").exists()


@pytest.mark.parametrize("bad", ["../evil", "a/b", ".hidden", "", "x" * 200])
def test_ids_must_be_safe_file_names(tmp_path: Path, bad: str) -> None:
    with pytest.raises(errors.UsageError):
        keyring.generate_key_files(tmp_path, bad, "k")
    with pytest.raises(errors.UsageError):
        keyring.generate_key_files(tmp_path, "p", bad)


def test_world_readable_key_warns_or_refuses(tmp_path: Path) -> None:
    written = keyring.generate_key_files(tmp_path, "p", "k")
    os.chmod(written.private_key, 0o644)
    assert keyring.key_file_is_insecure(written.private_key)
    with pytest.warns(keyring.InsecureKeyFileWarning, match="chmod 600"):
        key = keyring.load_signing_key(written.private_key)
    assert key.public_key == written.public_key
    with raises_code("key.insecure_permissions") as caught:
        keyring.load_signing_key(written.private_key, refuse_world_readable=True)
    assert caught.value.code == "key.insecure_permissions"
    assert caught.value.exit_code == 2


def test_signing_key_repr_hides_the_seed() -> None:
    key = keyring.derive_test_key("repr-test")
    assert key.seed.hex() not in repr(key)
    assert "seed" not in repr(key)


def test_derive_test_key_is_deterministic_and_matches_cryptography() -> None:
    a = keyring.derive_test_key("TEST-ONLY label")
    b = keyring.derive_test_key("TEST-ONLY label")
    assert a.public_key == b.public_key
    assert a.sign(b"m") == b.sign(b"m")
    # Independent: cryptography derives the same public key and the same (deterministic) signature.
    reference = Ed25519PrivateKey.from_private_bytes(a.seed)
    assert reference.public_key().public_bytes_raw() == a.public_key.raw
    assert reference.sign(b"m") == a.sign(b"m")
    assert base64.b64decode(a.sign_b64(b"m")) == a.sign(b"m")


def test_generate_keypair_is_random() -> None:
    assert keyring.generate_keypair().public_key != keyring.generate_keypair().public_key


def test_private_key_pem_round_trip(tmp_path: Path) -> None:
    key = keyring.derive_test_key("pem")
    path = tmp_path / "x.key"
    path.write_bytes(keyring.private_key_pem(key))
    path.chmod(0o600)
    loaded = keyring.load_signing_key(path)
    assert loaded.public_key == key.public_key
    assert loaded.key_id == "x"
    assert loaded.publisher_id is None


def test_load_public_key_forms(tmp_path: Path) -> None:
    key = keyring.derive_test_key("forms").public_key
    pem = tmp_path / "k.pem"
    pem.write_bytes(keyring.public_key_pem(key))
    assert keyring.load_public_key(pem) == key
    doc = tmp_path / "k.json"
    doc.write_text(json.dumps({"key_id": "x", "public_key_base64": key.b64}))
    assert keyring.load_public_key(doc) == key
    raw = tmp_path / "k.pub"
    raw.write_text(key.b64 + "\n")
    assert keyring.load_public_key(raw) == key


def test_load_public_key_peer_sample_key(peer_vectors: Path) -> None:
    key = keyring.load_public_key(peer_vectors / "aigentsy" / "sample_key.json")
    assert key.b64 == "JRQuml8ERLp4Y12/yLWOF3xgk2BhqKwu+hGHb+ZURDs="


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"not base64!!", "key.bad_base64"),
        (base64.b64encode(b"\x01" * 31) + b"\n", "key.wrong_length"),
        (base64.b64encode(bytes.fromhex("01" + "00" * 31)), "key.weak"),
        (b'{"public_key_base64": 5}', "key.unrecognized"),
        (b'{"a": 1, "a": 2}', "json.duplicate_key"),
        (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "key.unrecognized"),
    ],
)
def test_load_public_key_errors(tmp_path: Path, content: bytes, code: str) -> None:
    path = tmp_path / "bad.pub"
    path.write_bytes(content)
    with raises_code(code) as caught:
        keyring.load_public_key(path)
    assert caught.value.exit_code == 2
    assert str(path) in caught.value.message


def test_load_public_key_rejects_non_ed25519_pem(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    path = tmp_path / "ec.pem"
    path.write_bytes(
        other.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    with raises_code("key.unrecognized"):
        keyring.load_public_key(path)


def test_load_signing_key_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.key"
    with raises_code("io.unreadable"):
        keyring.load_signing_key(missing)
    garbage = tmp_path / "g.key"
    garbage.write_bytes(b"hello")
    garbage.chmod(0o600)
    with raises_code("key.unrecognized"):
        keyring.load_signing_key(garbage)
    broken = tmp_path / "b.key"
    broken.write_bytes(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    broken.chmod(0o600)
    with raises_code("key.unrecognized"):
        keyring.load_signing_key(broken)
    encrypted = tmp_path / "e.key"
    encrypted.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pw"),
        )
    )
    encrypted.chmod(0o600)
    with raises_code("key.unrecognized", match="encrypted"):
        keyring.load_signing_key(encrypted)


def test_signing_key_seed_length() -> None:
    with raises_code("key.wrong_length"):
        keyring.SigningKey(b"\x00" * 31)


def test_signature_from_keyring_fails_under_another_key() -> None:
    a, b = keyring.derive_test_key("a"), keyring.derive_test_key("b")
    with raises_code("signature.bad"):
        verify_ed25519(b.public_key, b"m", a.sign(b"m"))
    assert isinstance(a.public_key, Ed25519PublicKey)


def _load_or_generate_in_child(folder: str, start: float) -> tuple[str, bool]:
    import time

    time.sleep(max(0.0, start - time.time()))
    key, generated = keyring.load_or_generate_key(folder, "acme", "registry-1", "https://x/m")
    return key.public_key.b64, generated


def test_load_or_generate_key_processes_started_together_share_one_key(tmp_path: Path) -> None:
    import multiprocessing
    import time

    start = time.time() + 0.5
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(_load_or_generate_in_child, [(str(tmp_path), start)] * 4)
    assert len({public for public, _ in results}) == 1
    assert sum(generated for _, generated in results) == 1
    (public, _), *_ = results
    assert (tmp_path / "registry-1.pub").read_text() == public + "\n"
    assert json.loads((tmp_path / "acme-publisher.json").read_text())["public_key_base64"] == public
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "acme-publisher.json",
        "registry-1.key",
        "registry-1.pub",
    ]
    assert stat.S_IMODE(os.stat(tmp_path / "registry-1.key").st_mode) == 0o600


def test_load_or_generate_key_loads_an_existing_key_and_refuses_a_readable_one(
    tmp_path: Path,
) -> None:
    written = keyring.generate_key_files(tmp_path, "acme", "registry-1")
    key, generated = keyring.load_or_generate_key(tmp_path, "acme", "registry-1")
    assert (key.public_key, generated) == (written.public_key, False)
    assert (key.key_id, key.publisher_id) == ("registry-1", "acme")
    written.private_key.chmod(0o644)
    with raises_code("key.insecure_permissions"):
        keyring.load_or_generate_key(tmp_path, "acme", "registry-1")
    with raises_code("usage.invalid"):
        keyring.load_or_generate_key(tmp_path, "acme", "../escape")
