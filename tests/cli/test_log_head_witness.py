"""``affidavit log head DB --checkpoint --witness URL#VKEY``: a real witness process cosigns, a
down witness is reported and never fails the checkpoint, ``--require-witnesses`` gates it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verify_checkpoint
from affidavit.verify.tlog.cosignature import parse_cosigner_vkey, verify_cosignatures
from affidavit.witness.cosigner import WitnessKeys
from click.testing import CliRunner, Result

from tests.processes import refused_port
from tests.schemas import assert_output_schema
from tests.witness.helpers import WitnessProcess, write_key

pytestmark = pytest.mark.network_local

LOG_ID = "example.com/cli-log"
NAME = "witness.example/w1"
WITNESS_KEY = derive_test_key("log head witness tests: witness")
WITNESS_VKEY = WitnessKeys(NAME, WITNESS_KEY).vkeys()[0]


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


@pytest.fixture
def log_db(tmp_path: Path) -> Path:
    key = write_key(tmp_path / "log.key", derive_test_key("log head witness tests: log"))
    db = tmp_path / "log.db"
    assert run("log", "init", str(db), "--key", str(key), "--log-id", LOG_ID).exit_code == 0
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        assert run("log", "append", str(db), str(tmp_path / name)).exit_code == 0
    return db


@pytest.fixture
def witness(log_db: Path, tmp_path: Path) -> Iterator[WitnessProcess]:
    vkey = run("log", "vkey", str(log_db)).stdout.strip()
    key = write_key(tmp_path / "w.key", WITNESS_KEY)
    with WitnessProcess(key, tmp_path / "wstate", [vkey], name=NAME) as process:
        yield process


@pytest.fixture
def down() -> Iterator[str]:
    """A witness URL whose port refuses connections (held for the test)."""
    with refused_port() as port:
        yield f"http://127.0.0.1:{port}#{WITNESS_VKEY}"


def test_the_checkpoint_comes_back_cosigned_and_is_recorded(
    log_db: Path, witness: WitnessProcess
) -> None:
    result = run("log", "head", str(log_db), "--checkpoint", "--witness",
                 f"{witness.url}#{WITNESS_VKEY}")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    note = result.stdout
    vkey = parse_verifier_key(run("log", "vkey", str(log_db)).stdout.strip())
    assert verify_checkpoint(note, [vkey]).checkpoint.tree_size == 3
    [cosignature] = verify_cosignatures(note, [parse_cosigner_vkey(WITNESS_VKEY)])
    assert cosignature.timestamp > 0
    assert f"witness {witness.url}: cosigned by {NAME}+" in result.stderr
    with TransparencyLog.open(log_db) as opened:
        latest = opened.latest_checkpoint()
    assert latest is not None
    assert latest.document == note

    # the log grows; the CLI keeps no state: 409 tells it the witness's size, then it proves
    (log_db.parent / "d").write_text("d")
    assert run("log", "append", str(log_db), str(log_db.parent / "d")).exit_code == 0
    result = run("log", "head", str(log_db), "--checkpoint", "--json", "--witness",
                 f"{witness.url}#{WITNESS_VKEY}")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert_output_schema("log head", document)
    assert document["ok"] is True
    assert document["cosigned_by"] == 1
    [report] = document["witnesses"]
    assert report["cosigned"] is True
    assert (report["requests"], report["witness_size"]) == (2, 3)
    assert verify_cosignatures(document["checkpoint"], [parse_cosigner_vkey(WITNESS_VKEY)])


def test_a_down_witness_is_reported_and_the_command_succeeds(
    log_db: Path, witness: WitnessProcess, down: str
) -> None:
    result = run("log", "head", str(log_db), "--checkpoint", "--json",
                 "--witness", down, "--witness", f"{witness.url}#{WITNESS_VKEY}")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert_output_schema("log head", document)
    assert document["cosigned_by"] == 1
    failed, good = document["witnesses"]
    assert failed["cosigned"] is False
    assert failed["error"]["code"] == "net.unavailable"
    assert failed["requests"] == 3  # retried
    assert good["cosigned"] is True


def test_no_witness_up_still_prints_the_logs_own_checkpoint(log_db: Path, down: str) -> None:
    result = run("log", "head", str(log_db), "--checkpoint", "--witness", down)
    assert result.exit_code == 0
    vkey = parse_verifier_key(run("log", "vkey", str(log_db)).stdout.strip())
    assert verify_checkpoint(result.stdout, [vkey]).checkpoint.tree_size == 3
    assert "net.unavailable" in result.stderr


def test_require_witnesses_exits_1_below_the_count(
    log_db: Path, witness: WitnessProcess, down: str
) -> None:
    result = run("log", "head", str(log_db), "--checkpoint", "--require-witnesses", "2",
                 "--witness", down, "--witness", f"{witness.url}#{WITNESS_VKEY}")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("error: tlog.quorum_not_met: 1 of 2")
    assert verify_cosignatures(result.stdout, [parse_cosigner_vkey(WITNESS_VKEY)])
    result = run("log", "head", str(log_db), "--checkpoint", "--require-witnesses", "1",
                 "--witness", f"{witness.url}#{WITNESS_VKEY}")  # fmt: skip
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--witness", f"http://127.0.0.1:1#{WITNESS_VKEY}"],  # without --checkpoint
        ["--checkpoint", "--witness", "http://127.0.0.1:1"],  # no vkey
        ["--checkpoint", "--witness", "http://127.0.0.1:1#x+00000000+AAAA"],
        ["--checkpoint", "--require-witnesses", "2", "--witness", f"http://a#{WITNESS_VKEY}"],
    ],
)
def test_bad_witness_arguments_are_exit_2_before_signing(log_db: Path, args: list[str]) -> None:
    result = run("log", "head", str(log_db), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    with TransparencyLog.open(log_db) as opened:
        assert opened.heads() == []  # nothing was signed
