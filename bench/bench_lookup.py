"""Lookups by hash at 1,000,000 indexed entries, on SQLite and PostgreSQL (issue 26).

Usage: python bench/bench_lookup.py [--quick] [--entries N] [--lookups N] [--skip-postgres]
[--baseline REV | --skip-baseline]

Per store, a log of N leaves appended by hash (``TransparencyLog.append_leaf_hashes``, 10,000 per
transaction) and its lookup index built directly in bulk, three rows per entry as
``registry/index.py`` files a contract record's: its leaf hash, the SHA-256 of its bytes, and a
digest four consecutive entries share (a contract's hash across four lifecycle entries). SQLite
gets the rows by ``executemany`` in key order, PostgreSQL by ``COPY`` (then ``VACUUM ANALYZE``).

Then ``--lookups`` answers of ``registry.lookup.answer`` (what ``GET /v1/lookup/{hash}`` computes:
the index range scan and every entry's RFC 9162 inclusion proof at the tree's size, in one read
snapshot as a reader thread runs it), one at a time, on hashes drawn in turn from: a leaf hash (one
entry), a shared digest (four entries) and an unknown hash (none). Each row: lookups per second
and p50/p99 latency, by kind of hash and over all. Target: p99 < 10 ms at 1,000,000 entries.
A second table says what filing costs the write path: 10,000 appended leaves of a kind (raw
1 KiB, a ~1 KiB fact), then ``catch_up`` (``subjects`` and the rows) on them, on SQLite.
PostgreSQL runs on a throwaway cluster (bench/_registry.py: tests/pg.py, shared_buffers 128MB),
stopped at the end. ``--baseline REV`` (default: the tree before issue 32, which asks the p99 to
stay within noise) runs REV's own bench_lookup.py first, from ``git archive`` (bench/_install.py),
with the same arguments, and adds its rows and the p99 ratio per store. No server runs: the
library is called in this process, the dev virtualenv's (the benchmarks that start servers run
them from a ``[registry]`` install: bench/_install.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _install import baseline_tree  # noqa: E402 - bench/ is the script's folder
from _registry import copy_rows, start_cluster  # noqa: E402
from _timing import table  # noqa: E402
from affidavit.attest.keyring import derive_test_key  # noqa: E402
from affidavit.attest.log.transparency import TransparencyLog  # noqa: E402
from affidavit.attest.stores.store import Store  # noqa: E402
from affidavit.registry.db import REGISTRY_MIGRATIONS, RegistryTables  # noqa: E402
from affidavit.registry.lookup import answer, catch_up  # noqa: E402
from affidavit.verify.json.canonical import jcs  # noqa: E402
from bench_lineage import percentile  # noqa: E402

from tests.pg import PostgresMissing  # noqa: E402

KEY = derive_test_key("bench_lookup TEST-ONLY log key")
LOG_ID = "bench-lookup"
APPEND_BATCH = 10_000
ROW_BATCH = 200_000
GROUP = 4  # entries sharing one digest
BASELINE = "e71ada5"  # the tree before issue 32 (one log writer, each store its own dialect)
KINDS = ("0 entries", "1 entry", "4 entries", "all")


def leaf(i: int) -> bytes:
    return hashlib.sha256(b"leaf %d" % i).digest()


def data_digest(i: int) -> bytes:
    return hashlib.sha256(b"data %d" % i).digest()


def shared(group: int) -> bytes:
    return hashlib.sha256(b"contract %d" % group).digest()


def rows_of(start: int, end: int) -> list[tuple[bytes, int, str, str]]:
    out: list[tuple[bytes, int, str, str]] = []
    for i in range(start, end):
        out.append((leaf(i), i, "leaf_hash", "contract"))
        out.append((data_digest(i), i, "data_sha256", "contract"))
        out.append((shared(i // GROUP), i, "contract_hash", "contract"))
    return out


def build_log(store: Store, entries: int) -> TransparencyLog:
    log = TransparencyLog.create(store, KEY, LOG_ID)
    for start in range(0, entries, APPEND_BATCH):
        log.append_leaf_hashes([leaf(i) for i in range(start, min(entries, start + APPEND_BATCH))])
    return log


def fill_sqlite(store: Store, entries: int) -> None:
    """Every row, in key order (sequential B-tree appends), in a few big transactions."""
    rows = rows_of(0, entries)
    rows.sort()
    with store.write() as db:
        for offset in range(0, len(rows), ROW_BATCH):
            db.insert_rows(
                "registry_lookup",
                ("hash", "leaf_index", "field", "kind"),
                rows[offset : offset + ROW_BATCH],
            )
        db.execute("INSERT INTO registry_lookup_size(id, size) VALUES (1, $1)", (entries,))


def fill_postgres(url: str, entries: int) -> None:
    rows = rows_of(0, entries)
    rows.sort()
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            target = "registry_lookup (hash, leaf_index, field, kind)"
            copy_rows(conn, target, ["bytea", "int8", "text", "text"], rows)
            conn.execute("INSERT INTO registry_lookup_size(id, size) VALUES (1, %s)", (entries,))
        conn.execute("VACUUM (ANALYZE) registry_lookup")


def queries(entries: int, count: int) -> Iterator[tuple[str, str]]:
    """``(kind, hex)`` in turn: one entry, four entries, none; spread over the whole log."""
    step = max(1, entries // max(1, count))
    for n in range(count):
        i = (n * step * 7919) % entries
        kind = ("1 entry", "4 entries", "0 entries")[n % 3]
        if kind == "1 entry":
            yield kind, leaf(i).hex()
        elif kind == "4 entries":
            yield kind, shared(i // GROUP).hex()
        else:
            yield kind, hashlib.sha256(b"unknown %d" % n).hexdigest()


def measure(reader: Store, entries: int, count: int) -> dict[str, list[float]]:
    tables = RegistryTables(reader)
    log = TransparencyLog(reader, owns_store=False)
    note = "(checkpoint)"
    timings: dict[str, list[float]] = {}
    plan = list(queries(entries, count))
    for _kind, digest in plan[: min(300, len(plan))]:  # warm the page cache and the plans
        with reader.read():
            answer(tables, log, digest, cursor=0, limit=100, checkpoint=note, tree_size=entries)
    for kind, digest in plan:
        started = time.perf_counter()
        with reader.read():  # one snapshot per lookup, as a reader thread (registry/db.py)
            found = answer(
                tables, log, digest, cursor=0, limit=100, checkpoint=note, tree_size=entries
            )
        timings.setdefault(kind, []).append(time.perf_counter() - started)
        expected = {"1 entry": 1, "4 entries": GROUP, "0 entries": 0}[kind]
        if len(found["entries"]) != expected:
            raise SystemExit(f"{kind} {digest}: {len(found['entries'])} entries")
    return timings


def rows_for(store_name: str, timings: dict[str, list[float]]) -> list[list[Any]]:
    out = []
    everything = [t for values in timings.values() for t in values]
    for kind, values in [*sorted(timings.items()), ("all", everything)]:
        out.append(
            [
                store_name,
                kind,
                len(values) / sum(values),
                statistics.median(values) * 1000,
                percentile(values, 0.99) * 1000,
            ]
        )
    return out


def run_store(  # noqa: PLR0917 - one call per store, each argument named there
    name: str, open_writer: Callable[[], Store], open_reader: Callable[[], Store],
    fill: Callable[[Store], None], entries: int, count: int,
) -> tuple[list[list[Any]], str]:  # fmt: skip
    started = time.perf_counter()
    writer = open_writer()
    try:
        writer.migrate("registry", REGISTRY_MIGRATIONS)
        build_log(writer, entries)
        built = time.perf_counter()
        fill(writer)
    finally:
        writer.close()
    filled = time.perf_counter()
    reader = open_reader()
    try:
        timings = measure(reader, entries, count)
    finally:
        reader.close()
    note = (
        f"{name}: log of {entries:,} leaves in {built - started:.0f} s, "
        f"{3 * entries:,} index rows in {filled - built:.0f} s"
    )
    return rows_for(name, timings), note


def filing_rows(count: int) -> list[list[Any]]:
    """What filing costs the write path (``registry.lookup.catch_up``: ``subjects`` of each leaf
    and its rows, in one transaction), on SQLite, per kind of 1 KiB entry, beside the append."""
    kinds = {
        "raw 1 KiB": [os.urandom(1024) for _ in range(count)],
        "fact ~1 KiB": [
            jcs({"entity": f"urn:bench:{i}", "relation": "memory:role",
                 "value": {"type": "text", "v": "x" * 900}, "source": "urn:bench",
                 "scope": "public", "confidence": 1, "ts": "2026-01-01T00:00:00Z"})
            for i in range(count)
        ],
    }  # fmt: skip
    out: list[list[Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-filing-") as folder:
        store = Store.open(Path(folder) / "registry.db", create=True)
        try:
            store.migrate("registry", REGISTRY_MIGRATIONS)
            tables, log = RegistryTables(store), TransparencyLog.create(store, KEY, LOG_ID)
            for kind, leaves in kinds.items():
                started = time.perf_counter()
                log.append(leaves)
                appended = time.perf_counter()
                catch_up(tables, log)
                filed = time.perf_counter()
                append_rate = count / (appended - started)
                file_rate = count / (filed - appended)
                out.append([kind, append_rate, file_rate, append_rate / file_rate])
        finally:
            store.close()
    return out


def baseline_rows(revision: str, arguments: list[str]) -> list[list[Any]]:
    """The lookup rows of ``revision``'s own bench_lookup.py, run with ``arguments`` in a child
    process on its ``git archive``; its store names gain `` @REV``."""
    with tempfile.TemporaryDirectory(prefix="bench-lookup-baseline-") as folder:
        shim = baseline_tree(revision, Path(folder), also=("bench", "tests"))
        script = Path(folder) / "tree" / "bench" / "bench_lookup.py"
        env = {**os.environ, "PYTHONPATH": shim}
        done = subprocess.run(
            [sys.executable, str(script), *arguments, "--skip-baseline"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"baseline {revision} failed:\n{done.stderr[-2000:]}")
    rows = []
    for line in done.stdout.splitlines():  # "sqlite  1 entry  1,234  0.51  0.90"
        words = line.split()
        kind = " ".join(words[1:-3])
        if words and words[0] in ("sqlite", "postgresql") and kind in KINDS:
            rate, p50, p99 = (float(w.replace(",", "")) for w in words[-3:])
            rows.append([f"{words[0]} @{revision}", kind, rate, p50, p99])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 entries, 1,500 lookups.")
    parser.add_argument("--entries", type=int, default=None, help="[1,000,000; 100,000].")
    parser.add_argument("--lookups", type=int, default=None, help="[6,000; 1,500].")
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--baseline", default=BASELINE, help=f"The tree before [{BASELINE}].")
    parser.add_argument("--skip-baseline", action="store_true")
    args, _unknown = parser.parse_known_args(argv)
    entries = args.entries or (100_000 if args.quick else 1_000_000)
    count = args.lookups or (1_500 if args.quick else 6_000)
    began = time.monotonic()
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    rows: list[list[Any]] = []
    notes: list[str] = []
    if not args.skip_baseline:
        same = ["--entries", str(entries), "--lookups", str(count)]
        try:
            rows += baseline_rows(args.baseline, same + ["--skip-postgres"] * args.skip_postgres)
        except subprocess.CalledProcessError as e:  # e.g. a shallow clone without the revision
            why = e.stderr.decode().strip()[:200]
            notes.append(f"baseline skipped: git archive {args.baseline} failed: {why}")
    with tempfile.TemporaryDirectory(prefix="bench-lookup-") as folder:
        path = Path(folder) / "registry.db"
        found, note = run_store(
            "sqlite",
            lambda: Store.open(path, create=True),
            lambda: Store.open(path, readonly=True),
            lambda store: fill_sqlite(store, entries),
            entries,
            count,
        )
        rows += found
        notes.append(note)
    if not args.skip_postgres:
        try:
            cluster = start_cluster()
        except PostgresMissing as e:
            notes.append(f"postgresql skipped: {e}")
        else:
            try:
                url = cluster.create_database("lookup")
                found, note = run_store(
                    "postgresql",
                    lambda: Store.connect(url),
                    lambda: Store.connect(url),
                    lambda _store: fill_postgres(url, entries),
                    entries,
                    count,
                )
                rows += found
                notes.append(note)
            finally:
                cluster.stop()
    print(
        f"lookups at {entries:,} indexed entries ({3 * entries:,} rows), one at a time; "
        "target p99 < 10 ms"
    )
    print(table(["store", "hash", "lookups/s", "p50 ms", "p99 ms"], rows))
    p99 = {(row[0], row[1]): row[4] for row in rows}
    for store in ("sqlite", "postgresql"):
        before = p99.get((f"{store} @{args.baseline}", "all"))
        if before and (store, "all") in p99:
            ratio = p99[store, "all"] / before
            print(f"  {store}: p99 this tree / {args.baseline} = {ratio:.2f}")
    for note in notes:
        print(f"  {note}")
    print()
    print("filing: what indexing adds to the write path, 10,000 entries per kind (SQLite)")
    headers = ["entries", "appended/s", "filed/s", "filing time / append time"]
    print(table(headers, filing_rows(10_000)))
    print(f"(bench_lookup: {time.monotonic() - began:.0f} s)")


if __name__ == "__main__":
    main()
