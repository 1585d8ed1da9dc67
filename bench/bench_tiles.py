"""C2SP tlog-tiles: writing tiles vs the log's append rate, and proofs from tiles vs from SQLite.

Target: ``log tiles`` keeps up with the log, i.e. writing the tiles (and entry bundles) of N new
leaves takes less time than appending them: ratio >= 1x, for leaves appended by hash
(``append_leaf_hashes``, tiles only) and with data (``append``, tiles and bundles). Every file is
written atomically and fsynced, as in production.

Proofs: an inclusion proof computed from a tile folder with a warm cache (one TiledTree that
already holds every tile the proofs need: a monitor or mirror asking again), cold (a fresh
TiledTree per proof: the partial tiles and the proof's tiles are read from disk, bound to the root
(each full tile hashed up to its hash in the tile above) and their inner levels hashed; what a
client that fetches per proof pays, minus the network), and the SQLite log's own proof, at the
same size. Every proof from tiles is checked byte-equal to the log's.

Usage: python bench/bench_tiles.py [--quick]
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import table
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.tiles import folder_fetch, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.tlog.tiles import TiledTree

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out" / "bench_tiles"
KEY = derive_test_key("affidavit bench tiles key")  # TEST-ONLY


def payloads(count: int, start: int = 0) -> list[bytes]:
    """Leaf data shaped like docs/formats.md §4 finality leaves (~170 bytes)."""
    return [
        (
            f'{{"deal_id":"deal_{i:08d}","event_hash":"{i:064x}","event_id":"evt_{i:08d}",'
            '"event_type":"PROOF_READY","timestamp":"2026-11-22T04:00:00Z"}'
        ).encode()
        for i in range(start, start + count)
    ]


def _add(log: TransparencyLog, count: int, batch: int, *, data: bool) -> float:
    """Append ``count`` leaves in batches of ``batch`` (each durable); returns the seconds spent
    in the log's append calls."""
    elapsed = 0.0
    first = log.size
    for offset in range(first, first + count, batch):
        items = payloads(min(batch, first + count - offset), offset)
        if data:
            started = time.perf_counter()
            log.append(items)
        else:
            hashes = [hashlib.sha256(b"\x00" + d).digest() for d in items]
            started = time.perf_counter()
            log.append_leaf_hashes(hashes)
        elapsed += time.perf_counter() - started
    return elapsed


def _publish(log: TransparencyLog, folder: Path) -> tuple[float, int]:
    """Seconds to publish the log's current tree into ``folder``, and the files written."""
    note = log.checkpoint()
    started = time.perf_counter()
    report = write_tiles(log, folder, note)
    return time.perf_counter() - started, report.tiles_written + report.bundles_written


def keeping_up(path: Path, *, data: bool, rounds: int, chunk: int, batch: int) -> dict[str, float]:
    """The workload ``log tiles`` must keep up with: append ``chunk`` leaves, publish them, again
    ``rounds`` times (interleaved, so both see the same machine). Medians of the rounds: append
    leaves/s, publish leaves/s, and their ratio; and a publish of the whole tree from empty."""
    log = TransparencyLog.create(path, KEY, "bench/tiles")
    folder = path.with_suffix(".tiles")
    appends, publishes, ratios = [], [], []
    for _ in range(rounds):
        appended = _add(log, chunk, batch, data=data)
        published, _ = _publish(log, folder)
        appends.append(chunk / appended)
        publishes.append(chunk / published)
        ratios.append(appended / published)
    empties = []
    for attempt in range(3):
        seconds, files = _publish(log, path.with_suffix(f".empty{attempt}"))
        empties.append(log.size / seconds)
    size = log.size
    log.close()
    return {
        "append": statistics.median(appends),
        "publish": statistics.median(publishes),
        "ratio": statistics.median(ratios),
        "empty": statistics.median(empties),
        "size": size,
        "files": files,
    }


def proof_times_us(path: Path, samples: int) -> dict[str, float]:
    """Median µs per inclusion proof: SQLite, tiles warm, tiles cold; and bytes per cold proof."""
    log = TransparencyLog.open(path)
    size = log.size
    folder = path.with_suffix(".tiles")
    rng = random.Random(11)
    indexes = [rng.randrange(size) for _ in range(samples)]
    fetch = folder_fetch(folder)
    root = log.root(size)  # the checkpoint's root: every tile read is bound to it
    warm = TiledTree(fetch, size, root)
    for index in indexes:  # warm: every tile these proofs need is read (and hashed) once first
        warm.inclusion_proof(index)
    sqlite, warm_t, cold_t, cold_bytes = [], [], [], []
    for index in indexes:
        t0 = time.perf_counter()
        expected = log.inclusion_proof(index, size).path
        t1 = time.perf_counter()
        from_warm = warm.inclusion_proof(index)
        t2 = time.perf_counter()
        cold = TiledTree(fetch, size, root)
        from_cold = cold.inclusion_proof(index)
        t3 = time.perf_counter()
        assert list(expected) == from_warm == from_cold
        sqlite.append(t1 - t0)
        warm_t.append(t2 - t1)
        cold_t.append(t3 - t2)
        cold_bytes.append(cold.bytes_read)
    log.close()
    return {
        "sqlite": statistics.median(sqlite) * 1e6,
        "warm": statistics.median(warm_t) * 1e6,
        "cold": statistics.median(cold_t) * 1e6,
        "cold_bytes": statistics.median(cold_bytes),
    }


def main() -> None:
    """Print the table."""
    quick = "--quick" in sys.argv
    rounds = 3 if quick else 7
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)

    # each phase starts with nothing left to write back from the one before (os.sync)
    os.sync()
    full = keeping_up(OUT / "data.db", data=True, rounds=rounds, chunk=10_000, batch=1000)
    os.sync()
    hashed = keeping_up(OUT / "hashed.db", data=False, rounds=rounds, chunk=50_000, batch=10_000)
    os.sync()
    proofs = proof_times_us(OUT / "hashed.db", 200 if quick else 500)

    def pair(name: str, result: dict[str, float], chunk: int) -> list[list[str]]:
        return [
            [f"{name}, {chunk:,} leaves per round", f"{result['append']:,.0f} leaves/s", "1.00"],
            [
                "  publish those leaves (log tiles, incremental)",
                f"{result['publish']:,.0f} leaves/s",
                f"{result['ratio']:.2f}x",
            ],
            [
                f"  publish all {result['size']:,.0f} from empty ({result['files']:,.0f} files)",
                f"{result['empty']:,.0f} leaves/s",
                f"{result['empty'] / result['append']:.2f}x",
            ],
        ]

    rows = [
        *pair("append_leaf_hashes (tiles only)", hashed, 50_000),
        *pair("append (tiles + entry bundles)", full, 10_000),
        [
            f"inclusion proof @ {hashed['size']:,.0f}, SQLite log",
            f"{proofs['sqlite']:.1f} us",
            "1.00",
        ],
        [
            "  from the tile folder, warm cache",
            f"{proofs['warm']:.1f} us",
            f"{proofs['warm'] / proofs['sqlite']:.2f}x",
        ],
        [
            f"  from the tile folder, cold ({proofs['cold_bytes']:,.0f} bytes read)",
            f"{proofs['cold']:.1f} us",
            f"{proofs['cold'] / proofs['sqlite']:.2f}x",
        ],
    ]
    print(table(["operation (medians of interleaved rounds)", "measured", "ratio"], rows))
    keeps_up = min(hashed["ratio"], full["ratio"]) >= 1.0
    print(
        "\npublishing keeps up with appending (median ratio >= 1x): "
        f"{'met' if keeps_up else 'MISSED'}"
    )
    shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
