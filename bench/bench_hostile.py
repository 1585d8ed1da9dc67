"""Hostile shapes against ``verify bundle``'s reading path: time and peak memory per input byte.

Issue 35: no input may make the verifier do work that grows faster than its size, and every
input's memory stays a small multiple of its bytes. Each row is one document, given to
``BundleVerifier.verify_bytes`` (strict parse, then every step) as the CLI does:

- quote-heavy: 261 brackets two deep, then an unterminated string of ``\\"`` pairs (the depth
  pre-scan used to restart a string match at every quote: quadratic);
- deep: nothing but ``[`` (refused ``json.too_deep``);
- wide-proofs: a bundle whose ``proofs`` is ``{},`` repeated (one dict per three bytes);
- long-ints, long-empty-strings: a bundle whose ``proofs`` is ``1,`` or ``"",`` repeated (one
  list slot per two or three bytes; refused ``json.too_many_items`` once past a million items);
- many-events: a bundle of small valid-looking events (``event.hash_mismatch``).

Time is one run (``time.perf_counter``); memory is ``tracemalloc``'s peak over the call, as bytes
per input byte. Run: ``python bench/bench_hostile.py [--mib M]`` (default 8 MiB documents; the
strict parser's cap is 64 MiB).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

from _timing import table
from affidavit.verify.bundles.verifier import BundleVerifier


def quote_heavy(size: int) -> bytes:
    head = b"[" + b"[]," * 130 + b'"'  # more than 128 brackets, two deep
    return head + b'\\"' * ((size - len(head)) // 2)


def deep(size: int) -> bytes:
    return b"[" * size


def wide_proofs(size: int) -> bytes:
    head = b'{"deal_id":"d","events":[],"bundle_hash":"' + b"0" * 64 + b'","proofs":['
    tail = b"]}"
    count = (size - len(head) - len(tail)) // 3
    return head + b",".join([b"{}"] * count) + tail


def _long_proofs(item: bytes, size: int) -> bytes:
    head = b'{"deal_id":"d","events":[],"bundle_hash":"' + b"0" * 64 + b'","proofs":['
    count = (size - len(head) - 2) // (len(item) + 1)
    return head + b",".join([item] * count) + b"]}"


def long_ints(size: int) -> bytes:
    return _long_proofs(b"1", size)


def long_empty_strings(size: int) -> bytes:
    return _long_proofs(b'""', size)


def many_events(size: int) -> bytes:
    event = (
        b'{"event_id":"e","event_type":"PROOF_READY","deal_id":"d","actor_id":"a",'
        b'"timestamp":"2026-01-01T00:00:00Z","payload":{},"prev_hash":"","hash":"'
        + b"0" * 64
        + b'"}'
    )
    head = b'{"deal_id":"d","proofs":[],"bundle_hash":"' + b"0" * 64 + b'","events":['
    count = (size - len(head) - 2) // (len(event) + 1)
    return head + b",".join([event] * count) + b"]}"


SHAPES: dict[str, Callable[[int], bytes]] = {
    "quote-heavy": quote_heavy,
    "deep": deep,
    "wide-proofs": wide_proofs,
    "long-ints": long_ints,
    "long-empty-strings": long_empty_strings,
    "many-events": many_events,
}


def measure(name: str, data: bytes) -> list[object]:
    verifier = BundleVerifier()
    tracemalloc.start()
    start = time.perf_counter()
    result = verifier.verify_bytes(data)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    step = result.failed_step
    outcome = step.code if step is not None else result.verdict
    size = len(data)
    return [
        name,
        f"{size / 2**20:.1f}",
        f"{elapsed:.2f}",
        f"{peak / 2**20:.0f}",
        f"{peak / size:.1f}",
        outcome,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=8.0)
    parser.add_argument("--only", default="", help="comma-separated shape names")
    args = parser.parse_args()
    size = int(args.mib * 2**20)
    chosen = [s for s in args.only.split(",") if s] or list(SHAPES)
    rows = [measure(name, SHAPES[name](size)) for name in chosen]
    headers = ["shape", "MiB", "seconds", "peak MiB", "bytes/byte", "outcome"]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
