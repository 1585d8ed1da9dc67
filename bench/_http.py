"""Raw HTTP/1.1 load for the registry benchmarks: requests as bytes, one exchange on a keep-alive
connection, and :func:`drive`, which runs the clients in a separate process (uvloop when
installed) so the load generator does not share an event loop with the measurement."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any


def request(method: str, path: str, headers: str = "", body: bytes | None = None) -> bytes:
    """One raw request; ``headers`` are whole lines (``"Name: value\\r\\n"``), a body is JSON."""
    extra = ""
    if body is not None:
        extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}{extra}\r\n"
    return head.encode() + (body or b"")


def slices(items: Sequence[bytes], clients: int) -> list[list[bytes]]:
    """``items`` dealt out to ``clients`` (each client sends its own, none repeats another's)."""
    return [list(items[i::clients]) for i in range(clients)]


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes
) -> tuple[int, float]:
    """Send one raw request and read its whole answer; returns (status, seconds taken)."""
    started = time.perf_counter()
    writer.write(raw)
    status, _ = await read_answer(reader)
    return status, time.perf_counter() - started


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One whole answer on a keep-alive connection: its status and its body (Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    return int(head.split(b" ", 2)[1]), body


async def _client(
    port: int, requests: Sequence[bytes], stop: float, latencies: list[float], codes: Counter[int]
) -> int:
    """Send ``requests`` in order on one keep-alive connection until ``stop``; returns how many
    were sent again after the list ran out (0 when every request was distinct)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = 0
    try:
        while time.monotonic() < stop:
            status, seconds = await exchange(reader, writer, requests[sent % len(requests)])
            sent += 1
            latencies.append(seconds)
            codes[status] += 1
    finally:
        writer.close()
    return max(0, sent - len(requests))


def _load_process(
    ports: Sequence[int], shares: Sequence[Sequence[bytes]], seconds: float, out: Any
) -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    latencies: list[float] = []
    codes: Counter[int] = Counter()

    async def run() -> list[int]:
        stop = time.monotonic() + seconds
        return await asyncio.gather(
            *(
                _client(ports[i % len(ports)], share, stop, latencies, codes)
                for i, share in enumerate(shares)
            )
        )

    repeated = asyncio.run(run())
    out.send((latencies, dict(codes), sum(repeated)))


def drive(
    ports: Sequence[int], shares: Sequence[Sequence[bytes]], seconds: float
) -> dict[str, Any]:
    """Run one client per share (client i on ``ports[i % len(ports)]``) for ``seconds`` in a
    separate process; rate, p50/p99 latency, status counts, and repeated requests."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=_load_process, args=(ports, shares, seconds, child))
    process.start()
    try:
        latencies, codes, repeated = parent.recv()
    finally:
        process.join()
    return {**rates(latencies, seconds), "codes": codes, "repeated": repeated}


def rates(latencies: list[float], seconds: float) -> dict[str, float]:
    """Requests per second and the p50/p99 latency in ms of one run's latencies (seconds)."""
    ordered = sorted(latencies)
    n = len(ordered)
    return {
        "rps": n / seconds,
        "p50_ms": ordered[n // 2] * 1000 if n else 0.0,
        "p99_ms": ordered[min(n - 1, int(n * 0.99))] * 1000 if n else 0.0,
    }
