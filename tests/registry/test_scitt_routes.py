"""SCRAPI on real registry processes (registry/routes/scitt.py): registration into the same log
the tiles and checkpoints serve, receipts that verify here and in scitt-cose, the registration
policy, strict CBOR refused as concise problem details, 303/302 while the log is locked, the rate
limit and the keys."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.attest.keyring import load_signing_key, public_key_pem
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.scitt.cbor import decode, encode
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.receipt import verify_receipt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.processes import RegistryProcess
from tests.verify.scitt.support import ISSUER, OTHER, edit, statement

pytestmark = pytest.mark.network_local
COSE = {"Content-Type": "application/cose"}
PROBLEM = "application/concise-problem-details+cbor"
P256 = ec.derive_private_key(0x5C177E57, ec.SECP256R1())  # TEST-ONLY


def _issuers(folder: Path) -> Path:
    folder.mkdir()
    (folder / "issuer.pub").write_text(ISSUER.public_key.b64 + "\n")
    (folder / "issuer.pub.iss").write_text("https://issuer.example\n")  # what it signs for
    (folder / "vendor.pem.iss").write_text("vendor\n")
    (folder / "vendor.pem").write_bytes(
        P256.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    (folder / "README.md").write_text("not a key: skipped\n")
    return folder


def _start(tmp: Path, **env: str) -> RegistryProcess:
    process = RegistryProcess(
        tmp / "data", env={"AFFIDAVIT_SCITT_ISSUERS": str(_issuers(tmp / "iss")), **env}
    )
    process.start()
    return process


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryProcess]:
    process = _start(tmp_path_factory.mktemp("scitt"))
    try:
        yield process
    finally:
        process.stop()


def _log_key(process: RegistryProcess) -> CoseKey:
    key = load_signing_key(process.data_dir / "keys" / "registry-1.key")
    return CoseKey.from_ed25519(key.public_key, "registry")


def _problem(response: httpx.Response) -> tuple[str, str]:
    assert response.headers["content-type"] == PROBLEM
    body = decode(response.content, what="problem")
    return body[-1], body[-2].split(":", 1)[0]


def _checkpoint(process: RegistryProcess) -> tuple[int, bytes]:
    """The size and root of the log's checkpoint, verified under the log key."""
    note = httpx.get(process.url + "/tlog/checkpoint").content
    key = load_signing_key(process.data_dir / "keys" / "registry-1.key").public_key
    vkey = parse_verifier_key(verifier_key_string("affidavit-registry", key))
    checkpoint = verify_checkpoint(note, [vkey]).checkpoint
    return checkpoint.tree_size, checkpoint.root_hash


def test_a_statement_is_registered_in_the_log_and_its_receipt_verifies(
    registry: RegistryProcess,
) -> None:
    oracle = pytest.importorskip("scitt_cose.receipt")
    signed = statement(subject="pkg:routes@1")
    response = httpx.post(registry.url + "/entries", content=signed, headers=COSE)
    assert response.status_code == 201, response.content
    assert response.headers["content-type"] == "application/cose"
    entry = hashlib.sha256(signed).digest()
    assert response.headers["location"] == f"{registry.url}/entries/{entry.hex()}"
    check = verify_receipt(response.content, entry, [_log_key(registry)])
    # the receipt's root is the log's checkpoint root at that size: the same tree
    assert _checkpoint(registry) == (check.tree_size, check.root)
    # the leaf entry is in the entry bundles the tiles serve (C2SP tlog-tiles)
    bundle = httpx.get(registry.url + "/tlog/tile/entries/000.p/" + str(check.tree_size))
    assert bundle.status_code == 200
    assert entry in bundle.content
    # and scitt-cose verifies it under the same key
    result = oracle.verify_receipt(
        response.content,
        leaf_entry_hex=entry.hex(),
        log_public_key_pem=public_key_pem(
            load_signing_key(registry.data_dir / "keys" / "registry-1.key").public_key
        ),
    )
    assert result.ok, result.errors
    # GET /entries/{id}: a fresh receipt for the current tree, same leaf
    again = httpx.get(response.headers["location"])
    assert again.status_code == 200
    assert verify_receipt(again.content, entry, [_log_key(registry)]).leaf_index == check.leaf_index


def test_every_registration_root_is_the_checkpoint_root_and_a_repeat_adds_no_leaf(
    registry: RegistryProcess,
) -> None:
    seen = []
    for n in range(3):
        signed = statement(subject=f"pkg:many@{n}")
        response = httpx.post(registry.url + "/entries", content=signed, headers=COSE)
        assert response.status_code == 201
        check = verify_receipt(
            response.content, hashlib.sha256(signed).digest(), [_log_key(registry)]
        )
        assert _checkpoint(registry) == (check.tree_size, check.root)
        seen.append(check.leaf_index)
    assert seen == sorted(set(seen))
    size = _checkpoint(registry)[0]
    repeat = httpx.post(
        registry.url + "/entries", content=statement(subject="pkg:many@0"), headers=COSE
    )
    assert repeat.status_code == 201
    assert (
        verify_receipt(
            repeat.content,
            hashlib.sha256(statement(subject="pkg:many@0")).digest(),
            [_log_key(registry)],
        ).leaf_index
        == seen[0]
    )
    assert _checkpoint(registry)[0] == size  # no second leaf


def test_an_es256_statement_of_a_trusted_issuer_is_registered(registry: RegistryProcess) -> None:
    scitt_cose = pytest.importorskip("scitt_cose")
    pem = P256.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    signed = scitt_cose.build_signed_statement(
        b"{}",
        alg="ES256",
        private_key_pem=pem,
        issuer="vendor",
        subject="pkg:vendor@1",
        content_type="application/json",
    )
    response = httpx.post(registry.url + "/entries", content=signed, headers=COSE)
    assert response.status_code == 201
    verify_receipt(response.content, hashlib.sha256(signed).digest(), [_log_key(registry)])


def _duplicate_alg(parts: list[Any]) -> None:
    header = encode(parts[0])
    parts[0] = bytes([header[0] + 1]) + header[1:] + b"\x01\x27"


@pytest.mark.parametrize(
    ("name", "body", "status", "code"),
    [
        (
            "untrusted issuer",
            lambda: __import__("affidavit.attest.scitt", fromlist=["x"]).sign_statement(
                b"x", OTHER, issuer="mallory", subject="s"
            ),
            400,
            "scitt.issuer_untrusted",
        ),
        (
            # RFC 9943 §5.1.1.1: the key of the issuer the statement names; issuer.pub is trusted,
            # but bound to https://issuer.example only (issuer.pub.iss), not to "vendor"
            "a trusted key signing as another issuer",
            lambda: __import__("affidavit.attest.scitt", fromlist=["x"]).sign_statement(
                b"x", ISSUER, issuer="vendor", subject="pkg:vendor@1"
            ),
            400,
            "scitt.issuer_mismatch",
        ),
        ("duplicate map key", lambda: edit(statement(), _duplicate_alg), 400, "cbor.duplicate_key"),
        (
            "indefinite length",
            lambda: statement().replace(b"\xa0", b"\xbf\xff", 1),
            400,
            "cbor.indefinite_length",
        ),
        ("trailing bytes", lambda: statement() + b"\x00", 400, "cbor.trailing_bytes"),
        ("not a statement", lambda: encode([1, 2]), 400, "scitt.cose_malformed"),
        (
            "detached payload",
            lambda: edit(statement(), lambda p: p.__setitem__(2, None)),
            400,
            "scitt.payload_missing",
        ),
        (
            "alg ES384",
            lambda: edit(statement(), lambda p: p[0].__setitem__(1, -35)),
            400,
            "scitt.alg_unsupported",
        ),
        (
            "tampered payload",
            lambda: edit(statement(), lambda p: p.__setitem__(2, b"changed")),
            400,
            "scitt.issuer_untrusted",
        ),
        ("oversize", lambda: b"\x00" * (1024 * 1024 + 1), 413, "http.body_too_large"),
    ],
)
def test_a_refused_statement_is_problem_details_and_nothing_is_logged(
    registry: RegistryProcess, name: str, body: Any, status: int, code: str
) -> None:
    before = _checkpoint(registry)[0]
    response = httpx.post(registry.url + "/entries", content=body(), headers=COSE)
    assert response.status_code == status, name
    assert _problem(response)[1] == code, name
    assert b"issuer.pub" not in response.content, name  # the operator's key files stay private
    assert _checkpoint(registry)[0] == before


def test_other_refusals(registry: RegistryProcess) -> None:
    response = httpx.post(
        registry.url + "/entries", content=statement(), headers={"Content-Type": "application/json"}
    )
    assert (response.status_code, _problem(response)[1]) == (415, "scitt.media_type_unsupported")
    response = httpx.get(registry.url + "/entries/nothex")
    assert (response.status_code, _problem(response)) == (
        400,
        ("Invalid locator", "scitt.entry_id_invalid"),
    )
    response = httpx.get(registry.url + "/entries/" + "0" * 64)
    assert (response.status_code, _problem(response)[1]) == (404, "scitt.entry_not_found")


def test_the_keys_are_a_cose_key_set_with_thumbprint_kids(registry: RegistryProcess) -> None:
    response = httpx.get(registry.url + "/.well-known/scitt-keys")
    assert response.headers["content-type"] == "application/cbor"
    keys = decode(response.content, what="keys")
    expected = _log_key(registry)
    assert keys == [expected.to_cose()]
    kid = base64.urlsafe_b64encode(expected.thumbprint).rstrip(b"=").decode()
    one = httpx.get(f"{registry.url}/.well-known/scitt-keys/{kid}")
    assert decode(one.content, what="key") == expected.to_cose()
    missing = httpx.get(f"{registry.url}/.well-known/scitt-keys/{kid[:-2]}AA")
    assert (missing.status_code, _problem(missing)) == (404, ("No such key", "registry.not_found"))
    for other in (f"{kid}=", kid[:-1] + chr(ord(kid[-1]) + 1)):  # padded; other trailing bits
        assert httpx.get(f"{registry.url}/.well-known/scitt-keys/{other}").status_code == 404


def test_no_issuer_folder_refuses_every_statement(tmp_path: Path) -> None:
    process = RegistryProcess(tmp_path / "data")
    process.start()
    try:
        response = httpx.post(process.url + "/entries", content=statement(), headers=COSE)
        assert (response.status_code, _problem(response)) == (
            400,
            ("Rejected", "scitt.issuer_untrusted"),
        )
    finally:
        process.stop()


def test_303_then_302_while_the_log_is_locked_then_200(tmp_path: Path) -> None:
    process = _start(tmp_path, AFFIDAVIT_SCITT_WAIT="0.3")
    try:
        httpx.get(process.url + "/tlog/checkpoint")  # the database exists
        holder = sqlite3.connect(process.data_dir / "registry.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        try:
            signed = statement(subject="pkg:slow@1")
            response = httpx.post(process.url + "/entries", content=signed, headers=COSE)
            assert response.status_code == 303
            assert response.headers["retry-after"] == "1"
            location = response.headers["location"]
            assert location.endswith(hashlib.sha256(signed).hexdigest())
            pending = httpx.get(location)
            assert (pending.status_code, pending.headers["location"]) == (302, location)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        deadline = time.monotonic() + 20
        while (done := httpx.get(location)).status_code == 302 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done.status_code == 200
        verify_receipt(done.content, hashlib.sha256(signed).digest(), [_log_key(process)])
    finally:
        process.stop()


def test_a_client_over_the_rate_gets_429_with_retry_after(tmp_path: Path) -> None:
    process = _start(tmp_path, AFFIDAVIT_SCITT_RATE="1")  # bursts of 2
    try:
        answers = [httpx.get(process.url + "/entries/" + "0" * 64) for _ in range(4)]
        assert [a.status_code for a in answers][:2] == [404, 404]
        limited = answers[-1]
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "1"
        assert _problem(limited) == ("Too Many Requests", "scitt.rate_limited")
    finally:
        process.stop()
