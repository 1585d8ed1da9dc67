"""``verify bundle`` over many inputs, as real processes (docs/adr/0023): every input exactly
one result, in input order, with several workers; the exit code the worst verdict's; a worker that
dies is one error line and exit 2, never a hang; JSON files in a folder that are not bundles are
skipped and counted. No timing is asserted (speed is bench/'s).
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.cli._batch import cores, default_jobs
from affidavit.verify.contracts.policy import AcceptancePolicy

from tests.schemas import assert_output_schema

EXE = str(Path(sys.executable).parent / "affidavit")
LOG_KEY = derive_test_key("TEST-ONLY verify bundle bulk tests: log key", key_id="bulk")
KEY = LOG_KEY.public_key.b64
COUNT = 240  # chunks of 30 with two workers: eight chunks, interleaved
POLICY = {"rules": [], "default": "require_review"}

several_cores = pytest.mark.skipif(cores() < 2, reason="needs two cores to run two workers")


@pytest.fixture(scope="module")
def stamped(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("bulk-log")
    items = [StampItem(f"deal-{i:04d}", example_contract(), {"x": i}) for i in range(COUNT)]
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    with TransparencyLog.create(folder / "log.db", LOG_KEY, "bulk-log") as log:
        return stamp_bundles(log, items, AcceptancePolicy.from_json(POLICY), when=when)


def _expected(i: int) -> str:
    """The verdict input ``i`` of :func:`_mixed` must get."""
    if i % 11 == 5:
        return "unreadable"
    return "failed" if i % 7 == 3 else "verified"


def _mixed(folder: Path, bundles: list[dict[str, Any]], *, bad: bool = True) -> list[str]:
    """The bundles as files, some tampered (failed), with ``bad`` some not JSON (unreadable);
    named so that sorting by name would not give this order (the order is the caller's)."""
    folder.mkdir()
    paths = []
    for i, bundle in enumerate(bundles):
        path = folder / f"{(i * 37) % len(bundles):04d}-{i}.json"
        if bad and _expected(i) == "unreadable":
            path.write_text('{"deal_id": ')
        elif _expected(i) == "failed":
            path.write_text(json.dumps(dict(bundle, deal_id="edited")))
        else:
            path.write_text(json.dumps(bundle))
        paths.append(str(path))
    return paths


def _verify(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "verify", "bundle", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@several_cores
def test_every_input_one_result_in_order_with_two_workers(
    stamped: list[dict[str, Any]], tmp_path: Path
) -> None:
    paths = _mixed(tmp_path / "in", stamped)
    done = _verify(*paths, "--public-key-base64", KEY, "--jobs", "2", "--jsonl")
    assert done.returncode == 2, done.stderr  # the worst verdict: unreadable
    *lines, last = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["source"] for r in lines] == paths  # each input once, in the order given
    assert [r["verdict"] for r in lines] == [_expected(i) for i in range(len(paths))]
    summary = last["summary"]
    assert last["verdict"] == "unreadable"
    assert summary["total"] == len(paths)
    assert summary["unreadable"] == sum(_expected(i) == "unreadable" for i in range(COUNT))
    assert summary["failed"] == sum(_expected(i) == "failed" for i in range(COUNT))
    # The same document as one process gives, line for line.
    alone = _verify(*paths, "--public-key-base64", KEY, "--jobs", "1", "--jsonl")
    assert alone.stdout == done.stdout
    # --json: the one document, the same results, valid under the schema.
    document = json.loads(_verify(*paths, "--public-key-base64", KEY, "--json").stdout)
    assert document["results"] == [{k: v for k, v in r.items() if k != "verify_result_version"}
                                   for r in lines]  # fmt: skip
    assert document["summary"] == summary
    assert_output_schema("verify bundle", document)


@several_cores
@pytest.mark.parametrize(("bad", "code"), [(True, 2), (False, 1)])
def test_the_exit_code_is_the_worst_verdicts(
    stamped: list[dict[str, Any]], tmp_path: Path, bad: bool, code: int
) -> None:
    paths = _mixed(tmp_path / "in", stamped, bad=bad)
    done = _verify(*paths, "--public-key-base64", KEY, "--jobs", "2")
    assert done.returncode == code, done.stderr
    verdicts = [_expected(i) if bad else _expected(i).replace("unreadable", "verified")
                for i in range(len(paths))]  # fmt: skip
    *lines, summary, by_code = done.stdout.splitlines()
    # text: one line per bundle, in order; an unreadable input is its error line on stderr
    shown = [(p, v) for p, v in zip(paths, verdicts, strict=True) if v != "unreadable"]
    assert len(lines) == len(shown)
    assert all(line.startswith(f"{p}: {v}") for line, (p, v) in zip(lines, shown, strict=True))
    assert all(": failed at " in line for line in lines if ": failed" in line)  # one line each
    errors = [(p, v) for p, v in zip(paths, verdicts, strict=True) if v == "unreadable"]
    assert len(done.stderr.splitlines()) == len(errors)
    assert all(line.startswith("error: json.") for line in done.stderr.splitlines())
    assert summary.startswith(f"{len(paths)} bundle(s): {verdicts.count('verified')} verified")
    assert by_code.startswith("by code: ")


def test_every_verified_is_exit_0(stamped: list[dict[str, Any]], tmp_path: Path) -> None:
    folder = tmp_path / "good"
    folder.mkdir()
    for i, bundle in enumerate(stamped[:30]):
        (folder / f"{i:02d}.json").write_text(json.dumps(bundle))
    done = _verify(str(folder), "--public-key-base64", KEY, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        *(f"{folder / f'{i:02d}.json'}: verified" for i in range(30)),
        "30 bundle(s): 30 verified",
    ]


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
        return [int(child) for child in handle.read().split()]


@several_cores
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_a_worker_that_dies_is_one_error_line_not_a_hang(
    stamped: list[dict[str, Any]], tmp_path: Path
) -> None:
    # A FIFO with no writer: the worker that opens it waits forever, so the run cannot end
    # before a worker is killed (no race), and cannot end at all unless the death is noticed.
    paths = _mixed(tmp_path / "in", stamped[:40], bad=False)
    fifo = tmp_path / "blocks.json"
    os.mkfifo(fifo)
    paths.insert(20, str(fifo))
    process = subprocess.Popen(
        [EXE, "verify", "bundle", *paths, "--public-key-base64", KEY, "--jobs", "2", "--jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(process.pid)
        assert len(workers) >= 2, "no worker processes started"
        os.kill(workers[0], signal.SIGKILL)
        out, err = process.communicate(timeout=120)  # bounded: a hang fails here
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2, err
    assert err.count("\n") == 1, err  # one line, no traceback
    assert err.startswith("error: io.worker_failed: a worker process ended unexpectedly"), err
    decided = [json.loads(line)["source"] for line in out.splitlines()]
    assert decided == paths[: len(decided)]  # what was printed is a prefix, in order
    assert len(decided) <= 20  # nothing after the input that never ended


def test_a_folder_skips_json_that_is_no_bundle(
    stamped: list[dict[str, Any]], tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for i, bundle in enumerate(stamped[:3]):
        (folder / f"b{i}.json").write_text(json.dumps(bundle))
    (folder / "key.json").write_text(json.dumps({"public_key_base64": KEY}))
    (folder / "list.json").write_text("[1, 2]")
    (folder / "notes.txt").write_text("not JSON, not *.json")
    done = _verify(str(folder), "--public-key-base64", KEY, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [Path(r["source"]).name for r in document["results"]] == [
        "b0.json",
        "b1.json",
        "b2.json",
    ]
    assert document["summary"]["total"] == 3
    assert document["summary"]["skipped"] == 2
    assert_output_schema("verify bundle", document)
    assert done.stderr.splitlines() == [
        f"note: skipped {folder / 'key.json'}: not a bundle (none of deal_id, events, proofs,"
        " bundle_hash)",
        f"note: skipped {folder / 'list.json'}: not a bundle (none of deal_id, events, proofs,"
        " bundle_hash)",
        "note: 2 file(s) skipped: not bundles",
    ]
    text = _verify(str(folder), "--public-key-base64", KEY)
    assert text.returncode == 0
    assert text.stdout.endswith("3 bundle(s): 3 verified\n")


def test_what_looks_like_a_bundle_or_is_named_is_never_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "partial.json").write_text(json.dumps({"deal_id": "d"}))  # a bundle, incomplete
    (folder / "broken.json").write_text("{")  # cannot tell: fail closed
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"public_key_base64": KEY}))
    done = _verify(str(folder), str(key), "--public-key-base64", KEY, "--jsonl")
    assert done.returncode == 2
    *results, last = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(Path(r["source"]).name, r["code"]) for r in results] == [
        ("broken.json", "json.syntax"),
        ("partial.json", "bundle.malformed"),
        ("key.json", "bundle.malformed"),  # named on the command line: a bundle, or an error
    ]
    assert last["summary"]["skipped"] == 0


def test_one_bundle_json_is_todays_one_document(
    stamped: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(stamped[0]))
    done = _verify(str(path), "--public-key-base64", KEY, "--json")
    assert done.returncode == 0
    document = json.loads(done.stdout)
    assert set(document) == {"verify_result_version", "kind", "verdict", "results", "summary",
                             "trust"}  # fmt: skip
    assert document["results"][0]["verified"] is True
    # written as it streams, formatted as json.dumps(indent=2) formats the whole
    assert done.stdout == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert_output_schema("verify bundle", document)


def test_default_jobs_every_core_when_it_pays() -> None:
    assert default_jobs(1, min_per_worker=500) == 1
    assert default_jobs(999, min_per_worker=500) == 1
    assert default_jobs(500 * cores(), min_per_worker=500) == cores()
    assert default_jobs(10**6, min_per_worker=500) == cores()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_reader_that_goes_away_stops_the_run_quietly(
    stamped: list[dict[str, Any]], tmp_path: Path, jobs: str
) -> None:
    # `verify bundle DIR --json | head`: more output than a pipe holds, and the reader leaves
    # after its first bytes. The run stops: no error line blaming an input, exit 2 (not all
    # decided), never a hang.
    paths = _mixed(tmp_path / "in", stamped, bad=False)
    process = subprocess.Popen(
        [EXE, "verify", "bundle", *paths, "--public-key-base64", KEY, "--jobs", jobs, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stdout.read(100).startswith(b"{")
    process.stdout.close()
    try:
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (process.returncode, err) == (2, b"")


def test_jsonl_with_attest_result_prints_the_same_lines(
    stamped: list[dict[str, Any]], tmp_path: Path
) -> None:
    from affidavit.attest.keyring import private_key_pem

    from tests.attest.intoto.helpers import KEY as SIGNER

    path = tmp_path / "one.json"
    path.write_text(json.dumps(stamped[0]))
    key = tmp_path / "verifier.key"
    key.write_bytes(private_key_pem(SIGNER))
    key.chmod(0o600)
    plain = _verify(str(path), "--public-key-base64", KEY, "--jsonl")
    vsa = tmp_path / "out.vsa.json"
    signed = _verify(str(path), "--public-key-base64", KEY, "--jsonl", "--attest-result",
                     str(key), "--out", str(vsa))  # fmt: skip
    assert (plain.returncode, signed.returncode) == (0, 0), signed.stderr
    assert signed.stdout == plain.stdout
    assert [json.loads(line)["verdict"] for line in plain.stdout.splitlines()] == ["verified"] * 2
    assert vsa.exists()


@pytest.mark.parametrize("output", [[], ["--json"], ["--jsonl"]])
def test_a_folder_with_no_bundle_at_all_is_an_error_not_a_pass(
    tmp_path: Path, output: list[str]
) -> None:
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "key.json").write_text(json.dumps({"public_key_base64": KEY}))
    done = _verify(str(folder), "--public-key-base64", KEY, *output)
    assert (done.returncode, done.stdout) == (2, "")  # nothing verified: never exit 0
    assert done.stderr.splitlines()[-1].startswith("error: usage.invalid: no bundle in ")
