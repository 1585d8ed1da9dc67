"""The one trust input (verify/trust.py, docs/adr/0016): what a file is, decided once."""

from __future__ import annotations

import json

import pytest
from affidavit.attest.keyring import derive_test_key, public_key_pem
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.trust import KeyFile, Skipped, TrustRoot, key_claim

from tests.conftest import raises_code

KEY = derive_test_key("TEST-ONLY trust root").public_key
OTHER = derive_test_key("TEST-ONLY trust root, other").public_key
WEAK_B64 = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
VKEY = verifier_key_string("example.com/log", KEY)


def _doc(**fields: object) -> bytes:
    return json.dumps({"public_key_base64": KEY.b64, **fields}).encode()


@pytest.mark.parametrize(
    ("name", "data", "claims"),
    [
        ("k.pub", b"anything", True),  # by name
        ("k.pem", b"anything", True),
        ("k.json", _doc(), True),  # by content
        ("k.json", b'{"public_key_base64": 5}', True),  # claims, and is malformed
        ("k.json", b"{not json", False),
        ("log.key.logstate-1.json", b'{"log_id": "x", "tree_size": 3}', False),
        ("k.key", public_key_pem(KEY), False),  # a private key's name, whatever the content
        ("README.md", KEY.b64.encode(), False),
        ("key", KEY.b64.encode(), False),
    ],
)
def test_what_claims_to_be_a_key(name: str, data: bytes, claims: bool) -> None:
    assert (key_claim(KeyFile(name, data)) is None) is claims


def test_keys_in_order_the_rest_skipped_with_reasons() -> None:
    root = TrustRoot.from_files(
        [
            KeyFile("d/a.json", _doc(key_id="a")),
            KeyFile("d/b.pem", public_key_pem(OTHER)),
            KeyFile("d/c.pub", VKEY.encode()),
            KeyFile("d/k.key.logstate-1.json", b'{"tree_size": 1}'),
            KeyFile("d/notes.txt", b"hello"),
        ],
        folder="d",
    )
    assert [(k.source, k.form) for k in root.keys] == [
        ("d/a.json", "json"),
        ("d/b.pem", "pem"),
        ("d/c.pub", "vkey"),
    ]
    assert root.public_keys == [KEY, OTHER]  # distinct, in order
    assert root.raw_keys == [KEY.raw, OTHER.raw]
    assert [s.source for s in root.skipped] == ["d/k.key.logstate-1.json", "d/notes.txt"]
    document = root.to_json()
    assert document["keys"][2] == {
        "source": "d/c.pub",
        "form": "vkey",
        "public_key_base64": KEY.b64,
        "name": "example.com/log",
    }
    assert document["skipped"][1] == Skipped("d/notes.txt", key_claim(root.skipped[1])).to_json()


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("weak.pub", WEAK_B64.encode(), "key.weak"),
        ("bad.pem", b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
         "key.unrecognized"),
        ("private.pem", b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
         "key.unrecognized"),
        ("doc.json", b'{"public_key_base64": "AAAA"}', "key.wrong_length"),
        ("dup.json", b'{"public_key_base64": "x", "public_key_base64": "y"}', "json.duplicate_key"),
    ],
)  # fmt: skip
def test_a_file_claiming_to_be_a_key_and_malformed_is_an_error(
    name: str, data: bytes, code: str
) -> None:
    with raises_code(code):
        TrustRoot.from_files([KeyFile("d/good.pub", KEY.b64.encode()), KeyFile(f"d/{name}", data)])


def test_an_empty_trust_set_is_an_error() -> None:
    with raises_code("usage.invalid", match="fail closed"):
        TrustRoot.from_files([KeyFile("d/state.json", b"{}")], folder="d")
    assert TrustRoot.from_files([]).keys == ()  # no folder: the verb decides what none means


def test_windows_are_refused_unless_honoured_and_merge() -> None:
    windowed = KeyFile("w.json", _doc(valid_until="2026-01-01T00:00:00Z"))
    with raises_code("key.window_unsupported"):
        TrustRoot.from_files([windowed])
    root = TrustRoot.from_files([windowed], windows=True)
    assert list(root.windows) == [KEY.raw]
    assert root.to_json()["keys"][0]["valid_until"] == "2026-01-01T00:00:00Z"
    plain = TrustRoot.from_files([KeyFile("k.pub", KEY.b64.encode())])
    assert root.merge(plain).windows == {}  # also trusted without a window: at every time


def test_note_verifiers_need_names() -> None:
    root = TrustRoot.from_files([KeyFile("log.pub", VKEY.encode())])
    (verifier,) = root.note_verifiers()
    assert (verifier.name, verifier.key) == ("example.com/log", KEY)
    bare = TrustRoot.from_files([KeyFile("bare.pub", KEY.b64.encode())])
    with raises_code("key.vkey_malformed", match="not a verifier key"):
        bare.note_verifiers()
