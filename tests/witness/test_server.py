"""``affidavit witness serve`` as a real process: every status of add-checkpoint (status, content
type, body), the monitoring endpoint, the cosignatures (Ed25519 and ML-DSA-44) verified offline."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verify_checkpoint
from affidavit.verify.crypto.merkle import EMPTY_ROOT
from affidavit.verify.tlog.cosignature import ML_DSA_44, parse_cosigner_vkey, verify_cosignatures
from affidavit.witness.cosigner import load_witness_keys
from affidavit.witness.protocol import origin_hash
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from tests.witness.helpers import Tree, WitnessProcess, write_key

pytestmark = pytest.mark.network_local

NAME = "witness.example/w1"
TEXT = "text/plain; charset=utf-8"
# One origin per test, so the tests share one witness process without sharing state.
ORIGINS = [f"example.com/log{i}" for i in range(16)]
LOG_KEY = derive_test_key("witness server tests: log")


def tree(i: int, n: int = 20) -> Tree:
    return Tree(n, LOG_KEY, ORIGINS[i])


def write_ml_dsa(path: Path, label: str) -> Path:
    key = MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(label.encode()).digest())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.chmod(path, 0o600)
    return path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {
        "ed25519": write_key(folder / "w.key", derive_test_key("witness server tests: witness")),
        "ml_dsa": write_ml_dsa(folder / "w.mldsa", "witness server tests: ml-dsa"),
    }


@pytest.fixture(scope="module")
def witness(
    keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WitnessProcess]:
    vkeys = [tree(i).vkey for i in range(len(ORIGINS))]
    state = tmp_path_factory.mktemp("state")
    with WitnessProcess(
        keys["ed25519"], state, vkeys, name=NAME, ml_dsa_key=keys["ml_dsa"]
    ) as process:
        yield process


@pytest.fixture
def client(witness: WitnessProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=witness.url, timeout=10) as opened:
        yield opened


def post(client: httpx.Client, body: bytes) -> httpx.Response:
    return client.post("/add-checkpoint", content=body)


def assert_text(response: httpx.Response, status: int, contains: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == TEXT
    assert response.text.endswith("\n")
    assert contains in response.text


def cosigners(keys: dict[str, Path]) -> list[object]:
    loaded = load_witness_keys(NAME, keys["ed25519"], keys["ml_dsa"])
    return [parse_cosigner_vkey(v) for v in loaded.vkeys()]


def test_200_returns_ed25519_and_ml_dsa_cosignatures_that_verify(
    client: httpx.Client, keys: dict[str, Path]
) -> None:
    log = tree(0)
    response = post(client, log.body(0, 5))
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    lines = response.text.splitlines(keepends=True)
    assert len(lines) == 2
    assert all(line.startswith(f"\u2014 {NAME} ") and line.endswith("\n") for line in lines)
    found = verify_cosignatures(log.note(5) + response.text, cosigners(keys))  # type: ignore[arg-type]
    assert [v.cosigner.algorithm for v in found] == ["ed25519", ML_DSA_44]
    assert all(v.timestamp > 0 for v in found)


def test_a_tampered_cosignature_does_not_verify(
    client: httpx.Client, keys: dict[str, Path]
) -> None:
    from tests.conftest import raises_code

    log = tree(1)
    response = post(client, log.body(0, 4))
    assert response.status_code == 200
    other_root = log.note(4, root=log.root(3))  # a checkpoint the witness never cosigned
    with raises_code("tlog.cosignature_bad"):
        verify_cosignatures(other_root + response.text, cosigners(keys))  # type: ignore[arg-type]


def test_400_malformed_body(client: httpx.Client) -> None:
    assert_text(post(client, b"old 01\n\n" + tree(2).note(1).encode()), 400, "old <size>")
    assert_text(post(client, b"nonsense"), 400, "empty line")


def test_400_old_size_above_the_checkpoint(client: httpx.Client) -> None:
    assert_text(post(client, tree(2).body(6, 5, proof=[])), 400, "above the checkpoint size")


def test_404_unknown_origin(client: httpx.Client) -> None:
    other = Tree(5, LOG_KEY, "unknown.example/log")
    assert_text(post(client, other.body(0, 3)), 404, "unknown log origin")


def test_403_signature(client: httpx.Client) -> None:
    log = tree(3)
    impostor = derive_test_key("witness server tests: impostor")
    response = post(client, b"old 0\n\n" + log.note(3, key=impostor).encode())
    assert_text(response, 403, "not signed by the log")
    tampered = log.note(3).replace("\n3\n", "\n4\n", 1)
    assert_text(post(client, b"old 0\n\n" + tampered.encode()), 403, "does not verify")


def test_409_text_x_tlog_size(client: httpx.Client) -> None:
    log = tree(4)
    assert post(client, log.body(0, 7)).status_code == 200
    response = post(client, log.body(0, 9))
    assert response.status_code == 409
    assert response.headers["content-type"] == "text/x.tlog.size"  # exactly, no charset
    assert response.content == b"7\n"
    response = post(client, log.body(3, 9))
    assert (response.status_code, response.content) == (409, b"7\n")
    assert post(client, log.body(7, 9)).status_code == 200
    response = post(client, log.body(7, 9))
    assert (response.status_code, response.content) == (409, b"9\n")


def test_422_cases(client: httpx.Client) -> None:
    log = tree(5)
    # a size-0 checkpoint whose root is not the empty tree's
    body = b"old 0\n\n" + log.note(0, root=b"\x07" * 32).encode()
    assert_text(post(client, body), 422, "empty tree")
    # a proof with old size 0
    assert_text(post(client, log.body(0, 4, proof=[EMPTY_ROOT])), 422, "from size 0")
    assert post(client, log.body(0, 4)).status_code == 200
    # a consistency proof that does not verify
    bad = log.proof(4, 9)
    bad[0] = bytes(32)
    assert_text(post(client, log.body(4, 9, proof=bad)), 422, "does not verify")
    # the same size with another root (a fork)
    forked = b"old 4\n\n" + log.note(4, root=log.root(3)).encode()
    assert_text(post(client, forked), 422, "another root")
    # nothing of the refused requests was recorded
    assert post(client, log.body(4, 9)).status_code == 200


def test_same_size_and_root_is_cosigned_again(client: httpx.Client) -> None:
    log = tree(6)
    assert post(client, log.body(0, 3)).status_code == 200
    response = post(client, log.body(3, 3))
    assert response.status_code == 200
    assert response.text.startswith(f"\u2014 {NAME} ")


def test_an_empty_log_is_cosigned(client: httpx.Client) -> None:
    log = tree(7)
    assert post(client, log.body(0, 0)).status_code == 200
    assert post(client, log.body(0, 2)).status_code == 200


def test_405_wrong_method(client: httpx.Client) -> None:
    response = client.get("/add-checkpoint")
    assert_text(response, 405, "GET is not allowed")
    assert response.headers["allow"] == "POST"
    response = client.put("/add-checkpoint", content=b"old 0\n\n")
    assert_text(response, 405, "PUT is not allowed")
    digest = origin_hash(ORIGINS[0])
    assert_text(client.post(f"/{digest}/checkpoint", content=b""), 405, "POST is not allowed")


def test_413_body_over_the_limit(client: httpx.Client) -> None:
    response = post(client, b"old 0\n" + b"A" * (1024 * 1024 + 1))
    assert_text(response, 413, "over the limit")


def _unknown_key_line(name: str, size: int) -> str:
    """A signature line of a key the witness does not know, ``size`` bytes after the key ID."""
    return f"\u2014 {name} {base64.b64encode(bytes(4 + size)).decode()}\n"


def test_413_a_body_over_what_16_signatures_need(client: httpx.Client) -> None:
    # issue 38: signed-note verifiers SHOULD bound a note; 64 KiB holds 16 ML-DSA-44 lines
    note = tree(12).note(3)
    body = b"old 0\n\n" + (note + _unknown_key_line("other.example/k", 49_000)).encode()
    assert len(body) > 64 * 1024
    assert_text(post(client, body), 413, "over the limit")


def test_16_signatures_of_ml_dsa_44_size_are_cosigned(client: httpx.Client) -> None:
    # signed-note: verifiers MUST accept at least 16 signatures; ML-DSA-44's are 2,420 bytes
    log = tree(15)
    extra = "".join(_unknown_key_line(f"{n:02}" + "k" * 253, 2420) for n in range(15))
    body = b"old 0\n\n" + (log.note(3) + extra).encode()
    assert len(body) > 50_000
    assert post(client, body).status_code == 200


def test_a_size_beyond_2_63_minus_1_is_400_never_500(client: httpx.Client) -> None:
    # issue 38: the witness stores sizes as SQLite INTEGER (signed 64-bit), as Go's tlog parses them
    log = tree(13)
    for size in (2**63, 2**64 - 1):
        body = b"old 0\n\n" + log.note(size, root=bytes(32)).encode()
        assert_text(post(client, body), 400, "2^63")
    body = b"old 0\n\n" + log.note(2**63 - 1, root=bytes(32)).encode()
    assert post(client, body).status_code == 200


def test_a_log_signature_repeated_byte_for_byte_is_cosigned(client: httpx.Client) -> None:
    # issue 38: the identical repeat is ignored (Go's note.Open), not "not signed by the log"
    log = tree(14)
    note = log.note(3)
    line = note.split("\n\n", 1)[1]
    assert post(client, b"old 0\n\n" + (note + line).encode()).status_code == 200
    served = client.get(f"/{origin_hash(log.origin)}/checkpoint").text
    assert served.startswith(note)
    assert served.count(line) == 1


def test_404_other_paths(client: httpx.Client) -> None:
    assert_text(client.get("/nothing/here"), 404, "Not Found")
    assert_text(client.get("/ABC/checkpoint"), 404, "origin hash")


def test_monitoring_serves_the_latest_cosigned_checkpoint(
    client: httpx.Client, keys: dict[str, Path]
) -> None:
    log = tree(8)
    digest = origin_hash(log.origin)
    assert_text(client.get(f"/{digest}/checkpoint"), 404, "never cosigned")
    assert post(client, log.body(0, 6)).status_code == 200
    assert post(client, log.body(6, 11)).status_code == 200
    assert post(client, log.body(6, 12)).status_code == 409  # refused: not recorded
    response = client.get(f"/{digest}/checkpoint")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    verified = verify_checkpoint(response.text, [parse_verifier_key(log.vkey)])
    assert verified.checkpoint.tree_size == 11
    found = verify_cosignatures(response.text, cosigners(keys))  # type: ignore[arg-type]
    assert len(found) == 2
    assert response.text.startswith(log.note(11))  # the log's signature kept as verified


def test_monitoring_drops_signatures_of_unknown_keys(client: httpx.Client) -> None:
    log = tree(9)
    other = derive_test_key("witness server tests: unrelated")
    extra = Tree(20, other, log.origin).note(2).split("\n\n", 1)[1]
    body = b"old 0\n\n" + (log.note(2) + extra).encode()
    assert post(client, body).status_code == 200
    served = client.get(f"/{origin_hash(log.origin)}/checkpoint").text
    assert extra not in served
    assert served.startswith(log.note(2))


def test_refusals_of_signed_checkpoints_are_logged(keys: dict[str, Path], tmp_path: Path) -> None:
    log = Tree(10, LOG_KEY, "logged.example/log")
    process = WitnessProcess(keys["ed25519"], tmp_path / "state", [log.vkey], name=NAME)
    with process, httpx.Client(base_url=process.url, timeout=10) as opened:
        assert post(opened, log.body(0, 4)).status_code == 200
        forked = b"old 4\n\n" + log.note(4, root=log.root(3)).encode()
        assert post(opened, forked).status_code == 422
    text = process.stderr.decode()
    assert '"event":"refused_signed_checkpoint"' in text
    assert '"status":422' in text
    assert "BEGIN" not in text  # no key material
