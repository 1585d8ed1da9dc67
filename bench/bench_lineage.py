"""Lineage benchmarks: walk latency at depth 5 over a large store, audit and insert throughput.

Usage: python bench/bench_lineage.py [--facts N] [--sample N] [--rebuild] [--skip-walk]

The large store (default 1,000,000 facts; each fact derived from its predecessor and from one
earlier fact chosen by a seeded RNG, so a depth-5 walk visits up to 63 facts) is built once into
bench-out/ and reused. Insert (with cycle checks) and audit are measured on a fresh store of
``--sample`` facts. Each row compares with a floor measured in the same run:

* walk: the same number of bare SQLite primary-key lookups (no parsing, no hashing);
* audit: ``json.loads`` + SHA-256 of each stored body (no validation, no RFC 8785, no graph);
  rows for the generic ``audit(store)``, ``FactStore.audit()`` (raw rows, one process) and
  ``FactStore.audit(jobs=2)`` (workers read their own key ranges; the pool start is timed too);
* insert: parsing and hashing the same facts without storing them.

Targets: walk p99 <= 5 ms, audit >= 50,000 facts/s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _timing import table
from affidavit.attest.stores.facts import FactStore
from affidavit.verify.lineage.audit import audit
from affidavit.verify.lineage.facts import Fact, parse_fact
from affidavit.verify.lineage.walk import walk

ROOT = Path(__file__).resolve().parent.parent
BATCH = 10_000


def facts(count: int, seed: int = 5) -> Iterator[Fact]:
    """Deterministic facts; fact i is derived from fact i-1 and one random earlier fact."""
    rng = random.Random(seed)
    hashes: list[str] = []
    scopes = ("local", "team", "company", "public")
    for index in range(count):
        document: dict[str, object] = {
            "entity": f"urn:bench:entity:{index % 5000}",
            "relation": "bench:observed",
            "value": {"type": "number", "v": index},
            "source": f"urn:bench:source:{index % 97}",
            "scope": scopes[index % 4],
            "confidence": round(rng.random(), 3),
            "ts": f"2026-01-01T00:{(index // 60) % 60:02d}:{index % 60:02d}Z",
        }
        if index >= 2:
            document["derived_from"] = [hashes[index - 1], hashes[rng.randrange(0, index - 1)]]
        elif index == 1:
            document["derived_from"] = [hashes[0]]
        fact = parse_fact(document)
        hashes.append(fact.hash)
        yield fact


def build(path: Path, count: int) -> float:
    """Build the store at ``path``; return facts per second (parse + checks + insert)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    start = time.perf_counter()
    batch: list[Fact] = []
    with FactStore.open(path, create=True) as store:
        for index, fact in enumerate(facts(count)):
            batch.append(fact)
            if len(batch) == BATCH:
                store.add_batch(batch)
                batch = []
                if (index + 1) % 100_000 == 0:
                    print(f"  built {index + 1:,} facts", file=sys.stderr)
        if batch:
            store.add_batch(batch)
    return count / (time.perf_counter() - start)


def percentile(samples: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``samples`` (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_walk(path: Path, roots: int = 1000) -> list[list[object]]:
    """Walk latency at depth 5 (warm page cache) against bare key lookups of the same nodes."""
    rng = random.Random(7)
    # Warm the page cache first (read the file once), so the numbers measure the walk, not the
    # disk: a cold 600 MiB store costs one random read per node on first touch.
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass
    db = sqlite3.connect(path)
    # FactHashes are uniform: the first key at or after a random one is a uniform random fact.
    keys = [
        row[0].hex()
        for _ in range(roots)
        for row in db.execute(
            "SELECT hash FROM facts WHERE hash >= ? ORDER BY hash LIMIT 1", (rng.randbytes(32),)
        )
    ]
    walk_ms: list[float] = []
    floor_ms: list[float] = []
    sizes: list[int] = []
    with FactStore.open(path) as store:
        for key in keys:
            start = time.perf_counter()
            result = walk(store, key, depth=5)
            walk_ms.append((time.perf_counter() - start) * 1000)
            sizes.append(len(result.nodes))
            start = time.perf_counter()
            for node in result.nodes:
                db.execute(
                    "SELECT body FROM facts WHERE hash = ?", (bytes.fromhex(node.hash),)
                ).fetchone()
            floor_ms.append((time.perf_counter() - start) * 1000)
    ratio = statistics.median(walk_ms) / max(statistics.median(floor_ms), 1e-9)
    return [
        [
            "walk depth 5, p50 ms",
            statistics.median(walk_ms),
            statistics.median(floor_ms),
            f"{ratio:.1f}x",
        ],
        [
            "walk depth 5, p99 ms",
            percentile(walk_ms, 0.99),
            percentile(floor_ms, 0.99),
            "target <= 5",
        ],
        ["nodes per walk (median)", statistics.median(sizes), "", ""],
    ]


def bench_insert_and_audit(sample: int) -> list[list[object]]:
    """Insert throughput (cycle checks on) and audit throughput on a fresh store."""
    parsed_docs = [dict(f.document) for f in facts(sample, seed=11)]
    start = time.perf_counter()
    parsed = [parse_fact(d) for d in parsed_docs]
    parse_rate = sample / (time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.db"
        with FactStore.open(path, create=True) as store:
            start = time.perf_counter()
            for offset in range(0, sample, BATCH):
                store.add_batch(parsed[offset : offset + BATCH])
            insert_rate = sample / (time.perf_counter() - start)
            start = time.perf_counter()
            report = audit(store)
            audit_rate = sample / (time.perf_counter() - start)
            assert report.ok, report.findings[:3]
            start = time.perf_counter()
            store_report = store.audit()
            store_rate = sample / (time.perf_counter() - start)
            start = time.perf_counter()
            parallel = store.audit(jobs=2)
            audit2_rate = sample / (time.perf_counter() - start)
            assert parallel == store_report == report
            bodies = [record.body for record in store.records()]
        start = time.perf_counter()
        for body in bodies:
            json.loads(body)
            hashlib.sha256(body).hexdigest()
        floor_rate = sample / (time.perf_counter() - start)
    return [
        [
            "insert facts/s (cycle checks)",
            insert_rate,
            parse_rate,
            f"{insert_rate / parse_rate:.2f}x",
        ],
        [
            "audit facts/s, audit(store)",
            audit_rate,
            floor_rate,
            f"{audit_rate / floor_rate:.2f}x; target >= 50,000",
        ],
        [
            "audit facts/s, store.audit() serial",
            store_rate,
            floor_rate,
            f"{store_rate / floor_rate:.2f}x; target >= 50,000",
        ],
        [
            "audit facts/s, store.audit(jobs=2)",
            audit2_rate,
            floor_rate,
            f"{audit2_rate / floor_rate:.2f}x; {audit2_rate / store_rate:.2f}x serial",
        ],
    ]


def main(argv: list[str] | None = None) -> None:
    """Run the benchmarks and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=100_000)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--skip-walk", action="store_true", help="Only insert and audit.")
    args, _unknown = parser.parse_known_args(argv)
    path = ROOT / "bench-out" / f"lineage-{args.facts}.db"
    rows: list[list[object]] = []
    if not args.skip_walk:
        if args.rebuild or not path.exists():
            print(f"building {path} ({args.facts:,} facts, once)...", file=sys.stderr)
            rate = build(path, args.facts)
            rows.append([f"build {args.facts:,}-fact store, facts/s", rate, "", "one-off"])
        rows += bench_walk(path)
        print(f"store: {path} ({args.facts:,} facts, {path.stat().st_size / 2**20:,.0f} MiB)")
    rows += bench_insert_and_audit(args.sample)
    print(f"audit sample: {args.sample:,} facts")
    print(table(["measure", "affidavit", "floor", "ratio / target"], rows))


if __name__ == "__main__":
    main()
