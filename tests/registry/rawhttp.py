"""A minimal HTTP/1.1 keep-alive client over asyncio, for load tests and the benchmark.

httpx's async pool slows down sharply past a few dozen concurrent connections on this machine,
so it would measure itself rather than the registry. Responses must carry Content-Length (every
registry response does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any


class Connection:
    """One keep-alive connection to 127.0.0.1:port."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        payload = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = await self.reader.readexactly(length) if length else b""
        return status, data

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()
