"""``affidavit verify checkpoint`` and ``affidavit verify inclusion`` in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.cli.main import affidavit
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from click.testing import CliRunner, Result

KEY = derive_test_key("TEST-ONLY cli checkpoint key")
ORIGIN = "affidavit.test/log"


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["verify", *args])


def _checkpoint(tmp_path: Path, size: int = 5) -> tuple[Path, str]:
    body = checkpoint_body(ORIGIN, size, merkle.leaf_hash(b"r"))
    line = note_signature_line(ORIGIN, KEY.public_key.key_id_c2sp(ORIGIN), KEY.sign(body.encode()))
    path = tmp_path / "checkpoint"
    path.write_text(format_note(body, [line]))
    return path, verifier_key_string(ORIGIN, KEY.public_key)


def test_verify_group_lists_its_commands() -> None:
    result = _run("--help")
    assert result.exit_code == 0
    assert "checkpoint" in result.stdout
    assert "inclusion" in result.stdout


def test_c2sp_example_checkpoint_cli(tmp_path: Path, peer_vectors: Path) -> None:
    example = json.loads((peer_vectors / "c2sp" / "signed_note_example.json").read_text())
    note = tmp_path / "note"
    note.write_text(example["note"])
    # The example's text is not a checkpoint body: signature ok, body malformed -> exit 2.
    result = _run("checkpoint", str(note), "--vkey", example["verifier_key"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: checkpoint.malformed: ")


def test_checkpoint_verified_text_and_json(tmp_path: Path) -> None:
    path, vkey = _checkpoint(tmp_path)
    text = _run("checkpoint", str(path), "--vkey", vkey)
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(f"verified: checkpoint {ORIGIN} size 5 ")
    result = _run("checkpoint", str(path), "--vkey", vkey, "--origin", ORIGIN, "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert (report["kind"], report["verdict"], report["tree_size"]) == ("checkpoint", "verified", 5)
    assert [s["status"] for s in report["steps"]] == ["ok", "ok", "ok"]
    assert report["root_hash"] == merkle.leaf_hash(b"r").hex()


def test_checkpoint_untrusted_key_exits_1(tmp_path: Path) -> None:
    path, _ = _checkpoint(tmp_path)
    other = verifier_key_string(ORIGIN, derive_test_key("TEST-ONLY other").public_key)
    result = _run("checkpoint", str(path), "--vkey", other)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: checkpoint.no_trusted_signature: ")
    as_json = _run("checkpoint", str(path), "--vkey", other, "--json")
    assert as_json.exit_code == 1
    document = json.loads(as_json.stdout)
    assert document["code"] == "checkpoint.no_trusted_signature"
    assert [(s["name"], s["status"]) for s in document["steps"]] == [
        ("note", "ok"), ("signature", "failed"), ("checkpoint", "not_checked")
    ]  # fmt: skip


def test_checkpoint_tampered_exits_1(tmp_path: Path) -> None:
    path, vkey = _checkpoint(tmp_path)
    path.write_text(path.read_text().replace("\n5\n", "\n6\n"))
    result = _run("checkpoint", str(path), "--vkey", vkey)
    assert result.exit_code == 1
    assert "checkpoint.signature_bad" in result.stderr


def test_checkpoint_origin_mismatch_exits_1(tmp_path: Path) -> None:
    path, vkey = _checkpoint(tmp_path)
    result = _run("checkpoint", str(path), "--vkey", vkey, "--origin", "elsewhere")
    assert result.exit_code == 1
    assert "checkpoint.origin_mismatch" in result.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--vkey", "not-a-key"], "key.vkey_malformed"),
        (["--vkey", "{vkey}", "{missing}"], "io.unreadable"),
    ],
)
def test_checkpoint_bad_input_exits_2(tmp_path: Path, args: list[str], code: str) -> None:
    path, vkey = _checkpoint(tmp_path)
    filled = [a.format(vkey=vkey, missing=tmp_path / "missing") for a in args]
    if "{missing}" not in args:
        filled.insert(0, str(path))
    result = _run("checkpoint", *filled)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {code}: ")


def test_checkpoint_requires_a_vkey(tmp_path: Path) -> None:
    path, _ = _checkpoint(tmp_path)
    assert _run("checkpoint", str(path)).exit_code == 2


def _inclusion_args(index: int = 3, size: int = 7, encode: str = "hex") -> list[str]:
    leaves = [merkle.leaf_hash(bytes([i])) for i in range(size)]

    def fmt(value: bytes) -> str:
        import base64

        return value.hex() if encode == "hex" else base64.b64encode(value).decode()

    args = ["inclusion", "--leaf-hash", fmt(leaves[index]), "--index", str(index)]
    args += ["--size", str(size), "--root", fmt(merkle.root_of(leaves))]
    for item in merkle.inclusion_proof(leaves, index):
        args += ["--proof", fmt(item)]
    return args


@pytest.mark.parametrize("encode", ["hex", "base64"])
def test_inclusion_verified(encode: str) -> None:
    result = _run(*_inclusion_args(encode=encode), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["proof_length"] == 3
    assert _run(*_inclusion_args(encode=encode)).stdout.startswith("verified: leaf 3 ")


def test_inclusion_peer_vector(peer_vectors: Path) -> None:
    case = json.loads((peer_vectors / "merkle" / "inclusion" / "1" / "happy-path.json").read_text())
    args = ["inclusion", "--leaf-hash", case["leafHash"], "--index", str(case["leafIdx"])]
    args += ["--size", str(case["treeSize"]), "--root", case["root"]]
    for item in case["proof"]:
        args += ["--proof", item]
    assert _run(*args).exit_code == 0


def test_inclusion_wrong_index_exits_1() -> None:
    args = _inclusion_args()
    args[args.index("--index") + 1] = "2"
    result = _run(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: merkle.root_mismatch: ")
    as_json = _run(*args, "--json")
    assert json.loads(as_json.stdout)["verdict"] == "failed"


def test_inclusion_missing_proof_exits_1() -> None:
    args = _inclusion_args()[:-2]
    result = _run(*args)
    assert result.exit_code == 1
    assert "merkle.bad_proof_length" in result.stderr


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("zz", "usage.invalid"),
        ("AAAA", "merkle.bad_hash_length"),
        ("0" * 64 + "\n", "usage.invalid"),
    ],
)
def test_inclusion_bad_hash_exits_2(value: str, code: str) -> None:
    args = _inclusion_args()
    args[args.index("--root") + 1] = value
    result = _run(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {code}: ")


def test_inclusion_negative_index_is_usage_error() -> None:
    args = _inclusion_args()
    args[args.index("--index") + 1] = "-1"
    assert _run(*args).exit_code == 2
