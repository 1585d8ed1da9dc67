"""Read a tiled log (C2SP tlog-tiles) over plain HTTP GETs: its checkpoint and its tiles.

>>> reader = TileReader("https://log.example/tlog/")
>>> reader.url("tile/0/000")
'https://log.example/tlog/tile/0/000'

The network half of a tile client: :class:`affidavit.verify.tlog.tiles.TiledTree` asks for paths
and checks every byte; this only fetches, through the one fetcher, on one keep-alive connection.
Any static host serves a tiled log, so failures are the neutral ``net.*`` (issue 22) unless the
caller passes its own :class:`~affidavit.registry.clients.https.Codes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from affidavit.registry.clients.https import (
    DEFAULT_TIMEOUT,
    NET,
    Codes,
    new_client,
    parse_url,
    send,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_CHECKPOINT_BYTES", "MAX_TILE_BYTES", "TileReader"]

MAX_CHECKPOINT_BYTES: Final = 1 << 20
# A full entry bundle is at most 256 entries of at most 65,535 bytes each (tlog-tiles, "Log
# entries"); a hash tile is 8,192 bytes.
MAX_TILE_BYTES: Final = 256 * (2 + 65_535)


class TileReader:
    """GETs under one URL prefix on one connection; use as a context manager, or :meth:`close`."""

    def __init__(
        self,
        prefix: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        codes: Codes = NET,
        until: float | None = None,
    ) -> None:
        """``prefix``: the log's URL prefix; ``timeout``: each GET's deadline; ``until``: the
        caller's one deadline, as :func:`~affidavit.registry.clients.https.send` takes it.

        Raises:
            ``usage.invalid``: ``prefix`` breaks the one URL rule (or has a query).
        """
        parse_url(prefix, allow_query=False)
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        self._timeout = timeout
        self._transport = transport
        self._codes = codes
        self._until = until
        self._client: Any = None

    def url(self, path: str) -> str:
        """The URL of ``path`` (relative to the prefix)."""
        return self.prefix + path

    def _http(self) -> Any:
        if self._client is None:
            self._client = new_client(
                timeout=self._timeout,
                transport=self._transport,
                headers={"Accept-Encoding": "gzip, identity"},  # tlog-tiles: "SHOULD include"
            )
        return self._client

    def checkpoint(self) -> bytes:
        """The log's current checkpoint note (``<prefix>checkpoint``), unverified.

        Raises:
            ``net.unavailable``, ``net.timeout``: a transport failure, or the deadline passed.
            ``net.bad_response``: not a 200, or over 1 MiB.
        """
        found = self.tile("checkpoint", max_bytes=MAX_CHECKPOINT_BYTES)
        if found is None:
            codes = self._codes
            raise codes.family(codes.bad_response, f"{self.url('checkpoint')}: 404")
        return found

    def tile(self, path: str, *, max_bytes: int = MAX_TILE_BYTES) -> bytes | None:
        """The bytes at ``path``, or None when the server answers 404 (absent).

        Raises:
            ``net.unavailable``, ``net.timeout``: a transport failure, or the deadline passed.
            ``net.bad_response``: a status other than 200 or 404, or too large a body.
        """
        url, codes = self.url(path), self._codes
        response = send(
            self._http(), "GET", url, max_bytes=max_bytes, codes=codes, until=self._until
        )
        if response.status == 404:
            return None
        if response.status != 200:
            raise codes.family(
                codes.bad_response,
                f"{url}: HTTP {response.status}",
                details={"url": url, "status": response.status},
            )
        return response.body

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> TileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
