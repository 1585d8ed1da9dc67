"""One HTTP/1.1 exchange on a keep-alive connection, for the load generators of the benchmarks."""

from __future__ import annotations

import asyncio
import time


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes
) -> tuple[int, float]:
    """Send one raw request and read its whole answer; returns (status, seconds taken)."""
    started = time.perf_counter()
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return int(head.split(b" ", 2)[1]), time.perf_counter() - started
