"""``affidavit witness keygen|vkey|serve``: key files, vkeys, and the refused starts (one line,
exit 2, before any server runs)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    parse_checkpoint_body,
    parse_verifier_key,
)
from affidavit.verify.tlog.cosignature import ML_DSA_44, parse_cosigner_vkey, verify_cosignatures
from affidavit.witness.cosigner import check_origins, load_witness_keys
from click.testing import CliRunner

from tests.conftest import raises_code
from tests.witness.helpers import AFFIDAVIT, Tree, free_port, write_key

NAME = "witness.example/w1"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(affidavit, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_keygen_writes_private_pkcs8_files_and_prints_the_vkeys(tmp_path: Path) -> None:
    ed, ml = tmp_path / "w.key", tmp_path / "w.mldsa"
    code, out, err = _run("witness", "keygen", "--key", str(ed), "--ml-dsa-key", str(ml),
                          "--name", NAME)  # fmt: skip
    assert code == 0, err
    for path in (ed, ml):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    printed = out.splitlines()
    assert [parse_cosigner_vkey(v).algorithm for v in printed] == ["ed25519", ML_DSA_44]
    code, out, _ = _run("witness", "vkey", "--name", NAME, "--key", str(ed),
                        "--ml-dsa-key", str(ml))  # fmt: skip
    assert (code, out.splitlines()) == (0, printed)
    # never overwrites
    code, _, err = _run("witness", "keygen", "--key", str(ed))
    assert code == 2
    assert "io.exists" in err


def test_the_ml_dsa_cosignature_verifies_with_the_printed_vkey(tmp_path: Path) -> None:
    ed, ml = tmp_path / "w.key", tmp_path / "w.mldsa"
    assert _run("witness", "keygen", "--key", str(ed), "--ml-dsa-key", str(ml))[0] == 0
    keys = load_witness_keys(NAME, ed, ml)
    text = checkpoint_body("example.com/log", 7, bytes(range(32)))
    lines = keys.cosign(text, parse_checkpoint_body(text), 1_700_000_000)
    note = text + "\n\u2014 example.com/log AAAAAAAA\n" + "".join(lines)
    found = verify_cosignatures(note, [parse_cosigner_vkey(v) for v in keys.vkeys()])
    assert [(v.cosigner.algorithm, v.timestamp) for v in found] == [
        ("ed25519", 1_700_000_000),
        (ML_DSA_44, 1_700_000_000),
    ]
    with raises_code("usage.invalid"):
        keys.cosign(text, parse_checkpoint_body(text), 0)  # never a zero timestamp


def test_vkey_refuses_a_world_readable_key(tmp_path: Path) -> None:
    key = write_key(tmp_path / "w.key", derive_test_key("witness cli: witness"))
    os.chmod(key, 0o644)
    code, _, err = _run("witness", "vkey", "--name", NAME, "--key", str(key))
    assert code == 2
    assert err.startswith("error: key.insecure_permissions:")


def test_vkey_refuses_a_world_readable_ml_dsa_key(tmp_path: Path) -> None:
    ed, ml = tmp_path / "w.key", tmp_path / "w.mldsa"
    assert _run("witness", "keygen", "--key", str(ed), "--ml-dsa-key", str(ml))[0] == 0
    os.chmod(ml, 0o640)
    code, _, err = _run(
        "witness", "vkey", "--name", NAME, "--key", str(ed), "--ml-dsa-key", str(ml)
    )
    assert code == 2
    assert err.startswith("error: key.insecure_permissions:")


def test_vkey_refuses_an_ed25519_key_as_the_ml_dsa_key(tmp_path: Path) -> None:
    ed = write_key(tmp_path / "w.key", derive_test_key("witness cli: witness"))
    code, _, err = _run(
        "witness", "vkey", "--name", NAME, "--key", str(ed), "--ml-dsa-key", str(ed)
    )
    assert code == 2
    assert err.startswith("error: key.unrecognized:")


def test_vkey_refuses_a_bad_name(tmp_path: Path) -> None:
    ed = write_key(tmp_path / "w.key", derive_test_key("witness cli: witness"))
    code, _, err = _run("witness", "vkey", "--name", "a b", "--key", str(ed))
    assert (code, err.split(":")[1].strip()) == (2, "usage.invalid")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AFFIDAVIT, "witness", "serve", "--host", "127.0.0.1", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("bad-vkey", "key.vkey_malformed"),
        ("log-key", "usage.invalid"),
        ("port-in-use", "net.bind_failed"),  # as registry serve (issue 22)
        ("state-is-a-file", "store.unreadable"),
    ],
)
def test_serve_refuses_to_start_with_one_line(tmp_path: Path, case: str, code: str) -> None:
    log = Tree(3)
    key = write_key(tmp_path / "w.key", derive_test_key("witness cli: witness"))
    args = ["--name", NAME, "--key", str(key), "--state", str(tmp_path / "state")]
    vkey = log.vkey
    port = free_port()
    blocker = None
    if case == "bad-vkey":
        name, _, data = vkey.split("+", 2)
        vkey = f"{name}+00000000+{data}"  # a key ID that is not the key's
    elif case == "log-key":
        args[3] = str(write_key(tmp_path / "log.key", log.key))
    elif case == "state-is-a-file":
        (tmp_path / "state").mkdir()
        (tmp_path / "state" / "witness.db").write_text("not a database, " * 100)
    else:
        import socket

        blocker = socket.socket()
        blocker.bind(("127.0.0.1", port))
        blocker.listen()
    try:
        done = _serve(*args, "--log-vkey", vkey, "--port", str(port))
    finally:
        if blocker is not None:
            blocker.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {code}:"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_serve_with_an_ml_dsa_key_refuses_a_log_origin_over_255_bytes(tmp_path: Path) -> None:
    # issue 38: subtree/v1 encodes log_origin<1..2^8-1>; such a log would be 503 forever
    ed, ml = tmp_path / "w.key", tmp_path / "w.mldsa"
    assert _run("witness", "keygen", "--key", str(ed), "--ml-dsa-key", str(ml))[0] == 0
    long_log, short_log = Tree(3, origin="example.com/" + "l" * 244), Tree(3)
    assert len(long_log.origin.encode()) == 256
    args = ["--name", NAME, "--key", str(ed), "--state", str(tmp_path / "state")]
    args += ["--ml-dsa-key", str(ml), "--port", str(free_port())]
    done = _serve(*args, "--log-vkey", short_log.vkey, "--log-vkey", long_log.vkey)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: usage.invalid: "), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "255 bytes" in done.stderr
    with raises_code("usage.invalid"):
        check_origins(load_witness_keys(NAME, ed, ml), [parse_verifier_key(long_log.vkey)])
    check_origins(load_witness_keys(NAME, ed), [parse_verifier_key(long_log.vkey)])  # Ed25519


def test_serve_json_banner_names_the_monitoring_paths(tmp_path: Path) -> None:
    from affidavit.witness.protocol import origin_hash

    from tests.witness.helpers import WitnessProcess

    log = Tree(3)
    key = write_key(tmp_path / "w.key", derive_test_key("witness cli: witness"))
    process = WitnessProcess(key, tmp_path / "state", [log.vkey], name=NAME)
    process.args.append("--json")
    process.process = subprocess.Popen(
        [*process.args, "--host", "127.0.0.1", "--port", str(process.port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.process.stdout is not None
        lines = []
        for line in process.process.stdout:
            lines.append(line)
            if line == "}\n":
                break
        banner = json.loads("".join(lines))
    finally:
        process.process.terminate()
        process.process.wait(15)
        for stream in (process.process.stdout, process.process.stderr):
            if stream is not None:
                stream.close()
        process.process = None
    assert banner["listening"] == process.url
    assert banner["logs"] == {log.origin: f"/{origin_hash(log.origin)}/checkpoint"}
    assert banner["vkeys"] == load_witness_keys(NAME, key).vkeys()
