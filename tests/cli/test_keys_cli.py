"""``affidavit keys generate`` in-process; a key of the wrong half given to a command."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.stamp import example_contract
from affidavit.cli.main import affidavit
from click.testing import CliRunner

from tests.conftest import ROOT
from tests.schemas import assert_output_schema
from tests.verify.bundles.test_bundle_support import OUTPUTS, POLICY


def test_keys_generate_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        affidavit,
        [
            "keys",
            "generate",
            "--dir",
            str(tmp_path),
            "--publisher-id",
            "demo",
            "--key-id",
            "demo-1",
            "--manifest-url",
            "https://demo.example/m.json",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    key_path = Path(report["private_key_path"])
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    key = load_signing_key(key_path)
    assert key.public_key.b64 == report["public_key_base64"]
    assert key.publisher_id == "demo"
    document = json.loads((tmp_path / "demo-publisher.json").read_text())
    assert document["manifest_url"] == "https://demo.example/m.json"


def test_keys_generate_text_then_refuses_overwrite(tmp_path: Path) -> None:
    args = ["keys", "generate", "--dir", str(tmp_path), "--publisher-id", "p", "--key-id", "k"]
    first = CliRunner().invoke(affidavit, args)
    assert first.exit_code == 0, first.output
    assert "0600" in first.stdout
    before = (tmp_path / "k.key").read_bytes()
    second = CliRunner().invoke(affidavit, args)
    assert second.exit_code == 2
    assert second.stderr.startswith("error: io.exists: ")
    assert (tmp_path / "k.key").read_bytes() == before


def test_keys_generate_bad_id_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        affidavit,
        ["keys", "generate", "--dir", str(tmp_path), "--publisher-id", "../x", "--key-id", "k"],
    )
    assert result.exit_code == 2
    assert "error: usage.invalid" in result.stderr
    assert list(tmp_path.iterdir()) == []


# -- a key of the wrong half (issue 22) --------------------------------------------------------

_MAIN = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"


def _keys(tmp_path: Path) -> tuple[Path, Path]:
    args = ["keys", "generate", "--dir", str(tmp_path), "--publisher-id", "p", "--key-id", "x"]
    assert CliRunner().invoke(affidavit, args).exit_code == 0
    return tmp_path / "x.key", tmp_path / "x.pub"


def _one_line(argv: list[str], code: str, says: str) -> str:
    # a real process: no pytest warning filter, so a Python warning would show on stderr
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {code}: ")
    assert says in done.stderr
    return done.stderr


@pytest.mark.parametrize(
    "line",
    [
        "log init {tmp}/log.db --key {pub} --log-id t",
        "facts sign --key {pub} {facts}",
        "receipt make --source {output} --content {output} --key {pub} --adapter a "
        "--adapter-version 1 --out {tmp}/r.json",
        "stamp --contract {contract} --policy {policy} --log {tmp}/log.db --key {pub} "
        "--adapter-output {output} --deal-id d --out {tmp}/b.json",
    ],
)
def test_a_public_key_where_a_private_one_is_expected(tmp_path: Path, line: str) -> None:
    _, public = _keys(tmp_path)
    files = {
        "contract": example_contract(),
        "policy": POLICY.to_json(),
        "output": OUTPUTS["accepted"],
    }
    for name, document in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    argv = line.format(
        tmp=tmp_path,
        pub=public,
        facts=ROOT / "vectors" / "lineage" / "facts.jsonl",
        **{name: tmp_path / f"{name}.json" for name in files},
    ).split()
    said = _one_line(argv, "key.unrecognized", f"{public}: a public key, not a private key")
    assert "private key file is readable" not in said


@pytest.mark.parametrize(
    "line",
    [
        "verify bundle {bundle} --public-key {key}",
        "verify dsse {bundle} --public-key {key}",
        "facts walk {hash} --store {tmp}/s.jsonl --trusted-key {key}",
    ],
)
def test_a_private_key_where_a_public_one_is_expected(tmp_path: Path, line: str) -> None:
    private, _ = _keys(tmp_path)
    (tmp_path / "s.jsonl").write_text("")
    bundle = ROOT / "vectors" / "bundles" / "stamped-accepted-2.0.0.json"
    argv = line.format(tmp=tmp_path, key=private, bundle=bundle, hash="0" * 64).split()
    _one_line(argv, "key.unrecognized", f"{private}: a PEM PRIVATE KEY, not a PUBLIC KEY")


def test_an_insecure_private_key_is_one_warning_line(tmp_path: Path) -> None:
    private, _ = _keys(tmp_path)
    os.chmod(private, 0o644)
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, "log", "init", str(tmp_path / "log.db"), "--key",
         str(private), "--log-id", "t"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"warning: {private}: private key file is readable by group or others (chmod 600 it)\n"
    )


# --- issue 33: one verb makes every kind of key; keys inspect says what a key file is


def _run(*args: str) -> Any:
    return CliRunner().invoke(affidavit, list(args))


def test_keys_generate_makes_witness_keys_as_witness_keygen_did(tmp_path: Path) -> None:
    made = _run("keys", "generate", "--kind", "witness", "--dir", str(tmp_path), "--key-id", "w1",
                "--ml-dsa", "--name", "w.example/w1", "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    document = json.loads(made.stdout)
    assert_output_schema("keys generate", document)
    assert document["files"] == [str(tmp_path / "w1.key"), str(tmp_path / "w1.mldsa")]
    for name in ("w1.key", "w1.mldsa"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    # the same vkeys as the old verb prints for these files (witness keygen: hidden, kept)
    vkey = _run("witness", "vkey", "--name", "w.example/w1", "--key", str(tmp_path / "w1.key"),
                "--ml-dsa-key", str(tmp_path / "w1.mldsa"), "--json")  # fmt: skip
    assert json.loads(vkey.stdout)["vkeys"] == document["vkeys"]
    old = _run("witness", "keygen", "--key", str(tmp_path / "old.key"), "--json")
    assert old.exit_code == 0, old.output
    again = _run("keys", "generate", "--kind", "witness", "--dir", str(tmp_path), "--key-id", "w1")
    assert again.exit_code == 2
    assert again.stderr.startswith("error: io.exists: ")


def test_keys_generate_refuses_options_of_the_other_kind(tmp_path: Path) -> None:
    for args in (
        ["--kind", "witness", "--publisher-id", "acme"],
        ["--ml-dsa", "--publisher-id", "acme"],
    ):
        result = _run("keys", "generate", "--dir", str(tmp_path), "--key-id", "k", *args)
        assert result.exit_code == 2
        assert result.stderr.startswith("error: usage.invalid: "), result.stderr
    missing = _run("keys", "generate", "--dir", str(tmp_path), "--key-id", "k")
    assert (missing.exit_code, missing.stderr.count("\n")) == (2, 1)
    assert missing.stderr.startswith("error: usage.missing_argument: publisher keys need")


def test_keys_inspect_names_a_key_and_never_prints_its_secret(tmp_path: Path) -> None:
    made = _run("keys", "generate", "--dir", str(tmp_path), "--publisher-id", "acme",
                "--key-id", "k1", "--json")  # fmt: skip
    public_b64 = json.loads(made.stdout)["public_key_base64"]
    private = tmp_path / "k1.key"
    secret = private.read_text()
    seed_b64 = base64.b64encode(load_signing_key(private).seed).decode()
    document = tmp_path / "acme-publisher.json"
    seen = {}
    for path in (private, tmp_path / "k1.pub", document):
        result = _run("keys", "inspect", str(path), "--name", "log.example", "--json")
        assert result.exit_code == 0, result.output
        seen[path.name] = json.loads(result.stdout)
        assert_output_schema("keys inspect", seen[path.name])
        text = _run("keys", "inspect", str(path)).stdout
        for output in (result.stdout, text):
            assert seed_b64 not in output
            assert all(line not in output for line in secret.splitlines()[1:-1])
    for found in seen.values():
        assert found["public_key_base64"] == public_b64
        assert found["key_id"] == "k1"
        assert found["publisher_id"] == "acme"
        assert found["publisher_document"] == str(document)
        assert found["vkeys"][0].startswith("log.example+")
    assert seen["k1.key"]["kind"].startswith("Ed25519 private key")
    assert seen["acme-publisher.json"]["kind"] == "publisher document"
    bad = _run("keys", "inspect", str(tmp_path / "absent.key"))
    assert (bad.exit_code, bad.stderr.count("\n")) == (2, 1)
    assert bad.stderr.startswith("error: io.unreadable: ")
