"""PostgreSQL against SQLite: registry throughput, and provenance walks over 1,000,000 facts.

Usage: python bench/bench_postgres.py [--quick] [--seconds S] [--connections N] [--facts N]
[--rebuild] [--skip-registry] [--skip-walk]

Everything runs on 127.0.0.1 against a throwaway PostgreSQL cluster (tests/pg.py ``PgCluster``,
``fsync`` on, ``shared_buffers`` raised to 128MB, PostgreSQL's own default), which is stopped and
removed at the end, as is every registry process. Each ratio compares two numbers measured in
this run; SQLite is the baseline (1.00).

1. Registry (``affidavit registry serve``): five operations, each for ``--seconds``, against one
   instance on SQLite, one on PostgreSQL, and two instances sharing one PostgreSQL database (the
   client connections alternate between them). Reads (``--connections`` clients, 32): ``GET
   /.well-known/affidavit`` (a cached document: no store read, the control row), ``GET
   /protocol/adapter-contracts`` and ``GET /protocol/merkle/latest``; writes (16 clients): ``POST
   /protocol/adapter-contracts`` with a distinct lint-clean contract per request (sign, log,
   store) and ``PUT /v1/facts`` with a distinct fact per request. Every client sends its own slice
   of the requests, so no write repeats one already sent. Each configuration starts on a fresh
   database holding the same 16 seed contracts. After the writes the two instances are asked for
   the contract count and the log's tree size, and each for a fact written through the other;
   they must agree (printed under the table).
2. Provenance walks at depth 5 over ``--facts`` facts (bench_lineage's generator: fact i derived
   from fact i-1 and one seeded random earlier fact). The SQLite store is built once through
   ``FactStore.add_batch`` into bench-out/lineage-N.db (shared with bench_lineage); the
   PostgreSQL store gets the same rows (hash, scope, RFC 8785 body; edges) by ``COPY`` in key
   order, then ``VACUUM ANALYZE``. Both stores' files are read once (warm page cache), then the
   same seeded roots are walked on each, alternately, through ``affidavit.verify.lineage.walk``;
   each walk on PostgreSQL must return exactly the SQLite walk. ``add_batch`` (cycle checks on) is
   timed on a small fresh sample of each store too.

The registry instances run from ``pip install '<checkout>[postgres]'`` (not editable) in
build/bench-venv-postgres (bench/_install.py): the code as a user installs it; the load
generator runs in this virtualenv.

Targets: walk p99 <= 5 ms on either store. The machine is shared by the client, the servers and
PostgreSQL: on 2 cores, two instances add CPU contention, not capacity.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _http import drive, request, slices  # noqa: E402 - bench/ is the script's folder
from _install import server_env, user_install  # noqa: E402
from _registry import copy_rows, start_cluster  # noqa: E402
from _timing import table  # noqa: E402
from affidavit.attest.stores.facts import FactStore  # noqa: E402
from affidavit.verify.lineage.walk import walk  # noqa: E402
from bench_lineage import build, facts, percentile  # noqa: E402

from tests.pg import PgCluster, PostgresMissing  # noqa: E402
from tests.processes import RegistryProcess, api_key  # noqa: E402
from tests.registry.helpers import contract, fact, fact_hash  # noqa: E402

NODE_PROBE = "/.well-known/affidavit"
CONTRACTS = "/protocol/adapter-contracts"
LATEST = "/protocol/merkle/latest"
SEED_CONTRACTS = 16
WRITE_CLIENTS = 16
MAX_WRITE_RATE = 4000  # requests/s provisioned per write row; beyond it clients would repeat
COPY_BATCH = 50_000


# -- registry processes ---------------------------------------------------------------------


def _instance(
    command: str, data_dir: Path, database_url: str, public_url: str = ""
) -> RegistryProcess:
    """``command registry serve`` on 127.0.0.1 (``command``: the ``affidavit`` of a user's
    install, bench/_install.py), started, with its log in a file (a pipe could fill up under
    load and stall the server)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {"AFFIDAVIT_DATABASE_URL": database_url} if database_url else {}
    log = data_dir.parent / f"{data_dir.name}.log"
    server = RegistryProcess(data_dir, env, log_file=log, command=command)
    server.env = server_env(server.env)
    # docs/postgresql.md "Several instances": one public URL (the load balancer's)
    server.env["AFFIDAVIT_PUBLIC_URL"] = public_url or server.url
    server.start()
    return server


# -- section 1: the registry ----------------------------------------------------------------


def _start_config(
    command: str, folder: Path, database_url: str, count: int
) -> tuple[list[RegistryProcess], str]:
    """``count`` instances on one store (the later ones with a copy of the first one's keys, as
    on another machine), a ``publish`` (namespace ``acme``), ``facts:write`` and ``facts:read:*``
    API key, and the seed contracts."""
    first = folder / "i0"
    first.mkdir(parents=True)
    token = api_key(
        first, "publish", "facts:write", "facts:read:*", database_url=database_url or None
    )
    instances: list[RegistryProcess] = []
    try:
        instances.append(_instance(command, first, database_url))
        for i in range(1, count):
            other = folder / f"i{i}"
            shutil.copytree(first / "keys", other / "keys")
            instances.append(_instance(command, other, database_url, instances[0].url))
        _seed(instances, token)
    except BaseException:
        for instance in instances:
            instance.stop()
        raise
    return instances, token


def _seed(instances: Sequence[RegistryProcess], token: str) -> None:
    """Publish the seed contracts, spread over the instances."""
    auth = {"Authorization": f"Bearer {token}"}
    for i in range(SEED_CONTRACTS):
        url = instances[i % len(instances)].url + CONTRACTS
        response = httpx.post(url, json=contract(f"acme.seed_{i}.v0"), headers=auth)
        if response.status_code != 201:
            raise SystemExit(f"seed publish: {response.status_code} {response.text[:300]}")


def _agreement(
    instances: Sequence[RegistryProcess], token: str, written: Sequence[bytes], wait: float = 5.0
) -> str:
    """Whether every instance answers the same contract list (byte for byte) and the same log
    size and root (polled up to ``wait`` seconds), and serves the facts ``written[i]`` that
    instance ``i`` stored (each client's first request; client ``i`` talks to instance ``i % n``)
    when read from the next instance; a few words for the report."""
    auth = {"Authorization": f"Bearer {token}"}
    missing = 0
    for i, body in enumerate(written[: len(instances)]):
        other = instances[(i + 1) % len(instances)]
        path = f"/v1/facts/{fact_hash(json.loads(body))}"
        missing += httpx.get(other.url + path, headers=auth, timeout=30).status_code != 200
    if missing:
        return f"DISAGREE: {missing} facts written on one instance are not found on another"
    start = time.monotonic()
    while True:
        seen = []
        for instance in instances:
            listed = httpx.get(instance.url + CONTRACTS, timeout=30).content
            latest = httpx.get(instance.url + LATEST, timeout=30).json()
            seen.append((listed, latest["tree_size"], latest["root_hash"]))
        elapsed = time.monotonic() - start
        if len(set(seen)) == 1:
            count = len(json.loads(seen[0][0])["contracts"])
            return (
                f"agree: the same contract list ({count} contracts) and tree_size {seen[0][1]} "
                f"({elapsed:.1f} s); facts written on one instance are read on the other"
            )
        if elapsed > wait:
            views = [(len(json.loads(b)["contracts"]), size, root[:8]) for b, size, root in seen]
            return f"DISAGREE after {elapsed:.1f} s: (contracts, tree_size, root) = {views}"
        time.sleep(0.2)


def bench_registry(
    cluster: PgCluster, seconds: float, connections: int, command: str
) -> tuple[list[list[object]], list[str]]:
    """The registry table and notes (agreement, repeated requests); the servers run
    ``command`` (the ``affidavit`` of a user's install)."""
    per_row = int(MAX_WRITE_RATE * seconds)
    contract_bodies = [json.dumps(contract(f"acme.bench_{i}.v0")).encode() for i in range(per_row)]
    fact_bodies = [json.dumps(fact(f"urn:bench:pg:{i}")).encode() for i in range(per_row)]
    configs = [
        ("sqlite, 1 instance", "", 1),
        ("postgresql, 1 instance", cluster.create_database("registry_one"), 1),
        ("postgresql, 2 instances", cluster.create_database("registry_two"), 2),
    ]
    results: dict[tuple[str, str], dict[str, Any]] = {}
    notes: list[str] = []
    operations = [
        "GET node probe (control)",
        "GET contracts list",
        "GET merkle/latest",
        "POST contract",
        "PUT fact",
    ]
    with tempfile.TemporaryDirectory(prefix="bench-postgres-") as tmp:
        for index, (label, url, count) in enumerate(configs):
            instances, token = _start_config(command, Path(tmp) / f"c{index}", url, count)
            try:
                ports = [i.port for i in instances]
                auth = f"Authorization: Bearer {token}\r\n"
                reads = {
                    "GET node probe (control)": request("GET", NODE_PROBE),
                    "GET contracts list": request("GET", CONTRACTS),
                    "GET merkle/latest": request("GET", LATEST),
                }
                for name, raw in reads.items():
                    results[name, label] = drive(ports, [[raw]] * connections, seconds)
                writes = {
                    "POST contract": [request("POST", CONTRACTS, auth, b) for b in contract_bodies],
                    "PUT fact": [request("PUT", "/v1/facts", auth, b) for b in fact_bodies],
                }
                for name, requests in writes.items():
                    result = drive(ports, slices(requests, WRITE_CLIENTS), seconds)
                    results[name, label] = result
                    if result["repeated"]:
                        notes.append(f"{label}, {name}: {result['repeated']} requests repeated")
                if count > 1:
                    notes.append(f"{label}: {_agreement(instances, token, fact_bodies)}")
            finally:
                for instance in instances:
                    instance.stop()
    rows: list[list[object]] = []
    for name in operations:
        base = results[name, configs[0][0]]
        for label, _url, _count in configs:
            r = results[name, label]
            codes = " ".join(f"{code}:{n}" for code, n in sorted(r["codes"].items()))
            rows.append(
                [
                    name,
                    label,
                    r["rps"],
                    r["p50_ms"],
                    r["p99_ms"],
                    f"{r['rps'] / max(base['rps'], 1e-9):.2f}",
                    f"{r['p99_ms'] / max(base['p99_ms'], 1e-9):.2f}",
                    codes,
                ]
            )
    return rows, notes


# -- section 2: provenance walks ------------------------------------------------------------


def sqlite_store(count: int, rebuild: bool) -> tuple[Path, float | None]:
    """bench-out/lineage-N.db, built (into a temporary name, then renamed) when missing; the
    build rate in facts/s when built in this run."""
    path = ROOT / "bench-out" / f"lineage-{count}.db"
    if path.exists() and not rebuild:
        return path, None
    print(f"building {path} ({count:,} facts, once)...", file=sys.stderr)
    partial = path.with_name(path.name + ".partial")
    rate = build(partial, count)
    partial.replace(path)
    return path, rate


def _copy_rows(db: sqlite3.Connection, query: str) -> Iterator[tuple[Any, ...]]:
    cursor = db.execute(query)
    while rows := cursor.fetchmany(COPY_BATCH):
        yield from rows


def load_postgres(sqlite_path: Path, url: str) -> float:
    """Copy every fact and edge of the SQLite store into the (empty) PostgreSQL store at
    ``url`` with ``COPY``, in key order; then ``VACUUM ANALYZE``. Returns facts/s."""
    import psycopg

    FactStore.connect(url).close()  # the store's own schema (attest/stores/facts.py)
    source = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    start = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            rows = _copy_rows(source, "SELECT hash, scope, body FROM facts ORDER BY hash")
            copy_rows(conn, "facts (hash, scope, body)", ["bytea", "text", "bytea"], rows)
            rows = _copy_rows(source, "SELECT source, derived FROM edges ORDER BY source, derived")
            copy_rows(conn, "edges (source, derived)", ["bytea", "bytea"], rows)
        conn.execute("VACUUM (ANALYZE) facts")
        conn.execute("VACUUM (ANALYZE) edges")
        stored = conn.execute("SELECT count(*) FROM facts").fetchone()
    count = int(source.execute("SELECT count(*) FROM facts").fetchone()[0])
    source.close()
    if stored is None or stored[0] != count:
        raise SystemExit(f"PostgreSQL holds {stored} facts, SQLite {count}")
    return count / (time.perf_counter() - start)


def _read_files(paths: Sequence[Path]) -> None:
    """Read files once so the walks measure the store, not the disk (as bench_lineage)."""
    for path in paths:
        with path.open("rb") as handle:
            while handle.read(1 << 24):
                pass


def _pg_files(cluster: PgCluster, name: str) -> list[Path]:
    with cluster.connect(name) as conn:
        row = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert row is not None
    return [p for p in (cluster.data / "base" / str(row[0])).iterdir() if p.is_file()]


def _roots(path: Path, count: int, seed: int) -> list[str]:
    """``count`` uniform random stored FactHashes (as bench_lineage picks them)."""
    rng = random.Random(seed)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    query = "SELECT hash FROM facts WHERE hash >= ? ORDER BY hash LIMIT 1"
    keys = [row[0].hex() for _ in range(count) for row in db.execute(query, (rng.randbytes(32),))]
    db.close()
    return keys


def _walk_json(store: FactStore, key: str) -> dict[str, Any]:
    return walk(store, key, depth=5).to_json()


def bench_walks(cluster: PgCluster, path: Path, url: str, name: str, roots: int) -> dict[str, Any]:
    """Walk latencies (ms) on both stores for the same roots, alternating; sizes; mismatches."""
    _read_files([path, *_pg_files(cluster, name)])
    keys = _roots(path, roots, seed=7)
    warm = _roots(path, 100, seed=8)
    out: dict[str, Any] = {"sqlite": [], "postgresql": [], "nodes": [], "mismatches": 0}
    with FactStore.open(path) as lite, FactStore.connect(url) as pg:
        for key in warm:  # connections, prepared statements, code paths
            walk(lite, key, depth=5)
            walk(pg, key, depth=5)
        for key in keys:
            start = time.perf_counter()
            result = walk(lite, key, depth=5)
            out["sqlite"].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            walk(pg, key, depth=5)
            out["postgresql"].append((time.perf_counter() - start) * 1000)
            out["nodes"].append(len(result.nodes))
        for key in keys:  # the answers, outside the timed loop
            if _walk_json(lite, key) != _walk_json(pg, key):
                out["mismatches"] += 1
    return out


def bench_add_batch(url: str, sample: int) -> tuple[float, float]:
    """``add_batch`` facts/s (cycle checks on) on a fresh SQLite store and a fresh PostgreSQL
    database, the same facts in batches of 1,000."""
    parsed = list(facts(sample, seed=11))
    rates = []
    with tempfile.TemporaryDirectory() as folder:
        for store in (
            FactStore.open(Path(folder) / "sample.db", create=True),
            FactStore.connect(url),
        ):
            with store:
                start = time.perf_counter()
                for offset in range(0, sample, 1000):
                    store.add_batch(parsed[offset : offset + 1000])
                rates.append(sample / (time.perf_counter() - start))
    return rates[0], rates[1]


def lineage_rows(
    cluster: PgCluster, count: int, roots: int, sample: int, rebuild: bool
) -> list[list[object]]:
    """The walk table."""
    path, build_rate = sqlite_store(count, rebuild)
    name = "lineage"
    url = cluster.create_database(name)
    copy_rate = load_postgres(path, url)
    rows: list[list[object]] = []
    if build_rate is not None:
        rows.append(
            [f"load {count:,} facts, facts/s", build_rate, copy_rate, "", "add_batch vs COPY"]
        )
    else:
        rows.append([f"load {count:,} facts, facts/s", "cached", copy_rate, "", "PostgreSQL: COPY"])
    lite_rate, pg_rate = bench_add_batch(cluster.create_database("sample"), sample)
    rows.append(
        [
            f"add_batch facts/s ({sample:,}, cycle checks)",
            lite_rate,
            pg_rate,
            f"{pg_rate / lite_rate:.2f}",
            "",
        ]
    )
    walks = bench_walks(cluster, path, url, name, roots)
    if walks["mismatches"]:
        raise SystemExit(f"{walks['mismatches']} walks differ between SQLite and PostgreSQL")
    lite, pg = walks["sqlite"], walks["postgresql"]
    for label, fraction in (("p50", 0.5), ("p99", 0.99)):
        a, b = percentile(lite, fraction), percentile(pg, fraction)
        rows.append(
            [f"walk depth 5, {label} ms", a, b, f"{b / a:.2f}", "<= 5" if label == "p99" else ""]
        )
    rows.append(
        [
            "nodes per walk (median)",
            int(statistics.median(walks["nodes"])),
            "same",
            "",
            f"{roots} roots, equal answers",
        ]
    )
    return rows


# -- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Run both sections and print one table each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 facts, 1.5 s rows.")
    parser.add_argument("--seconds", type=float, default=None, help="Per registry row [4; 1.5].")
    parser.add_argument("--connections", type=int, default=32, help="Read clients [32].")
    parser.add_argument("--facts", type=int, default=None, help="[1,000,000; 100,000].")
    parser.add_argument("--rebuild", action="store_true", help="Rebuild the SQLite store.")
    parser.add_argument("--skip-registry", action="store_true")
    parser.add_argument("--skip-walk", action="store_true")
    args, _unknown = parser.parse_known_args(argv)
    seconds = args.seconds or (1.5 if args.quick else 4.0)
    count = args.facts or (100_000 if args.quick else 1_000_000)
    roots = 500 if args.quick else 1000
    sample = 2000 if args.quick else 5000
    os.environ.pop("AFFIDAVIT_DATABASE_URL", None)  # each configuration names its store
    began = time.monotonic()
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    try:
        cluster = start_cluster()
    except PostgresMissing as e:  # e.g. no server binaries: skipped, as run.sh goes on
        print(f"skipped: {e} (apt-get install postgresql)")
        return
    try:
        if not args.skip_registry:
            install = user_install("postgres")
            print(f"servers from {install.header()}; the clients from this virtualenv")
            rows, notes = bench_registry(cluster, seconds, args.connections, install.affidavit)
            print(
                f"registry: {seconds:g} s per row; reads {args.connections} clients, "
                f"writes {WRITE_CLIENTS}; ratios vs SQLite (req/s: higher is better, p99: lower)"
            )
            print(
                table(
                    [
                        "operation",
                        "store",
                        "req/s",
                        "p50 ms",
                        "p99 ms",
                        "ratio req/s",
                        "ratio p99",
                        "statuses",
                    ],
                    rows,
                )
            )
            for note in notes:
                print(f"  {note}")
            print()
        if not args.skip_walk:
            rows = lineage_rows(cluster, count, roots, sample, args.rebuild)
            print(f"provenance walks over {count:,} facts; ratio = PostgreSQL / SQLite")
            print(table(["measure", "sqlite", "postgresql", "ratio", "target / note"], rows))
    finally:
        cluster.stop()
    print(f"(bench_postgres: {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
