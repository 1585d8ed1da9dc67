"""Transparency log: append throughput and proof time at 1,000,000 leaves, vs the SHA-256 floor.

Targets: append >= 20,000 leaves/s (batched, durable: synchronous=FULL), and
inclusion and consistency proofs <= 1 ms each at 1,000,000 leaves.

The floor is the work no log can avoid, measured in this run: hashing the same leaves and interior
nodes in memory (leaf hash + about one node hash per leaf), and for a proof the ~log2(n) node
hashes a verifier recomputes. The 1M-leaf log is built once into bench-out/ and reused.

Usage: python bench/bench_log.py [--quick]   (--quick: 100,000-leaf proof log, fewer repeats)
"""

from __future__ import annotations

import hashlib
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ops_per_second, table
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.crypto import merkle

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out"
KEY = derive_test_key("affidavit bench log key")  # TEST-ONLY
BATCH = 1000


def leaf_payloads(count: int, start: int = 0) -> list[bytes]:
    """Leaf data shaped like docs/formats.md §4 finality leaves (~170 bytes of py-compact JSON)."""
    return [
        (
            f'{{"deal_id":"deal_{i:08d}","event_hash":"{i:064x}","event_id":"evt_{i:08d}",'
            '"event_type":"PROOF_READY","timestamp":"2026-11-22T04:00:00Z"}'
        ).encode()
        for i in range(start, start + count)
    ]


def floor_hashing(data: list[bytes]) -> float:
    """Leaves/s for hashing leaves and folding the right edge in memory (no storage)."""
    start = time.perf_counter()
    edge: list[bytes] = []
    for index, item in enumerate(data):
        current = hashlib.sha256(b"\x00" + item).digest()
        level = 0
        while (index >> level) & 1:
            current = hashlib.sha256(b"\x01" + edge.pop() + current).digest()
            level += 1
        edge.append(current)
    return len(data) / (time.perf_counter() - start)


def append_rate(folder: Path, data: list[bytes], batch: int) -> float:
    """Leaves/s appending ``data`` in batches of ``batch`` to a fresh log (each batch durable)."""
    path = folder / f"append-{batch}.db"
    with TransparencyLog.create(path, KEY, "bench/log") as log:
        start = time.perf_counter()
        for offset in range(0, len(data), batch):
            log.append(data[offset : offset + batch])
        return len(data) / (time.perf_counter() - start)


def big_log(size: int) -> Path:
    """The cached ``size``-leaf log in bench-out/ (built by leaf hash, in 50k-leaf batches)."""
    path = OUT / f"bench_log_{size}.db"
    if path.exists():
        with TransparencyLog.open(path) as log:
            if log.size == size:
                return path
        path.unlink()
    OUT.mkdir(exist_ok=True)
    print(f"building the {size:,}-leaf log in {path} (once) ...", file=sys.stderr)
    started = time.perf_counter()
    with TransparencyLog.create(path, KEY, "bench/log-big") as log:
        for offset in range(0, size, 50_000):
            count = min(50_000, size - offset)
            hashes = [hashlib.sha256(b"\x00" + d).digest() for d in leaf_payloads(count, offset)]
            log.append_leaf_hashes(hashes)
    print(f"  built in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path


def proof_times_ms(path: Path, size: int, samples: int) -> tuple[float, float, float]:
    """Median ms per inclusion proof, per consistency proof (to ``size``), per root."""
    rng = random.Random(7)
    with TransparencyLog.open(path) as log:
        inclusion, consistency, roots = [], [], []
        for _ in range(samples):
            index = rng.randrange(size)
            first = rng.randrange(1, size)
            t0 = time.perf_counter()
            log.inclusion_proof(index, size)
            t1 = time.perf_counter()
            log.consistency_proof(first, size)
            t2 = time.perf_counter()
            log.root(rng.randrange(1, size + 1))
            t3 = time.perf_counter()
            inclusion.append(t1 - t0)
            consistency.append(t2 - t1)
            roots.append(t3 - t2)
        # the proofs are real: spot-check one against the verifier
        proof = log.inclusion_proof(size // 3, size)
        merkle.verify_inclusion(proof.leaf_hash, size // 3, size, list(proof.path), proof.root_hash)
    return tuple(statistics.median(t) * 1000 for t in (inclusion, consistency, roots))  # type: ignore[return-value]


def main() -> None:
    """Print the table."""
    quick = "--quick" in sys.argv
    big = 100_000 if quick else 1_000_000
    appended = 50_000 if quick else 200_000
    OUT.mkdir(exist_ok=True)
    scratch = OUT / "bench_log_scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()

    left, right = hashlib.sha256(b"l").digest(), hashlib.sha256(b"r").digest()
    node_rate = ops_per_second(lambda: merkle.node_hash(left, right))
    data = leaf_payloads(appended)
    floor = floor_hashing(data)
    rate_1k = append_rate(scratch, data, BATCH)
    rate_10k = append_rate(scratch, data, 10_000)
    rate_1 = append_rate(scratch, data[:500], 1)  # one fsync per leaf: the unbatched worst case

    path = big_log(big)
    samples = 300 if quick else 1000
    inclusion_ms, consistency_ms, root_ms = proof_times_ms(path, big, samples)
    depth = big.bit_length()
    floor_proof_ms = depth / node_rate * 1000  # a verifier's ~log2(n) node hashes

    def vs(value: float, base: float) -> str:
        return f"{value / base:.4f}" if value < base / 100 else f"{value / base:.2f}"

    rows = [
        ["SHA-256 node hash (floor)", f"{node_rate:,.0f} /s", "1.00", "-"],
        ["hash leaves + edge in memory (floor)", f"{floor:,.0f} leaves/s", "1.00", "-"],
        ["append, batches of 1,000", f"{rate_1k:,.0f} leaves/s", vs(rate_1k, floor), ">= 20,000"],
        ["append, batches of 10,000", f"{rate_10k:,.0f} leaves/s", vs(rate_10k, floor), "-"],
        ["append, 1 leaf per commit", f"{rate_1:,.0f} leaves/s", vs(rate_1, floor), "-"],
    ]
    for name, value, target in [
        (f"inclusion proof @ {big:,}", inclusion_ms, "<= 1 ms"),
        (f"consistency proof @ {big:,}", consistency_ms, "<= 1 ms"),
        (f"root(random size) @ {big:,}", root_ms, "-"),
        (f"floor: {depth} node hashes", floor_proof_ms, "-"),
    ]:
        rows.append([name, f"{value:.4f} ms", f"{value / floor_proof_ms:.1f}x", target])
    print(table(["operation", "measured", "vs floor", "target"], rows))
    ok_append = rate_1k >= 20_000
    ok_proofs = inclusion_ms <= 1.0 and consistency_ms <= 1.0
    print(
        f"\nappend target (>= 20,000 leaves/s batched): {'met' if ok_append else 'MISSED'}; "
        f"proof target (<= 1 ms each at {big:,}): {'met' if ok_proofs else 'MISSED'}"
    )
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
