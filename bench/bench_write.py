"""Many writers, one log (issue 24): acknowledged entries/s, p99 acknowledgement, p99 from
acknowledgement to "under a served checkpoint", on SQLite, one PostgreSQL instance and two
instances on one database; contract publication against today's per-request path; PUT facts on
PostgreSQL against SQLite; reads on two instances against one; per core beside Tessera.

Usage: python bench/bench_write.py [--quick] [--seconds S] [--clients N] [--baseline REV]
[--skip-baseline] [--skip-postgres] [--rounds R] [--compare-venv DIR ...]

Everything runs on 127.0.0.1: ``affidavit registry serve`` processes (stderr to files), a
throwaway PostgreSQL cluster (tests/pg.py, ``fsync`` on, bench_postgres's settings), and the load
in a separate process (raw HTTP/1.1 keep-alive connections, uvloop). Ratios compare numbers of
this run.

**The servers run as a user installs them** (issue 34, bench/_install.py): from
``build/bench-venv``, a virtualenv made with docs/start.md's command, ``pip install
'<checkout>[registry]'`` (not editable; made once, reused while current), on PostgreSQL from
``build/bench-venv-postgres``, made with docs/postgresql.md's ``pip install
'<checkout>[postgres]'``; the header prints their server stacks. The load generator runs in the
dev virtualenv. Table 5 compares it with a server
of the dev virtualenv (editable, ``.[dev]``) and of any ``--compare-venv DIR`` (a virtualenv
without uvloop and httptools, say), in the same run.

1. **Entries** (``POST /v1/log/entries``, 1 KiB of distinct random bytes each, ``--clients`` 64
   keep-alive clients; with two instances, clients alternate between them). A watcher polls
   ``GET /tlog/checkpoint`` of every instance every 10 ms; an acknowledged entry is "served"
   at the first poll whose checkpoint size passes its index, so ack-to-checkpoint is measured
   to within one poll. Then the same with ``?wait=integrated`` (the answer carries the proof).
2. **Contract publication** (16 clients, a distinct lint-clean contract each request: sign,
   log, store, answer with the inclusion proof) on this code and on **today's per-request
   path**: the registry at ``--baseline`` (default: the commit before issue 24), exported with
   ``git archive`` and run from that tree by the install's interpreter (the same server stack),
   on the same machine in the same run. A baseline that has the log's write route (``log:write``)
   also takes the entries of 1 (without waiting), beside this tree's: issue 32 asks >= 90% of the
   tree before it (``--baseline e71ada5``).
3. **PUT facts** (16 clients, a distinct fact each): PostgreSQL against SQLite, this code.
4. **Reads** (32 clients): ``GET /protocol/merkle/latest`` and ``GET /tlog/checkpoint`` on one
   PostgreSQL instance and on two (clients alternate), while nothing writes.
5. **Where the server is installed** (issue 34): SQLite entries as in 1 from the ``[registry]``
   install, the dev virtualenv and every ``--compare-venv``, all started at once and measured in
   turn for ``--rounds`` rounds (the order rotated each round): the median of each, its ratio
   to the install, and each server's start-up line (its event loop and HTTP parser).

Targets (issue 24): SQLite >= 2,000 entries/s, p99 ack < 100 ms, p99 to checkpoint < 1 s;
PostgreSQL one instance >= 1,500/s; two instances: writes >= one instance, reads >= 1.7x;
publication >= 5x the per-request path; PUT facts on PostgreSQL >= 0.8x SQLite; issue 34: the
``[registry]`` install >= 2,000 entries/s on SQLite, as the dev virtualenv. The anchor:
Tessera publishes ~2,900 writes/s on a 12-core POSIX machine (~240/s per core), 1,600 with
antispam (deduplication, which this log always does). The machine here is shared: the load
generator, the servers and PostgreSQL run on its cores together.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _http import drive, read_answer  # noqa: E402
from _http import request as _request  # noqa: E402
from _http import slices as _slices  # noqa: E402
from _install import DEV, Install, baseline_tree, server_env, stack_line, user_install  # noqa: E402
from _registry import start_cluster  # noqa: E402
from _timing import table  # noqa: E402 - bench/ is the script's folder

from tests.pg import PgCluster, PostgresMissing  # noqa: E402
from tests.processes import RegistryProcess  # noqa: E402
from tests.registry.helpers import contract, fact  # noqa: E402

ENTRIES = "/v1/log/entries"
CHECKPOINT = "/tlog/checkpoint"
LATEST = "/protocol/merkle/latest"
CONTRACTS = "/protocol/adapter-contracts"
WRITE_CLIENTS = 16
READ_CLIENTS = 32
ENTRY_BYTES = 1024
POLL_S = 0.01
TESSERA_PER_CORE = 240  # ~2,900 writes/s on 12 cores (Trillian Tessera, POSIX)
BASELINE = "75d6260^"  # the commit before issue 24: today's per-request write path


# -- registry processes (this code, or a baseline tree) ---------------------------------------


class Deployment:
    """Registry instances on one store, with one API key for every scope the bench needs, run by
    the ``affidavit`` command ``command`` (a virtualenv's)."""

    def __init__(
        self,
        folder: Path,
        database_url: str,
        count: int,
        command: str,
        pythonpath: str = "",
        *,
        log_write: bool = True,
    ) -> None:
        self.folder, self.database_url, self.pythonpath = folder, database_url, pythonpath
        self.log_write = log_write  # the tree has the log:write scope (and POST /v1/log/entries)
        self.command = command
        first = folder / "i0"
        first.mkdir(parents=True)
        self.token = self._api_key(first)
        self.instances: list[RegistryProcess] = []
        try:
            for n in range(count):
                data = folder / f"i{n}"
                if n:
                    shutil.copytree(first / "keys", data / "keys")
                public = self.instances[0].url if self.instances else ""
                self.instances.append(self._start(data, public))
        except BaseException:
            self.stop()
            raise

    def _env(self) -> dict[str, str]:
        env = server_env(dict(os.environ))
        env.pop("AFFIDAVIT_DATABASE_URL", None)
        if self.database_url:
            env["AFFIDAVIT_DATABASE_URL"] = self.database_url
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath
        return env

    def _api_key(self, data: Path) -> str:
        command = [self.command, "registry", "keys", "create", "--data-dir", str(data), "--json"]
        for scope in ("publish", "facts:write", "facts:read:*"):
            command += ["--scope", scope]
        command += ["--publisher", "acme"]
        if self.log_write:
            command += ["--scope", "log:write"]
        if self.database_url:
            command += ["--database-url", self.database_url]
        done = subprocess.run(command, check=True, capture_output=True, env=self._env())
        return str(json.loads(done.stdout)["api_key"])

    def _start(self, data: Path, public_url: str) -> RegistryProcess:
        data.mkdir(parents=True, exist_ok=True)
        log = data.parent / f"{data.name}.log"
        server = RegistryProcess(data, log_file=log, command=self.command)
        server.env = self._env() | {"AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(data / "none")}
        server.env["AFFIDAVIT_PUBLIC_URL"] = public_url or server.url
        server.start()
        return server

    @property
    def ports(self) -> list[int]:
        return [i.port for i in self.instances]

    def stop(self) -> None:
        for instance in self.instances:
            instance.stop()


# -- load -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One entries row: where, with which key, how many clients, waiting or not, how long."""

    ports: Sequence[int]
    token: str
    clients: int
    wait: bool
    seconds: float


@dataclass
class Run:
    """The run's arguments, the servers' installs (SQLite's, PostgreSQL's once there is a
    cluster), the table's rows and every measurement by (operation, store)."""

    args: argparse.Namespace
    install: Install
    postgres: Install | None = None
    rows: list[list[object]] = field(default_factory=list)
    results: dict[Any, dict[str, Any]] = field(default_factory=dict)

    def command(self, database_url: str) -> str:
        """The ``affidavit`` a server on ``database_url`` runs (empty: SQLite)."""
        if database_url and self.postgres is not None:
            return self.postgres.affidavit
        return self.install.affidavit


def _entry_request(token: str, body: bytes, wait: bool) -> bytes:
    path = ENTRIES + ("?wait=integrated" if wait else "")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _entry_writer(
    port: int, load: Load, stop: float, acks: list[tuple[float, int, float]], codes: Counter[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < stop:
            body = os.urandom(ENTRY_BYTES // 2).hex().encode()  # 1 KiB, distinct
            started = time.monotonic()
            writer.write(_entry_request(load.token, body, load.wait))
            status, answer = await read_answer(reader)
            codes[status] += 1
            if status in (200, 201):
                done = time.monotonic()
                acks.append((done, int(json.loads(answer)["index"]), done - started))
    finally:
        writer.close()


async def _poller(port: int, stop: float, seen: list[tuple[float, int]]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    raw = f"GET {CHECKPOINT} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    try:
        while time.monotonic() < stop + 3:  # past the writers: the last acks get served too
            writer.write(raw)
            _, note = await read_answer(reader)
            seen.append((time.monotonic(), int(note.split(b"\n")[1])))
            await asyncio.sleep(POLL_S)
    finally:
        writer.close()


def _entries_process(load: Load, out: Any) -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    acks: list[tuple[float, int, float]] = []
    seen: list[tuple[float, int]] = []
    codes: Counter[int] = Counter()

    async def run() -> None:
        stop = time.monotonic() + load.seconds
        ports = load.ports
        await asyncio.gather(
            *(
                _entry_writer(ports[n % len(ports)], load, stop, acks, codes)
                for n in range(load.clients)
            ),
            *(_poller(port, stop, seen) for port in ports),
        )

    asyncio.run(run())
    out.send((acks, seen, dict(codes)))


def bench_entries(load: Load) -> dict[str, Any]:
    """Entries/s, p50/p99 acknowledgement, p99 acknowledgement-to-served-checkpoint."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=_entries_process, args=(load, child))
    process.start()
    try:
        acks, seen, codes = parent.recv()
    finally:
        process.join()
    latencies = sorted(a[2] for a in acks)
    seen.sort()
    served: list[float] = []
    for done, index, _ in acks:  # the first poll at or after the ack that covers the index
        first = next((t for t, size in seen if t >= done and size > index), None)
        if first is not None:
            served.append(first - done)
    served.sort()
    n = len(latencies)
    return {
        "rps": n / load.seconds,
        "p50_ms": latencies[n // 2] * 1000 if n else 0.0,
        "p99_ms": latencies[min(n - 1, int(n * 0.99))] * 1000 if n else 0.0,
        "served_p99_ms": served[min(len(served) - 1, int(len(served) * 0.99))] * 1000
        if served
        else float("nan"),
        "unserved": n - len(served),
        "codes": codes,
    }


# -- the table ------------------------------------------------------------------------------


def _codes(codes: dict[int, int]) -> str:
    return " ".join(f"{code}:{count}" for code, count in sorted(codes.items()))


def _row(operation: str, config: str, r: dict[str, Any], ratio: str = "") -> list[object]:
    served = r.get("served_p99_ms")
    return [
        operation,
        config,
        r["rps"],
        r["p99_ms"],
        "" if served is None else served,
        ratio,
        _codes(r["codes"]),
    ]


def _distinct(kind: str, seconds: float, tag: str) -> list[bytes]:
    count = int(4000 * seconds)
    if kind == "contract":
        return [json.dumps(contract(f"acme.w{tag}_{i}.v0")).encode() for i in range(count)]
    return [json.dumps(fact(f"urn:bench:write:{tag}:{i}")).encode() for i in range(count)]


def _writes(deploy: Deployment, kind: str, seconds: float, tag: str) -> dict[str, Any]:
    auth = f"Authorization: Bearer {deploy.token}\r\n"
    method, path = ("POST", CONTRACTS) if kind == "contract" else ("PUT", "/v1/facts")
    requests = [_request(method, path, auth, body) for body in _distinct(kind, seconds, tag)]
    return drive(deploy.ports, _slices(requests, WRITE_CLIENTS), seconds)


def _reads(deploy: Deployment, path: str, seconds: float) -> dict[str, Any]:
    return drive(deploy.ports, [[_request("GET", path)]] * READ_CLIENTS, seconds)


def _config(folder: Path, label: str, url: str, count: int, run: Run) -> None:
    args, rows, results = run.args, run.rows, run.results
    deploy = Deployment(folder / label.replace(" ", "-"), url, count, run.command(url))
    try:
        for wait in (False, True):
            r = bench_entries(Load(deploy.ports, deploy.token, args.clients, wait, args.seconds))
            name = "entries, ?wait=integrated" if wait else "entries"
            results[name, label] = r
            rows.append(_row(name, label, r))
        for kind in ("contract", "fact"):
            results[kind, label] = _writes(deploy, kind, args.seconds, f"{label[:2]}{count}")
        if url:
            for path in (LATEST, CHECKPOINT):
                results[path, label] = _reads(deploy, path, args.seconds)
    finally:
        deploy.stop()


def _baseline(folder: Path, cluster: PgCluster | None, run: Run) -> None:
    """Contract publication on today's per-request path (module docstring, 2), and, when the
    baseline has the log's write route, entries on it beside this tree's (issue 32: >= 90%)."""
    args = run.args
    try:
        shim = baseline_tree(args.baseline, folder / "baseline", repository=args.repository)
    except subprocess.CalledProcessError as e:
        print(f"baseline skipped: git archive {args.baseline} failed: {e.stderr.decode()[:200]}")
        return
    registry = folder / "baseline" / "tree" / "registry"
    log_write = any("log:write" in path.read_text() for path in registry.rglob("*.py"))
    stores = [("sqlite", "")]
    if cluster is not None:
        stores.append(("pg, 1 instance", cluster.create_database("wb")))
    for label, url in stores:
        old = Deployment(
            folder / f"base-{label[:2]}", url, 1, run.command(url), shim, log_write=log_write
        )
        try:
            if log_write and ("entries", label) in run.results:
                load = Load(old.ports, old.token, args.clients, False, args.seconds)
                measured = bench_entries(load)
                now = run.results["entries", label]["rps"]
                ratio = f"{now / measured['rps']:.2f}x {args.baseline}"
                run.rows.append(_row("entries", f"{label} @{args.baseline}", measured, ratio))
            measured = _writes(old, "contract", args.seconds, f"b{label[:2]}")
            run.results["contract", f"{label} (per-request)"] = measured
        finally:
            old.stop()


def _installs(folder: Path, run: Run) -> list[list[object]]:
    """SQLite entries (``--clients`` writers) from the servers of the ``[registry]`` install, the
    dev virtualenv and every ``--compare-venv``, all running at once and measured in turn for
    ``--rounds`` rounds (the order rotated each round, so a change in the machine's load falls
    on every one alike); each row the median round, the spread, its ratio to the install and
    the server's own start-up line (its event loop and HTTP parser)."""
    args = run.args
    servers = [("[registry] install", run.install.affidavit), ("dev venv (editable)", DEV)]
    servers += [(f"venv {v}", str(v / "bin" / "affidavit")) for v in args.compare_venv]
    deploys: list[Deployment] = []
    rates: list[list[float]] = [[] for _ in servers]
    costs: list[list[float]] = [[] for _ in servers]  # server CPU seconds per entry
    try:
        for n, (_, command) in enumerate(servers):
            deploys.append(Deployment(folder / f"install{n}", "", 1, command))
        for turn in range(args.rounds):
            for n in [(turn + k) % len(servers) for k in range(len(servers))]:
                deploy = deploys[n]
                load = Load(deploy.ports, deploy.token, args.clients, False, args.seconds)
                before = _cpu_seconds(deploy.instances[0])
                r = bench_entries(load)
                entries = r["rps"] * args.seconds
                rates[n].append(r["rps"])
                if entries:
                    costs[n].append((_cpu_seconds(deploy.instances[0]) - before) / entries)
    finally:
        for deploy in deploys:
            deploy.stop()
    base = statistics.median(rates[0])
    rows: list[list[object]] = []
    for n, (label, _) in enumerate(servers):
        median = statistics.median(rates[n])
        spread = f"{min(rates[n]):,.0f}-{max(rates[n]):,.0f}"
        ratio = f"{median / base:.2f}x" if base else ""
        cost = statistics.median(costs[n]) if costs[n] else float("nan")
        stack = stack_line(folder / f"install{n}" / "i0.log").split(" (")[0]
        rows.append([label, median, spread, ratio, cost * 1e6, 1 / cost, stack])
    return rows


def _cpu_seconds(server: RegistryProcess) -> float:
    """CPU time (user + system, every thread) the server process has used so far (proc(5):
    /proc/PID/stat fields 14 and 15, in clock ticks)."""
    assert server.process is not None
    stat = Path(f"/proc/{server.process.pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": field 3 on
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s rows.")
    parser.add_argument("--seconds", type=float, default=None, help="Per row [5; 2].")
    parser.add_argument("--clients", type=int, default=64, help="Entry writers [64].")
    parser.add_argument("--baseline", default=BASELINE, help=f"Today's path [{BASELINE}].")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--repository", type=Path, default=ROOT, help="Where --baseline is.")
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument(
        "--compare-venv",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="SQLite entries from this virtualenv's servers too (repeatable).",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="Rounds of the install comparison [3; 0: none]."
    )
    args, _unknown = parser.parse_known_args(argv)
    args.seconds = args.seconds or (2.0 if args.quick else 5.0)
    began = time.monotonic()
    cores = os.cpu_count() or 1
    install = user_install()
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({cores} cores)")
    print(f"servers: {install.header()}; load generator: {sys.executable}")
    run = Run(args, install)
    installs: list[list[object]] = []
    rows, results = run.rows, run.results
    cluster: PgCluster | None = None
    if not args.skip_postgres:
        try:
            cluster = start_cluster()
        except PostgresMissing as e:
            print(f"PostgreSQL skipped: {e}")
        else:
            try:
                run.postgres = user_install("postgres")
            except BaseException:
                cluster.stop()
                raise
            print(f"servers on PostgreSQL: {run.postgres.header()}")
    with tempfile.TemporaryDirectory(prefix="bench-write-") as tmp:
        folder = Path(tmp)
        try:
            _config(folder, "sqlite", "", 1, run)
            if args.rounds:
                installs = _installs(folder, run)
            if cluster is not None:
                _config(folder, "pg, 1 instance", cluster.create_database("w1"), 1, run)
                _config(folder, "pg, 2 instances", cluster.create_database("w2"), 2, run)
            if not args.skip_baseline:
                _baseline(folder, cluster, run)
        finally:
            if cluster is not None:
                cluster.stop()
    labels = ["sqlite", "pg, 1 instance", "pg, 2 instances"]
    for label in labels:  # publication and facts rows, with their ratios
        if ("contract", label) not in results:
            continue
        base = results.get(("contract", f"{label} (per-request)"))
        ratio = (
            f"{results['contract', label]['rps'] / base['rps']:.2f}x per-request" if base else ""
        )
        rows.append(_row("POST contract", label, results["contract", label], ratio))
        if base:
            rows.append(_row("POST contract", f"{label}, per-request path", base))
    for label in labels:
        if ("fact", label) in results:
            lite = results["fact", "sqlite"]["rps"]
            ratio = f"{results['fact', label]['rps'] / lite:.2f}x sqlite"
            rows.append(_row("PUT fact", label, results["fact", label], ratio))
    for path in (LATEST, CHECKPOINT):
        one = results.get((path, "pg, 1 instance"))
        two = results.get((path, "pg, 2 instances"))
        if one and two:
            rows.append(_row(f"GET {path}", "pg, 1 instance", one))
            rows.append(
                _row(f"GET {path}", "pg, 2 instances", two, f"{two['rps'] / one['rps']:.2f}x one")
            )
    print(
        f"writers: {args.clients} keep-alive clients of {ENTRY_BYTES}-byte entries, "
        f"{WRITE_CLIENTS} for contracts and facts, {READ_CLIENTS} readers; {args.seconds:g} s "
        "per row; served = acknowledged to under a checkpoint GET /tlog/checkpoint serves"
    )
    print(
        table(["operation", "store", "req/s", "p99 ms", "served p99 ms", "ratio", "statuses"], rows)
    )
    print()
    per_core = [
        [label, results["entries", label]["rps"], results["entries", label]["rps"] / cores]
        for label in labels
        if ("entries", label) in results
    ]
    per_core.append(["Tessera (POSIX, 12 cores; its README)", 2900, TESSERA_PER_CORE])
    if installs:
        print(
            f"entries on SQLite, {args.clients} keep-alive clients, by where the server is "
            f"installed: median of {args.rounds} rounds of {args.seconds:g} s, taken in turn"
        )
        print(
            "server CPU = the server process's CPU time (every thread) per entry acknowledged "
            "(and integrated); per CPU-s = entries one busy core would take at that cost, "
            "whatever else loads the machine"
        )
        head = ["server", "entries/s", "rounds", "ratio", "server CPU us", "per CPU-s", "stack"]
        print(table(head, installs))
        print()
    print(f"per core ({cores} cores here, shared by the load, the servers and PostgreSQL):")
    print(table(["entries", "entries/s", "per core"], per_core))
    print(f"(bench_write: {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
