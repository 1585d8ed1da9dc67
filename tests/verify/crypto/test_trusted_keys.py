"""The one strict trusted-key parser (verify/crypto/trusted_keys.py): four forms, refusals.

Folders and the whole trust: tests/verify/test_trust.py, tests/cli/verify/test_trust_folder.py.

Every command that takes a trusted key file reads it here; the CLI tests check that each does.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from affidavit.attest.host import read_key_bytes
from affidavit.attest.keyring import derive_test_key, public_key_pem
from affidavit.verify.crypto import trusted_keys
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.conftest import raises_code

KEY = derive_test_key("TEST-ONLY trusted keys").public_key
OTHER = derive_test_key("TEST-ONLY trusted keys, other").public_key
# A small-order point (identity) and a non-canonical encoding (y = p): refused in every form.
WEAK_B64 = base64.b64encode(bytes.fromhex("01" + "00" * 31)).decode()
NON_CANONICAL_B64 = base64.b64encode((2**255 - 19).to_bytes(32, "little")).decode()
VKEY = verifier_key_string("example.com/log", KEY)


def _pem(raw_b64: str) -> bytes:
    """A PUBLIC KEY PEM block around the Ed25519 SubjectPublicKeyInfo of ``raw_b64``."""
    der = bytes.fromhex("302a300506032b6570032100") + base64.b64decode(raw_b64)
    body = base64.b64encode(der).decode()
    return f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n".encode()


def _doc(key_b64: str, **fields: object) -> str:
    """A JSON key document: ``public_key_base64`` and ``fields``."""
    return json.dumps({"public_key_base64": key_b64, **fields})


def _write(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _load(path: Path) -> trusted_keys.TrustedKey:
    """A key file as every command reads it: the one reader (attest/host.py), the one parser."""
    return trusted_keys.parse_key_bytes(read_key_bytes(path), source=str(path))


@pytest.mark.parametrize(
    ("content", "form"),
    [
        (KEY.b64 + "\n", "base64"),
        ("  " + KEY.b64 + "\r\n", "base64"),
        (json.dumps({"public_key_base64": KEY.b64}), "json"),
        (
            json.dumps(
                {
                    "publisher_id": "acme",
                    "publisher_key_id": "k1",
                    "public_key_base64": KEY.b64,
                    "manifest_url": "https://acme.example/m.json",
                }
            ),
            "json",
        ),
        (  # manifest_url null is absent, as parse_publisher_document reads it
            json.dumps(
                {
                    "publisher_id": "acme",
                    "publisher_key_id": "k1",
                    "public_key_base64": KEY.b64,
                    "manifest_url": None,
                }
            ),
            "json",
        ),
        (  # the AiGentsy key file (aigentsy-verify --public-key)
            json.dumps({"key_id": "k", "algorithm": "Ed25519", "public_key_base64": KEY.b64}),
            "json",
        ),
        (public_key_pem(KEY), "pem"),
        (public_key_pem(KEY).replace(b"\n", b"\r\n"), "pem"),
        (VKEY + "\n", "vkey"),
    ],
)
def test_every_form_gives_the_key(tmp_path: Path, content: bytes | str, form: str) -> None:
    loaded = _load(_write(tmp_path, "k.any", content))
    assert (loaded.key, loaded.form, loaded.source) == (KEY, form, str(tmp_path / "k.any"))
    assert (loaded.document is not None) == (form == "json")
    assert (loaded.verifier is not None) == (form == "vkey")


def test_pem_is_read_without_cryptography(tmp_path: Path) -> None:
    path = _write(tmp_path, "k.pem", public_key_pem(KEY))
    script = (
        "import sys\nfrom affidavit.verify.crypto.trusted_keys import parse_key_bytes\n"
        f"key = parse_key_bytes(open({str(path)!r}, 'rb').read(), source='k.pem').key\n"
        "print(key.b64, 'cryptography' in sys.modules, 'dataclasses' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == [KEY.b64, "False", "False"]


def test_json_document_is_kept_for_its_other_fields(tmp_path: Path) -> None:
    document = {"public_key_base64": KEY.b64, "actor_id": "agent-1", "note": "x"}
    loaded = _load(_write(tmp_path, "a.json", json.dumps(document)))
    assert loaded.document == document


def test_verifier_key_keeps_its_name(tmp_path: Path) -> None:
    loaded = _load(_write(tmp_path, "log.pub", VKEY))
    assert loaded.verifier is not None
    assert (loaded.verifier.name, loaded.verifier.key) == ("example.com/log", KEY)


# -- refusals: what the lenient loader of attest.keyring used to accept is marked "was accepted" --


@pytest.mark.parametrize(
    ("content", "code"),
    [
        # strict JSON
        (f'{{"public_key_base64": "{KEY.b64}", "public_key_base64": "{OTHER.b64}"}}',
         "json.duplicate_key"),
        (f'{{"public_key_base64": "{KEY.b64}",}}', "json.syntax"),
        ('{"public_key_base64": NaN}', "json.non_finite"),
        ('{"public_key_base64": 5}', "key.unrecognized"),
        (json.dumps({"key": KEY.b64}), "key.unrecognized"),
        # fields a key document names must be well formed (was accepted)
        (_doc(KEY.b64, algorithm="RSA"), "key.unrecognized"),
        (_doc(KEY.b64, key_id=""), "key.unrecognized"),
        (_doc(KEY.b64, publisher_id=5),
         "manifest.publisher_document_invalid"),
        (_doc(KEY.b64, publisher_key_id=""),
         "manifest.publisher_document_invalid"),
        (_doc(KEY.b64, manifest_url=1),
         "manifest.publisher_document_invalid"),
        # the key itself, in every form
        (_doc(WEAK_B64), "key.weak"),
        (_doc(NON_CANONICAL_B64), "key.non_canonical"),
        (_doc(KEY.b64.rstrip("=")), "key.bad_base64"),
        (WEAK_B64, "key.weak"),
        (NON_CANONICAL_B64, "key.non_canonical"),
        (base64.b64encode(b"\x01" * 31).decode(), "key.wrong_length"),
        (base64.b64encode(b"\x01" * 33).decode(), "key.wrong_length"),
        ("not base64!!", "key.bad_base64"),
        (KEY.b64 + "\n" + OTHER.b64 + "\n", "key.bad_base64"),
        (_pem(WEAK_B64), "key.weak"),
        (_pem(NON_CANONICAL_B64), "key.non_canonical"),
        # PEM: one PUBLIC KEY block and nothing else (was accepted: trailing text, two blocks)
        (public_key_pem(KEY) + b"trailing text\n", "key.unrecognized"),
        (public_key_pem(KEY) + public_key_pem(OTHER), "key.unrecognized"),
        (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "key.unrecognized"),
        (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "key.unrecognized"),
        (b"-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n", "key.unrecognized"),
        # verifier keys
        ("example.com/log+00000000+" + base64.b64encode(b"\x02" + KEY.raw).decode(),
         "key.vkey_malformed"),
        ("example.com/log+00000000+" + base64.b64encode(b"\x01" + KEY.raw).decode(),
         "key.vkey_malformed"),
        ("name+00000000+" + base64.b64encode(b"\x01" + base64.b64decode(WEAK_B64)).decode(),
         "key.weak"),
    ],
)  # fmt: skip
def test_refused_with_a_stable_code_naming_the_file(
    tmp_path: Path, content: bytes | str, code: str
) -> None:
    path = _write(tmp_path, "bad.key", content)
    with raises_code(code) as caught:
        _load(path)
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith(f"{path}: ")


def test_pem_of_another_algorithm_is_refused(tmp_path: Path) -> None:
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    pem = other.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with raises_code("key.unrecognized", match="not an Ed25519 public key"):
        _load(_write(tmp_path, "ec.pem", pem))


def test_bytes_larger_than_a_key_file() -> None:
    with raises_code("key.unrecognized", match="too large"):
        trusted_keys.parse_key_bytes(b" " * (trusted_keys.MAX_KEY_FILE_BYTES + 1), source="k")


def test_key_from_base64_and_key_from_document() -> None:
    assert trusted_keys.key_from_base64(f" {KEY.b64}\n") == KEY
    with raises_code("key.bad_base64"):
        trusted_keys.key_from_base64(KEY.b64[:-1])
    assert trusted_keys.key_from_document({"public_key_base64": KEY.b64}) == KEY
    with raises_code("key.weak") as caught:
        trusted_keys.key_from_document({"public_key_base64": WEAK_B64}, source="https://x/k")
    assert caught.value.message.startswith("https://x/k: ")


def test_keys_are_validated_objects() -> None:
    loaded = trusted_keys.parse_key_bytes(KEY.b64.encode(), source="-")
    assert isinstance(loaded.key, Ed25519PublicKey)
    assert loaded == trusted_keys.TrustedKey(KEY, "-", "base64")
