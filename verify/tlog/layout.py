"""C2SP tlog-tiles layout (https://c2sp.org/tlog-tiles): tile and entry-bundle paths, the tiles
a tree size needs, and the entry-bundle encoding. Pure arithmetic and bytes; the client that reads
tiles is :mod:`affidavit.verify.tlog.tiles`.

>>> [ref.path for ref in tiles_for_size(300)]
['tile/0/000', 'tile/0/001.p/44', 'tile/1/000.p/1']
>>> tile_path(0, 1234067), parse_tile_path("tile/entries/x001/x234/067.p/8")
('tile/0/x001/x234/067', TileRef(level=0, index=1234067, width=8, entries=True))

Tile ``(L, N)`` holds up to 256 consecutive hashes of tree level ``8·L``; the rightmost tile of
each level is *partial* (``.p/<W>``); entry bundles hold the leaves of the level-0 tile of the
same index, each prefixed by its length as a big-endian uint16 (tlog-tiles, "Merkle Tree", "Log
entries").
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from affidavit.verify import errors
from affidavit.verify.crypto.merkle import HASH_BYTES

__all__ = [
    "MAX_ENTRY_BYTES",
    "MAX_LEVEL",
    "TILE_HEIGHT",
    "TILE_WIDTH",
    "TileRef",
    "bundle_path",
    "bundles_for_size",
    "encode_bundle",
    "parse_bundle",
    "parse_tile_path",
    "tile_path",
    "tiles_for_size",
]

TILE_HEIGHT: Final = 8  # tlog-tiles: "a tile represents the entire subtree of height 8"
TILE_WIDTH: Final = 1 << TILE_HEIGHT  # 256 hashes in a full tile
MAX_LEVEL: Final = 63  # tlog-tiles: <L> is "between 0 and 63"
MAX_ENTRY_BYTES: Final = 0xFFFF  # tlog-tiles, "Log entries": uint16 length prefixes
_MAX_INDEX: Final = 1 << 64  # tile indexes (and tree sizes) fit in 64 bits
_U16: Final = struct.Struct(">H")  # tlog-tiles, "Log entries": big-endian uint16 lengths

# tile/<L>/<N>[.p/<W>] and tile/entries/<N>[.p/<W>] (tlog-tiles, "Merkle Tree", "Log entries").
# Canonical form only: the path is re-encoded after parsing and must come out the same.
_PATH: Final = re.compile(
    r"tile/(?:(?P<entries>entries)|(?P<level>0|[1-9][0-9]?))/"
    r"(?P<index>(?:x[0-9]{3}/){0,6}[0-9]{3})(?:\.p/(?P<width>[1-9][0-9]{0,2}))?"
)


@dataclass(frozen=True, slots=True)
class TileRef:
    """One tile, or (``entries``, level 0) entry bundle: level, index, width (256 when full)."""

    level: int
    index: int
    width: int = TILE_WIDTH
    entries: bool = False

    def __post_init__(self) -> None:
        if not (
            0 <= self.level <= MAX_LEVEL
            and 0 <= self.index < _MAX_INDEX
            and 1 <= self.width <= TILE_WIDTH
            and not (self.entries and self.level)
        ):
            raise errors.UsageError(
                f"not a tile: level {self.level} (0..{MAX_LEVEL}, 0 for entries), "
                f"index {self.index}, width {self.width} (1..{TILE_WIDTH})"
            )

    @property
    def partial(self) -> bool:
        return self.width < TILE_WIDTH

    @property
    def path(self) -> str:
        """The resource path, e.g. ``tile/0/x001/x234/067.p/8`` (tlog-tiles)."""
        kind = "entries" if self.entries else self.level
        suffix = "" if self.width == TILE_WIDTH else f".p/{self.width}"
        return f"tile/{kind}/{_encode_index(self.index)}{suffix}"

    @property
    def full(self) -> TileRef:
        return TileRef(self.level, self.index, TILE_WIDTH, self.entries)

    @property
    def start(self) -> int:
        """The first leaf this tile covers, ``N · 256^(L+1)`` (tlog-tiles "start index")."""
        return self.index << (TILE_HEIGHT * (self.level + 1))

    @property
    def byte_length(self) -> int:
        """The length of a tile of this width (not meaningful for entry bundles)."""
        return self.width * HASH_BYTES


def _encode_index(index: int) -> str:
    """``N`` as zero-padded 3-digit elements, all but the last prefixed ``x`` (tlog-tiles)."""
    groups = [f"{index % 1000:03d}"]
    index //= 1000
    while index:
        groups.append(f"x{index % 1000:03d}")
        index //= 1000
    return "/".join(reversed(groups))


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]`` (tlog-tiles, "Merkle Tree").

    >>> tile_path(0, 1234067), tile_path(2, 0, 1)
    ('tile/0/x001/x234/067', 'tile/2/000.p/1')

    Raises:
        ``usage.invalid``: the level, index or width is out of range.
    """
    return TileRef(level, index, width).path


def bundle_path(index: int, width: int = TILE_WIDTH) -> str:
    """``tile/entries/<N>[.p/<W>]`` (tlog-tiles, "Log entries").

    Raises:
        ``usage.invalid``: the index or width is out of range.
    """
    return TileRef(0, index, width, entries=True).path


def parse_tile_path(path: str) -> TileRef:
    """Parse a tile or entry-bundle path (``tile/...``) in its canonical form only.

    Raises:
        ``tlog.tile_path_invalid``: anything else.
    """
    match = _PATH.fullmatch(path)
    ref = None
    if match is not None:
        level = 0 if match["entries"] else int(match["level"])
        index = int(match["index"].replace("x", "").replace("/", ""))
        width = TILE_WIDTH if match["width"] is None else int(match["width"])
        if level <= MAX_LEVEL and index < _MAX_INDEX and width <= TILE_WIDTH:
            ref = TileRef(level, index, width, entries=bool(match["entries"]))
    if ref is None or ref.path != path:
        raise errors.ProofError(
            "tlog.tile_path_invalid",
            f"{path[:200]!r} is not a tile path (tile/<L>/<N>[.p/<W>] or "
            "tile/entries/<N>[.p/<W>], canonical form)",
        )
    return ref


def _check_sizes(size: int, since: int) -> None:
    if not 0 <= since <= size < _MAX_INDEX:
        raise errors.UsageError(f"tree sizes must be 0 <= since ({since}) <= size ({size}) < 2^64")


def tiles_for_size(size: int, *, since: int = 0) -> list[TileRef]:
    """The tiles of a tree of ``size`` leaves (only those one of ``since`` lacks), level by level,
    full ones then the partial one (tlog-tiles, "Partial Tiles").

    Raises:
        ``usage.invalid``: not ``0 <= since <= size < 2^64``.
    """
    _check_sizes(size, since)
    refs: list[TileRef] = []
    level = 0
    while size >> (TILE_HEIGHT * level):
        refs.extend(_level_tiles(level, size, since, entries=False))
        level += 1
    return refs


def bundles_for_size(size: int, *, since: int = 0) -> list[TileRef]:
    """The entry bundles of a tree of ``size`` leaves (those a tree of ``since`` lacks).

    Raises:
        ``usage.invalid``: not ``0 <= since <= size < 2^64``.
    """
    _check_sizes(size, since)
    return _level_tiles(0, size, since, entries=True)


def _level_tiles(level: int, size: int, since: int, *, entries: bool) -> list[TileRef]:
    count = size >> (TILE_HEIGHT * level)  # hashes at tile level ``level``
    old = since >> (TILE_HEIGHT * level)
    if count == old:
        return []
    refs = [
        TileRef(level, n, TILE_WIDTH, entries)
        for n in range(old >> TILE_HEIGHT, count >> TILE_HEIGHT)
    ]
    if count % TILE_WIDTH:  # floor(s / 256^L) mod 256 (tlog-tiles, "Partial Tiles")
        refs.append(TileRef(level, count >> TILE_HEIGHT, count % TILE_WIDTH, entries))
    return refs


def encode_bundle(entries: Iterable[bytes]) -> bytes:
    """An entry bundle: each entry as a big-endian uint16 length and its bytes (tlog-tiles).

    Raises:
        ``tlog.entry_too_large``: an entry is longer than 65,535 bytes.
    """
    items = list(entries)
    lengths = list(map(len, items))
    if lengths and max(lengths) > MAX_ENTRY_BYTES:
        position = next(i for i, n in enumerate(lengths) if n > MAX_ENTRY_BYTES)
        raise errors.ProofError(
            "tlog.entry_too_large",
            f"entry #{position} is {lengths[position]} bytes; a bundle entry holds at most "
            f"{MAX_ENTRY_BYTES} (uint16 length)",
            details={"position": position, "length": lengths[position]},
        )
    parts: list[bytes] = [b""] * (2 * len(items))
    parts[0::2] = list(map(_U16.pack, lengths))
    parts[1::2] = items
    return b"".join(parts)


def parse_bundle(data: bytes, count: int) -> list[bytes]:
    """The ``count`` entries of an entry bundle; exactly ``count``, no trailing bytes.

    Raises:
        ``tlog.bundle_malformed``: truncated, too few or too many entries, or trailing bytes.
    """
    entries: list[bytes] = []
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        if len(entries) == count:
            raise _bundle_error(f"{len(view) - offset} bytes after the {count} entries")
        if offset + 2 > len(view):
            raise _bundle_error(f"truncated length prefix of entry #{len(entries)}")
        length = int.from_bytes(view[offset : offset + 2], "big")
        offset += 2
        if offset + length > len(view):
            raise _bundle_error(f"entry #{len(entries)} is truncated ({length} bytes announced)")
        entries.append(bytes(view[offset : offset + length]))
        offset += length
    if len(entries) != count:
        raise _bundle_error(f"{len(entries)} entries, expected {count}")
    return entries


def _bundle_error(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.bundle_malformed", f"entry bundle: {message}")
