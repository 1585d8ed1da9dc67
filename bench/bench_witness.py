"""Witness throughput: add-checkpoint requests/s against one ``affidavit witness serve`` process.

Run: ``python bench/bench_witness.py [--seconds 5] [--connections 16] [--ml-dsa]``. The witness
runs as a real process (uvicorn, one worker: one core); the load generator runs in a second
process and speaks raw HTTP/1.1 keep-alive over asyncio. Each connection drives its own log (one
origin per connection), advancing it one leaf per request with a consistency proof, so every
request is a 200 that verifies the log's signature and the proof, cosigns, and commits (fsync)
before answering.

The floor printed beside it, measured in the same run, is what one request cannot avoid: verify
the log's Ed25519 note signature, make the Ed25519 cosignature (plus ML-DSA-44 with ``--ml-dsa``)
and commit one row in SQLite with ``synchronous=FULL``, in a loop in this process. The ratio is
what HTTP, parsing and the server's own bookkeeping cost on top.

The witness runs as a user installs it (issue 34, bench/_install.py): from ``build/bench-venv``,
a virtualenv made with docs/start.md's ``pip install '<checkout>[registry]'`` (not editable;
made once, reused while current); the load generator and the floor run in the dev virtualenv.
The header names the install's server stack and the witness's own start-up line (its event loop
and HTTP parser).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _http import exchange  # noqa: E402 - bench/ is the script's folder
from _install import server_env, stack_line, user_install  # noqa: E402
from _timing import ops_per_second, table  # noqa: E402
from bench_registry import free_port, wait_ready  # noqa: E402

LEAVES = 2500  # each connection can advance this many times


def _bodies(origin: str, key: Any, log: Any, count: int) -> list[bytes]:
    """``old i`` -> checkpoint of ``i + 1`` for i in 0..count-1, as raw HTTP requests."""
    from affidavit.verify.crypto.checkpoint import checkpoint_body, format_note, note_signature_line
    from affidavit.verify.crypto.keys import key_id_c2sp

    key_id = key_id_c2sp(origin, key.public_key.raw)
    requests = []
    for old in range(count):
        new = old + 1
        body = checkpoint_body(origin, new, log.root(new))
        note = format_note(body, [note_signature_line(origin, key_id, key.sign(body.encode()))])
        proof = log.consistency_proof(old, new).path if old else ()
        lines = [f"old {old}", *(base64.b64encode(h).decode() for h in proof)]
        payload = ("\n".join(lines) + "\n\n" + note).encode()
        head = (
            "POST /add-checkpoint HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        requests.append(head.encode() + payload)
    return requests


async def _connection(
    port: int, requests: list[bytes], stop: float, latencies: list[float], errors: list[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for raw in requests:
            if time.monotonic() >= stop:
                break
            status, seconds = await exchange(reader, writer, raw)
            latencies.append(seconds)
            if status != 200:
                errors.append(status)
    finally:
        writer.close()


def _load(port: int, per_connection: list[list[bytes]], seconds: float, out: Any) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    latencies: list[float] = []
    errors: list[int] = []

    async def run() -> float:
        started = time.monotonic()
        stop = started + seconds
        await asyncio.gather(
            *(_connection(port, reqs, stop, latencies, errors) for reqs in per_connection)
        )
        return time.monotonic() - started

    elapsed = asyncio.run(run())
    out.send((latencies, len(errors), elapsed))


def _floor(folder: Path, key: Any, witness: Any, note: str) -> float:
    """Ed25519 verify + cosign + one SQLite commit (synchronous=FULL), per loop."""
    from affidavit.attest.stores.store import Migrations, Store
    from affidavit.verify.crypto.checkpoint import (
        parse_checkpoint_body,
        parse_verifier_key,
        verifier_key_string,
        verify_note,
    )

    verifiers = [parse_verifier_key(verifier_key_string("bench.example/floor", key.public_key))]
    store = Store.open(folder / "floor.db", create=True)
    store.migrate("floor", Migrations.same("CREATE TABLE floor (k TEXT PRIMARY KEY, v TEXT)"))
    counter = [0]

    def once() -> None:
        verified = verify_note(note, verifiers)
        lines = witness.cosign(verified.text, parse_checkpoint_body(verified.text), 1_700_000_000)
        counter[0] += 1
        with store.write() as db:
            db.execute(
                "INSERT INTO floor VALUES ('x', $1) ON CONFLICT(k) DO UPDATE SET v = excluded.v",
                (lines[0] + str(counter[0]),),
            )

    try:
        return ops_per_second(once, repeats=3, min_time=0.5)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--ml-dsa", action="store_true", help="Also cosign with ML-DSA-44.")
    args = parser.parse_args()
    install = user_install()
    print(f"witness: {install.header()}; load generator and floor: {sys.executable}")

    from affidavit.attest.keyring import derive_test_key, private_key_pem
    from affidavit.attest.log.transparency import TransparencyLog
    from affidavit.verify.crypto.checkpoint import (
        checkpoint_body,
        format_note,
        note_signature_line,
        verifier_key_string,
    )
    from affidavit.verify.crypto.keys import key_id_c2sp
    from affidavit.witness.cosigner import WitnessKeys, load_ml_dsa_44_key, write_key_files

    key = derive_test_key("bench witness: log")  # TEST-ONLY keys
    witness_key = derive_test_key("bench witness: witness")
    origins = [f"bench.example/log{i}" for i in range(args.connections)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        key_file = folder / "w.key"
        key_file.write_bytes(private_key_pem(witness_key))
        key_file.chmod(0o600)
        ml_file = folder / "w.mldsa"
        ml_key = None
        if args.ml_dsa:
            write_key_files(None, ml_file)
            ml_key = load_ml_dsa_44_key(ml_file)
        witness = WitnessKeys("bench.example/witness", witness_key, ml_key)

        log = TransparencyLog.create(folder / "log.db", key, "bench")
        log.append([f"leaf {i}".encode() for i in range(LEAVES)])
        budget = LEAVES - 1
        started = time.perf_counter()
        per_connection = [_bodies(origin, key, log, budget) for origin in origins]
        prepared = time.perf_counter() - started
        body = checkpoint_body("bench.example/floor", 5, log.root(5))
        name_id = key_id_c2sp("bench.example/floor", key.public_key.raw)
        note = format_note(body, [note_signature_line("bench.example/floor", name_id,
                                                      key.sign(body.encode()))])  # fmt: skip
        log.close()

        floor = _floor(folder, key, witness, note)

        port = free_port()
        command = [install.affidavit, "witness", "serve", "--name", witness.name,
                   "--key", str(key_file), "--state", str(folder / "state"),
                   "--port", str(port)]  # fmt: skip
        for origin in origins:
            command += ["--log-vkey", verifier_key_string(origin, key.public_key)]
        if args.ml_dsa:
            command += ["--ml-dsa-key", str(ml_file)]
        log_file = folder / "witness.log"
        with log_file.open("wb") as log:
            server = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=server_env(dict(os.environ)),
            )
        try:
            wait_ready(port, "/" + "0" * 64 + "/checkpoint")
            parent, child = multiprocessing.Pipe()
            loader = multiprocessing.Process(
                target=_load, args=(port, per_connection, args.seconds, child)
            )
            loader.start()
            latencies, errors, elapsed = parent.recv()
            loader.join()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        print(f"witness stack (its start-up line): {stack_line(log_file)}")

    kinds = "Ed25519 + ML-DSA-44" if args.ml_dsa else "Ed25519"
    latencies.sort()
    n = len(latencies)
    rps = n / elapsed
    rows = [
        [
            f"floor: log-signature verify + {kinds} cosign + SQLite commit, in-process",
            floor,
            "-",
            "-",
            "1.00",
        ],
        [
            f"witness add-checkpoint, {args.connections} connections",
            rps,
            f"{latencies[n // 2] * 1000:.2f}" if n else "-",
            f"{latencies[min(n - 1, int(n * 0.99))] * 1000:.2f}" if n else "-",
            f"{rps / floor:.2f}",
        ],
    ]
    print(
        f"cosignatures: {kinds}; {n} requests, {errors} not 200;"
        f" bodies prepared in {prepared:.1f} s"
    )
    print(table(["what", "ops/s", "p50 ms", "p99 ms", "ratio to floor"], rows))
    if n >= args.connections * budget:
        print("note: a connection ran out of prepared leaves; raise LEAVES for longer runs")


if __name__ == "__main__":
    main()
