"""``affidavit log proof``, ``affidavit verify tlog-proof`` and ``verify bundle --policy``."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli.main import affidavit
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import verifier_key_string
from click.testing import CliRunner, Result

from tests.verify.bundles.test_bundle_support import LOG_KEY as BUNDLE_LOG_KEY
from tests.verify.tlog.proof_fixtures import (
    cosign_recorded,
    ed_cosigner,
    stamped_with_proofs,
    vkey_of,
    witness_policy,
)

KEY = derive_test_key("affidavit cli tlog-proof log key")  # TEST-ONLY
LOG_ID = "cli.test/tlog"


def _run(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(affidavit, list(args), input=stdin)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A log of three entries (in files), a cosigned checkpoint and the witness policy."""
    key_file = tmp_path / "log.key"
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(KEY))
    db = tmp_path / "log.db"
    assert _run("log", "init", str(db), "--key", str(key_file), "--log-id", LOG_ID).exit_code == 0
    entries = []
    for i in range(3):
        entry = tmp_path / f"entry{i}.txt"
        entry.write_bytes(f"cli entry {i}\n".encode())
        entries.append(str(entry))
    assert _run("log", "append", str(db), *entries).exit_code == 0
    head = _run("log", "head", str(db), "--checkpoint")
    assert head.exit_code == 0, head.output
    with TransparencyLog.open(db) as log:
        cosign_recorded(log, head.stdout)
    policy = tmp_path / "policy.txt"
    policy.write_text(witness_policy(verifier_key_string(LOG_ID, KEY.public_key)))
    return {
        "db": db,
        "policy": policy,
        "dir": tmp_path,
        **{f"entry{i}": Path(e) for i, e in enumerate(entries)},
    }


def _proof_file(files: dict[str, Path], index: int = 1) -> Path:
    out = files["dir"] / f"leaf{index}.tlog-proof"
    done = _run("log", "proof", str(files["db"]), "--index", str(index), "--out", str(out))
    assert done.exit_code == 0, done.output
    assert done.stdout == f"wrote {out}: the tlog-proof of leaf {index}\n"
    return out


# -- log proof ------------------------------------------------------------------------------------


def test_log_proof_prints_the_proof(files: dict[str, Path]) -> None:
    done = _run("log", "proof", str(files["db"]), "--index", "2")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("c2sp.org/tlog-proof@v1\nindex 2\n")
    assert _proof_file(files, 2).read_text() == done.stdout
    document = json.loads(_run("log", "proof", str(files["db"]), "--index", "2", "--json").stdout)
    assert document == {"ok": True, "index": 2, "tlog_proof": done.stdout}


def test_log_proof_with_extra_data(files: dict[str, Path]) -> None:
    extra = files["dir"] / "extra.bin"
    extra.write_bytes(b"\x00context\xff")
    done = _run("log", "proof", str(files["db"]), "--index", "0", "--extra-file", str(extra))
    assert done.exit_code == 0, done.output
    assert f"\nextra {base64.b64encode(extra.read_bytes()).decode()}\nindex 0\n" in done.stdout
    empty = files["dir"] / "empty.bin"
    empty.write_bytes(b"")
    refused = _run("log", "proof", str(files["db"]), "--index", "0", "--extra-file", str(empty))
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: usage.invalid:")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ((), "usage.invalid"),
        (("--index", "0", "--bundle", "b.json"), "usage.invalid"),
        (("--index", "0", "--json", "--out", "x"), "usage.invalid"),
        (("--index", "9"), "log.index_out_of_range"),
    ],
)
def test_log_proof_refusals(files: dict[str, Path], args: tuple[str, ...], code: str) -> None:
    done = _run("log", "proof", str(files["db"]), *args)
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: {code}:"), done.stderr


def test_log_proof_needs_a_checkpoint_covering_the_leaf(files: dict[str, Path]) -> None:
    assert _run("log", "append", str(files["db"]), str(files["entry0"])).exit_code == 0
    done = _run("log", "proof", str(files["db"]), "--index", "3")
    assert done.exit_code == 2
    assert done.stderr.startswith("error: log.no_checkpoint:")
    assert "affidavit log head DB --checkpoint" in done.stderr


# -- verify tlog-proof ----------------------------------------------------------------------------


def _verify(
    files: dict[str, Path], proof: Path | str, *extra: str, policy: Path | None = None
) -> Result:
    return _run(
        "verify", "tlog-proof", str(proof), "--policy", str(policy or files["policy"]), *extra
    )


def test_verify_tlog_proof_of_an_entry(files: dict[str, Path]) -> None:
    proof = _proof_file(files)
    done = _verify(files, proof, "--entry", str(files["entry1"]))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"verified: leaf 1 of {LOG_ID} (tree size 3, root ")
    assert done.stdout.endswith("cosigned by ed, pq; quorum both met\n")
    document = json.loads(_verify(files, proof, "--entry", str(files["entry1"]), "--json").stdout)
    assert (document["kind"], document["verdict"], document["index"]) == (
        "tlog_proof",
        "verified",
        1,
    )
    assert document["witnesses"] == ["ed", "pq"]
    assert [s["name"] for s in document["steps"]] == [
        "parse", "leaf_hash", "log_signature", "cosignatures", "quorum", "inclusion"
    ]  # fmt: skip


def test_verify_tlog_proof_by_leaf_hash_and_from_stdin(files: dict[str, Path]) -> None:
    proof = _proof_file(files)
    leaf = merkle.leaf_hash(files["entry1"].read_bytes())
    for spelled in (leaf.hex(), base64.b64encode(leaf).decode()):
        assert _verify(files, proof, "--leaf-hash", spelled).exit_code == 0
    piped = _run(
        "verify", "tlog-proof", "-", "--policy", str(files["policy"]), "--leaf-hash", leaf.hex(),
        stdin=proof.read_bytes(),
    )  # fmt: skip
    assert piped.exit_code == 0, piped.output


def test_verify_tlog_proof_failures_exit_1(files: dict[str, Path]) -> None:
    proof = _proof_file(files)
    wrong = _verify(files, proof, "--entry", str(files["entry2"]))
    assert wrong.exit_code == 1
    assert wrong.stderr.startswith("error: tlog.entry_mismatch:")
    document = json.loads(_verify(files, proof, "--entry", str(files["entry2"]), "--json").stdout)
    assert (document["verified"], document["verdict"]) == (False, "failed")
    assert document["code"] == "tlog.entry_mismatch"
    assert [s["status"] for s in document["steps"]] == ["ok"] * 5 + ["failed"]
    third = vkey_of(ed_cosigner(derive_test_key("third witness"), "third.example"))
    strict = files["dir"] / "strict.txt"
    strict.write_text(
        files["policy"].read_text().replace("quorum both\n", "")
        + f"witness third {third}\ngroup all3 all both third\nquorum all3\n"
    )
    unmet = _verify(files, proof, "--entry", str(files["entry1"]), policy=strict)
    assert unmet.exit_code == 1
    assert unmet.stderr.startswith("error: tlog.quorum_not_met: ")


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("proof-malformed", "tlog.proof_malformed"),
        ("policy-malformed", "tlog.policy_malformed"),
        ("no-entry", "usage.invalid"),
        ("both-entry-and-hash", "usage.invalid"),
        ("bad-leaf-hash", "usage.invalid"),
        ("missing-proof", "io.unreadable"),
    ],
)
def test_verify_tlog_proof_unreadable_input_exits_2(
    files: dict[str, Path], case: str, code: str
) -> None:
    proof = _proof_file(files)
    entry = ("--entry", str(files["entry1"]))
    bad = files["dir"] / "bad.txt"
    bad.write_text("quorum nobody\n")
    done = {
        "proof-malformed": lambda: _verify(files, files["entry1"], *entry),
        "policy-malformed": lambda: _verify(files, proof, *entry, policy=bad),
        "no-entry": lambda: _verify(files, proof),
        "both-entry-and-hash": lambda: _verify(files, proof, *entry, "--leaf-hash", "00" * 32),
        "bad-leaf-hash": lambda: _verify(files, proof, "--leaf-hash", "xyz"),
        "missing-proof": lambda: _verify(files, files["dir"] / "none", *entry),
    }[case]()
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"error: {code}:"), done.stderr


# -- bundles: log proof --bundle, verify bundle --policy ------------------------------------------


@pytest.fixture
def bundles(tmp_path: Path) -> dict[str, Any]:
    """A stamped bundle carrying its tlog-proof, the same without it, the log and the policy."""
    folder = tmp_path / "log"
    folder.mkdir()
    db, carried, policy = stamped_with_proofs(folder, ("accepted",))
    bare = {k: v for k, v in carried[0].items() if k != "tlog_proof"}
    (tmp_path / "bare.json").write_text(json.dumps(bare, indent=2) + "\n")
    (tmp_path / "policy.txt").write_text(policy)
    return {"db": db, "bare": tmp_path / "bare.json", "policy": tmp_path / "policy.txt",
            "dir": tmp_path, "carried": carried[0]}  # fmt: skip


def test_log_proof_bundle_adds_the_proof(bundles: dict[str, Any]) -> None:
    out = bundles["dir"] / "out.json"
    done = _run(
        "log", "proof", str(bundles["db"]), "--bundle", str(bundles["bare"]), "--out", str(out)
    )
    assert done.exit_code == 0, done.output
    written = json.loads(out.read_text())
    assert written == bundles["carried"]
    printed = _run("log", "proof", str(bundles["db"]), "--bundle", str(bundles["bare"]))
    assert json.loads(printed.stdout) == written
    key = BUNDLE_LOG_KEY.public_key.b64
    for args, code in (
        ((str(out), "--public-key-base64", key, "--policy", str(bundles["policy"])), 0),
        ((str(out), "--public-key-base64", key), 0),
        ((str(bundles["bare"]), "--public-key-base64", key), 0),
        ((str(bundles["bare"]), "--public-key-base64", key, "--policy", str(bundles["policy"])), 1),
    ):
        assert _run("verify", "bundle", *args).exit_code == code, args


def test_log_proof_bundle_of_another_log_is_refused(
    bundles: dict[str, Any], tmp_path: Path
) -> None:
    edited = json.loads(bundles["bare"].read_text())
    edited["merkle_inclusion"]["leaf_hash"] = "00" * 32
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edited))
    done = _run("log", "proof", str(bundles["db"]), "--bundle", str(path))
    assert done.exit_code == 2
    assert done.stderr.startswith("error: log.leaf_mismatch:")


_MAIN = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"


def _process(script: str, args: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout, done.stderr


def test_verify_bundle_policy_through_the_console_entry(bundles: dict[str, Any]) -> None:
    carried = bundles["dir"] / "carried.json"
    carried.write_text(json.dumps(bundles["carried"]))
    bad_policy = bundles["dir"] / "bad.txt"
    bad_policy.write_text("quorum\n")
    policy = str(bundles["policy"])
    cases = {
        "verified": ([str(carried)], policy, 0, None),
        "missing": ([str(bundles["bare"])], policy, 1, "bundle.tlog_proof_missing"),
        "jobs": ([str(carried), str(bundles["bare"]), "--jobs", "2"], policy, 1, None),
        "bad-policy": ([str(carried)], str(bad_policy), 2, None),
    }
    key = ["--public-key-base64", BUNDLE_LOG_KEY.public_key.b64]
    for name, (inputs, policy_file, code, first_code) in cases.items():
        args = ["verify", "bundle", *inputs, *key, "--policy", policy_file, "--json"]
        done = _process(_MAIN, args)
        assert done[0] == code, (name, done)
        if code == 2:
            assert done[2].startswith("error: tlog.policy_malformed:"), done[2]
            continue
        first = json.loads(done[1])["results"][0]
        assert first["steps"][-1]["name"] == "tlog_proof"
        assert first.get("code") == first_code
