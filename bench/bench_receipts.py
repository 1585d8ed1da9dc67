"""Bulk receipt verification (``verify receipt DIR``) against the floor of hashing the same bytes.

Same run, same files: N receipts (default 2,000) over about 64 MiB of source plus content, each
source CRLF text with leading and trailing blanks, each content its ``newline_normalize`` then
``whitespace_trim`` output, laid out as ``verify receipt DIR`` reads them (contents beside their
``*.receipt.json``, sources under a source root; TEST-ONLY signing key).

- floor: read each receipt's source and content files and ``hashlib.sha256`` them, one process:
  the least any verifier must do;
- verify: the command's own bulk path (find the receipts, read and parse each, locate and read
  its files, check the signature, hash source and content, replay the chain, compare), with
  ``--jobs 1`` and ``--jobs 2`` (a process pool); the report is built but not printed.

Printed: seconds (median of ``--runs`` rounds, the three modes alternating in each round),
receipts/s, MB/s of source+content, and the ratio to the floor. Also the rate of
``make_receipt`` (replay + sign) while the corpus is built.

Run: ``python bench/bench_receipts.py [--receipts N] [--mib M] [--runs R]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _timing import table
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.receipts import make_receipt
from affidavit.cli import receipt as verify_receipt_cli
from affidavit.cli._common import read_artefact as read_bytes
from affidavit.cli._receipts import Layout, find_receipts, source_path
from affidavit.verify.receipts.format import load_receipt

KEY = derive_test_key("bench_receipts adapter key (TEST-ONLY)")
CHAIN = ("newline_normalize", "whitespace_trim")


def _source(index: int, size: int) -> bytes:
    line = f"  record {index:06d}: the quick brown fox jumps over the lazy dog\r\n".encode()
    body = line * max(1, size // len(line))
    return b"\r\n  " + body + b"  \r\n"


def _lossy(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").strip()


def build(root: Path, count: int, total_mib: float) -> tuple[Layout, int, float]:
    """Write the corpus; return its layout, its source+content bytes, and make_receipt's rate."""
    receipts, sources = root / "receipts", root / "src"
    per_source = int(total_mib * 1024 * 1024 / count / 2)
    total = 0
    making = 0.0
    for index in range(count):
        uri = f"d{index % 16:02d}/doc{index:05d}.txt"
        data = _source(index, per_source)
        content = _lossy(data)
        start = time.perf_counter()
        document = make_receipt(
            data,
            content,
            adapter="bench-lossy",
            adapter_version="1.0.0",
            transformations=CHAIN,
            key=KEY,
            source_uri=uri,
            issued_at="2026-01-01T00:00:00Z",
        )
        making += time.perf_counter() - start
        (sources / uri).parent.mkdir(parents=True, exist_ok=True)
        (sources / uri).write_bytes(data)
        out = receipts / uri
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content)
        out.with_name(out.name + ".receipt.json").write_text(json.dumps(document))
        total += len(data) + len(content)
    return Layout(str(receipts), str(sources), str(receipts)), total, count / making


def floor(layout: Layout) -> int:
    """Read and SHA-256 every source and content file (the receipts located as ``verify`` does)."""
    count = 0
    for task in find_receipts(layout):
        receipt = load_receipt(read_bytes(task.receipt))
        content = os.path.join(layout.contents, task.relative.removesuffix(".receipt.json"))
        for path in (source_path(receipt, layout.sources, what=task.receipt), content):
            hashlib.sha256(read_bytes(path)).digest()
        count += 1
    return count


def verify(layout: Layout, jobs: int) -> int:
    """The command's bulk path (``affidavit verify receipt DIR --jobs N``), without printing."""
    results = verify_receipt_cli._bulk(
        layout.receipts, layout.sources, layout.contents, [KEY.public_key.raw], jobs
    )
    bad = [r for r in results if not r.verified]
    assert not bad, bad[0]
    return len(results)


def _interleaved(modes: dict[str, Callable[[], int]], runs: int) -> dict[str, float]:
    """Median seconds of each mode over ``runs`` rounds, the modes alternating within a round so
    that a busy machine slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(runs):
        for name, fn in modes.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    """Build the corpus, time floor and verify (--jobs 1 and 2), print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--receipts", type=int, default=2000)
    parser.add_argument("--mib", type=float, default=64.0)
    parser.add_argument("--runs", type=int, default=5)
    args, _ = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench-receipts-") as folder:
        layout, total, make_rate = build(Path(folder), args.receipts, args.mib)
        mb = total / 1e6
        print(
            f"{args.receipts} receipts, {total / 2**20:.1f} MiB source+content, "
            f"{os.cpu_count()} CPU(s); make_receipt (replay + sign): {make_rate:,.0f} receipts/s"
        )
        modes: dict[str, Callable[[], int]] = {
            "floor: read + sha256": lambda: floor(layout),
            "verify receipt --jobs 1": lambda: verify(layout, 1),
            "verify receipt --jobs 2": lambda: verify(layout, 2),
        }
        seconds = _interleaved(modes, args.runs)
        floor_s = seconds["floor: read + sha256"]
        rows: list[list[object]] = [
            [name, s, args.receipts / s, mb / s, s / floor_s] for name, s in seconds.items()
        ]
        print(table(["mode", "seconds", "receipts/s", "MB/s", "x floor time"], rows))


if __name__ == "__main__":
    main()
