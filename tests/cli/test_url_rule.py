"""The one HTTP client rule, seen from the commands (issue 21, items 4-6): a bad URL is one line
and exit 2 in every verb that fetches (never a traceback, never exit 1, which means "fork" to
``log monitor``); ``--timeout`` is a deadline against a real server that drips one byte every
0.4 s; ``registry serve`` refuses to start on a bad ``--witness``; ``log vkey`` refuses the
origins ``log head --checkpoint`` refuses."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.witness.cosigner import WitnessKeys
from click.testing import CliRunner, Result

from tests.processes import AFFIDAVIT, free_port
from tests.slow_server import SlowServer
from tests.witness.helpers import write_key

pytestmark = pytest.mark.network_local

LOG_KEY = derive_test_key("url rule tests: log")
LOG_ID = "example.com/url-rule"
LOG_VKEY = verifier_key_string(LOG_ID, LOG_KEY.public_key)
WITNESS_VKEY = WitnessKeys("w.example/w", derive_test_key("url rule tests: witness")).vkeys()[0]
BAD_URLS = ["http://127.0.0.1:0x/", "http://[::1", "http://127.0.0.1:99999/", "ftp://a.example/"]


def run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


def one_line(result: Result, code: str = "usage.invalid") -> str:
    """The command failed with exit 2 and said so in one line (no traceback)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {code}: "), lines[0]
    return lines[0]


@pytest.fixture
def log_db(tmp_path: Path) -> Path:
    key = write_key(tmp_path / "log.key", LOG_KEY)
    db = tmp_path / "log.db"
    assert run("log", "init", str(db), "--key", str(key), "--log-id", LOG_ID).exit_code == 0
    (tmp_path / "a").write_text("a")
    assert run("log", "append", str(db), str(tmp_path / "a")).exit_code == 0
    return db


@pytest.fixture
def slow() -> Iterator[SlowServer]:
    with SlowServer("drip-body") as server:
        yield server


# -- item 4: a bad URL is one line and exit 2 in every verb ----------------------------------


@pytest.mark.parametrize("url", BAD_URLS)
def test_log_monitor_refuses_a_bad_url(url: str, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    one_line(run("log", "monitor", url, "--vkey", LOG_VKEY, "--state", str(state)))
    assert not state.exists()


@pytest.mark.parametrize("url", BAD_URLS)
def test_log_head_refuses_a_bad_witness_url_before_signing(url: str, log_db: Path) -> None:
    line = one_line(
        run("log", "head", str(log_db), "--checkpoint", "--witness", f"{url}#{WITNESS_VKEY}")
    )
    assert "witness" in line
    listing = run("log", "keys", str(log_db), "--json")
    assert listing.exit_code == 0


@pytest.mark.parametrize("url", BAD_URLS)
def test_facts_pull_refuses_a_bad_url(url: str, tmp_path: Path) -> None:
    out = tmp_path / "facts.jsonl"
    one_line(run("facts", "pull", url, "--out", str(out)))
    assert not out.exists()


@pytest.mark.parametrize("url", BAD_URLS)
def test_fetch_key_and_registry_verbs_refuse_a_bad_url(url: str, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.json"
    bundle.write_text("{}")
    one_line(run("verify", "bundle", str(bundle), "--fetch-key", url))
    one_line(run("registry", "probe", "--registry", url), "registry.url_missing")


def test_a_bad_url_in_a_real_process_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [AFFIDAVIT, "log", "monitor", "http://127.0.0.1:0x/", "--vkey", LOG_VKEY,
         "--state", str(tmp_path / "state.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: usage.invalid: 'http://127.0.0.1:0x/': the port must be 1 to 65535"
    ]


def test_registry_serve_refuses_a_bad_witness(tmp_path: Path) -> None:
    """Issue 21: it started anyway, and every cosigning round failed."""
    for url in ("http://127.0.0.1:0x", "http://[::1"):
        done = subprocess.run(
            [AFFIDAVIT, "registry", "serve", "--host", "127.0.0.1", "--port", str(free_port()),
             "--data-dir", str(tmp_path / "data"), "--witness", f"{url}#{WITNESS_VKEY}"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith("error: usage.invalid: witness "), line


# -- item 5: --timeout is a deadline ---------------------------------------------------------


def test_log_monitor_keeps_its_deadline_in_a_real_process(slow: SlowServer, tmp_path: Path) -> None:
    """Issue 21: one byte every 0.4 s kept a --timeout 1 monitor busy 13 s."""
    started = time.monotonic()
    done = subprocess.run(
        [AFFIDAVIT, "log", "monitor", slow.url, "--vkey", LOG_VKEY, "--timeout", "1",
         "--state", str(tmp_path / "state.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"error: net.timeout: {slow.url}/checkpoint: no complete answer within the 1 s deadline"
    ]
    assert elapsed < 3.5, f"{elapsed:.1f} s"  # the deadline plus the interpreter's start


def test_facts_pull_keeps_its_deadline(slow: SlowServer, tmp_path: Path) -> None:
    started = time.monotonic()
    line = one_line(
        run("facts", "pull", slow.url, "--out", str(tmp_path / "f.jsonl"), "--timeout", "1"),
        "stigmem.node_unreachable",
    )
    assert time.monotonic() - started < 2.0
    assert "1 s deadline" in line


def test_log_head_keeps_its_witness_deadline(slow: SlowServer, log_db: Path) -> None:
    """A slow witness is reported and never holds the checkpoint: three tries of 1 s each."""
    started = time.monotonic()
    result = run("log", "head", str(log_db), "--checkpoint", "--timeout", "1",
                 "--witness", f"{slow.url}#{WITNESS_VKEY}")  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{LOG_ID}\n1\n")
    assert "no complete answer within the 1 s deadline" in result.stderr
    assert elapsed < 5.0, f"{elapsed:.1f} s"


# -- item 6: log vkey takes the origins log head takes ---------------------------------------


@pytest.mark.parametrize("origin", ["a+b", "a b", "a\tb", ""])
def test_log_vkey_refuses_what_log_head_refuses(origin: str, log_db: Path) -> None:
    head = run("log", "head", str(log_db), "--checkpoint", "--origin", origin)
    vkey = run("log", "vkey", str(log_db), "--origin", origin)
    assert one_line(head) == one_line(vkey)
    assert vkey.stdout == ""


def test_log_vkey_still_prints_a_good_origin(log_db: Path) -> None:
    result = run("log", "vkey", str(log_db), "--origin", "example.com/other")
    assert result.exit_code == 0
    assert result.stdout == verifier_key_string("example.com/other", LOG_KEY.public_key) + "\n"


def test_an_api_key_that_cannot_be_a_header_is_one_line(tmp_path: Path) -> None:
    """httpx raised UnicodeEncodeError (a traceback, exit 1) for a key it cannot send."""
    out = tmp_path / "facts.jsonl"
    line = one_line(run("facts", "pull", f"http://127.0.0.1:{free_port()}", "--api-key", "clé",
                        "--out", str(out)))  # fmt: skip
    assert "clé" not in line  # the key is never echoed
