"""C2SP tlog-tiles (https://c2sp.org/tlog-tiles): tile paths, entry bundles, and a client that
computes roots and RFC 6962 proofs from tiles.

>>> from affidavit.verify.crypto.merkle import leaf_hash, root_of, verify_inclusion
>>> leaves = [leaf_hash(b"%d" % i) for i in range(300)]
>>> store = {"tile/0/000": b"".join(leaves[:256]), "tile/0/001.p/44": b"".join(leaves[256:]),
...          "tile/1/000.p/1": root_of(leaves[:256])}
>>> [ref.path for ref in tiles_for_size(300)]
['tile/0/000', 'tile/0/001.p/44', 'tile/1/000.p/1']
>>> tree = TiledTree(store.get, 300, root_of(leaves))  # the checkpoint's size and root
>>> verify_inclusion(leaves[7], 7, 300, tree.inclusion_proof(7), root_of(leaves))
>>> forged = TiledTree({**store, "tile/0/000": bytes(8192)}.get, 300, root_of(leaves))
>>> try:                                   # a full tile is bound to its hash in the tile above
...     forged.leaf_hash(7)
... except errors.ProofError as e:
...     print(e.code, e.details)
tlog.tile_mismatch {'path': 'tile/0/000'}
>>> tile_path(0, 1234067), parse_tile_path("tile/entries/x001/x234/067.p/8")
('tile/0/x001/x234/067', TileRef(level=0, index=1234067, width=8, entries=True))

The layout (tlog-tiles, "Merkle Tree"): the tile at level ``L``, index ``N`` holds up to 256
consecutive hashes of tree level ``8·L``: ``MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L])``.
A *full* tile has 256 hashes (8,192 bytes); the rightmost tile of each level of a tree of size
``s`` is *partial*, ``floor(s / 256^L) mod 256`` hashes wide, served at ``.p/<W>``. Entry bundles
(``tile/entries/...``, "Log entries") hold the leaves of the level-0 tile of the same index, each
prefixed by its length as a big-endian uint16.

The client, :class:`TiledTree`, does no I/O of its own: it is built with a *fetch* function and the
size and root of a checkpoint the caller has verified, and it uses no byte it has not bound to that
root (C2SP tlog-tiles client guidance; the class docstring says how). The fetch contract, the one
rule to implement:

- ``fetch(path)`` gets a path relative to the log's prefix (``"tile/0/x001/067"``,
  ``"tile/entries/000.p/9"``) and returns the resource's bytes, or ``None`` when the resource does
  not exist (HTTP 404, no such file). A missing tile is then ``tlog.tile_missing``.
- Anything it raises (a network error, a timeout, a permission error) propagates unchanged: a
  failure to fetch is not the same as "this log does not have it", so the caller decides.

``dict.get`` over a ``{path: bytes}`` mapping is a fetch function; so are a folder reader
(:func:`affidavit.attest.log.tiles.folder_fetch`) and an HTTP GET that maps 404 to ``None``.

Rules it keeps (tlog-tiles, "Partial Tiles"): only the tiles the size needs are fetched, and the
only partial tiles fetched are those of that size (never an arbitrary ``.p/W``). When a partial
tile is gone (the log MAY delete it once the full tile exists) the full tile is fetched instead and
its prefix used. Every tile is checked to be exactly ``32 · width`` bytes
(``tlog.tile_malformed``); every tile and entry must be bound to the root (``tlog.tile_mismatch``).
"""

from __future__ import annotations

import hmac
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import Checkpoint
from affidavit.verify.crypto.merkle import (
    EMPTY_ROOT,
    HASH_BYTES,
    leaf_hash,
    node_hash,
    subtree_hash,
)
from affidavit.verify.crypto.tree_ranges import consistency_ranges, inclusion_ranges

__all__ = [
    "MAX_ENTRY_BYTES",
    "MAX_LEVEL",
    "TILE_HEIGHT",
    "TILE_WIDTH",
    "Fetch",
    "TileRef",
    "TiledTree",
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

Fetch = Callable[[str], bytes | None]
"""``fetch(path) -> bytes | None``: the resource at ``path`` (relative to the log's prefix), or
``None`` when it does not exist. Exceptions propagate (module docstring)."""

# tile/<L>/<N>[.p/<W>] and tile/entries/<N>[.p/<W>] (tlog-tiles, "Merkle Tree", "Log entries").
# Canonical form only: the path is re-encoded after parsing and must come out the same.
_PATH: Final = re.compile(
    r"tile/(?:(?P<entries>entries)|(?P<level>0|[1-9][0-9]?))/"
    r"(?P<index>(?:x[0-9]{3}/){0,6}[0-9]{3})(?:\.p/(?P<width>[1-9][0-9]{0,2}))?"
)


@dataclass(frozen=True, slots=True)
class TileRef:
    """One tile or entry bundle: its level, index and width (256 for a full one).

    ``entries=True`` names the entry bundle of level-0 tile ``index`` (``level`` is then 0).
    """

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
        """Whether this is a partial tile (``.p/<W>``)."""
        return self.width < TILE_WIDTH

    @property
    def path(self) -> str:
        """The resource path, e.g. ``tile/0/x001/x234/067.p/8`` (tlog-tiles)."""
        if self.entries:
            return bundle_path(self.index, self.width)
        return tile_path(self.level, self.index, self.width)

    @property
    def full(self) -> TileRef:
        """The full tile (or bundle) of the same level and index."""
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


def _suffix(width: int) -> str:
    return "" if width == TILE_WIDTH else f".p/{width}"


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]`` (tlog-tiles, "Merkle Tree").

    >>> tile_path(0, 1234067), tile_path(2, 0, 1)
    ('tile/0/x001/x234/067', 'tile/2/000.p/1')

    Raises:
        ``usage.invalid``: the level, index or width is out of range.
    """
    TileRef(level, index, width)  # validates
    return f"tile/{level}/{_encode_index(index)}{_suffix(width)}"


def bundle_path(index: int, width: int = TILE_WIDTH) -> str:
    """``tile/entries/<N>[.p/<W>]`` (tlog-tiles, "Log entries").

    Raises:
        ``usage.invalid``: the index or width is out of range.
    """
    TileRef(0, index, width, entries=True)  # validates
    return f"tile/entries/{_encode_index(index)}{_suffix(width)}"


def parse_tile_path(path: str) -> TileRef:
    """Parse a tile or entry-bundle path (relative to the prefix, starting ``tile/``), strictly.

    Only the canonical form is accepted: ``<L>`` 0..63 and ``<W>`` 1..255 without leading zeros,
    ``<N>`` in 3-digit elements with no leading ``x000`` element, no trailing slash.

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
    """The tiles of a tree of ``size`` leaves, level by level (full ones first, then the partial
    one); with ``since``, only those a tree of ``since`` leaves does not have.

    A size-70,000 tree has 273 full level-0 tiles, a partial one of width 112, one full level-1
    tile, a partial one of width 17 and a partial level-2 tile of width 1 (tlog-tiles, "Partial
    Tiles"). Partial tiles of ``since`` are not listed (they stay valid for ``since``).

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


class _Tile:
    """One fetched tile's hashes, with the inner levels of its height-8 subtree built on demand
    (tlog-tiles: "the Merkle Tree levels between those expressed by the tile hashes are
    reconstructed by hashing the leaves")."""

    __slots__ = ("levels",)

    def __init__(self, data: bytes) -> None:
        self.levels: list[list[bytes]] = [
            [data[i : i + HASH_BYTES] for i in range(0, len(data), HASH_BYTES)]
        ]

    def node(self, height: int, position: int) -> bytes:
        """The hash ``height`` levels above the tile's hashes, at ``position`` in that level."""
        levels = self.levels
        while len(levels) <= height:
            below = levels[-1]
            levels.append([node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)])
        return levels[height][position]


class TiledTree:
    """The Merkle tree of one checkpoint, read from tiles (tlog-tiles) through ``fetch``, every
    hash of it bound to the checkpoint's root before it is used (Go's ``tlog.TileHashReader``).

    Binding is structural: there is no way to read a tile that was not checked.

    - The **partial tiles** of the size (one per level at most) are exactly what the root is
      computed from (RFC 9162 §2.1.1: the root folds the complete subtrees of the size's binary
      decomposition; the ones of tree heights ``8·L .. 8·L + 7`` are the hashes of the level-``L``
      partial tile). They are fetched when the tree is built and the root computed from them
      must be the checkpoint's (``tlog.tile_mismatch``): every hash they hold is then bound.
    - A **full tile** at level ``L``, index ``N`` is the subtree whose hash is hash ``N`` of tile
      level ``L + 1`` (tlog-tiles, "Merkle Tree"). It is accepted only when the MTH of its 256
      hashes equals that hash, read through the (recursively bound) tile above
      (``tlog.tile_mismatch``). The top level of a non-empty tree is always partial, so the
      recursion ends at a tile the root bound.
    - An **entry bundle** is accepted only when each entry hashes (RFC 6962 §2.1) to the bound
      level-0 hash of its position (``tlog.tile_mismatch``).

    Every node, root at an earlier size, proof and entry is then computed from bound hashes only.
    Tiles are fetched at most once per instance (kept in memory); :attr:`fetched` lists
    ``(path, length)`` of each fetch in order (:attr:`tiles_read` and :attr:`bytes_read` sum them
    up) and :attr:`missed` the paths that were not found. Proofs are RFC 6962 / RFC 9162
    §2.1.3-2.1.4, the same bytes the log's own proofs have. Not thread-safe.
    """

    def __init__(self, fetch: Fetch, size: int, root: bytes) -> None:
        """The tree of ``size`` leaves whose root is ``root``, both from a checkpoint the caller
        verified, read through ``fetch`` (module docstring: the contract).

        Raises:
            ``usage.invalid``: ``size`` is negative or not below 2^64, or ``root`` is not 32 bytes.
            ``tlog.tile_mismatch``: the partial tiles do not hash to ``root``.
            ``tlog.tile_missing``, ``tlog.tile_malformed``: a partial tile is absent or not
                ``32 · width`` bytes.
        """
        if not 0 <= size < _MAX_INDEX:
            raise errors.UsageError(f"tree size {size} is not in 0..2^64-1")
        if len(root) != HASH_BYTES:
            raise errors.UsageError(f"a root hash is {HASH_BYTES} bytes, not {len(root)}")
        self._fetch = fetch
        self.size: Final = size
        self.root_hash: Final = bytes(root)
        self.fetched: list[tuple[str, int]] = []
        self.missed: list[str] = []
        self._tiles: dict[tuple[int, int], _Tile] = {}
        self._bind_partial_tiles()

    @classmethod
    def for_checkpoint(cls, fetch: Fetch, checkpoint: Checkpoint) -> TiledTree:
        """The tree of a verified ``checkpoint`` (its size and root).

        Raises:
            ``tlog.tile_mismatch``, ``tlog.tile_missing``, ``tlog.tile_malformed``: as the
                constructor.
        """
        return cls(fetch, checkpoint.tree_size, checkpoint.root_hash)

    @property
    def tiles_read(self) -> int:
        """How many tiles and bundles were fetched so far (each at most once)."""
        return len(self.fetched)

    @property
    def bytes_read(self) -> int:
        """The bytes of every fetch so far."""
        return sum(length for _, length in self.fetched)

    # -- binding --------------------------------------------------------------------------------

    def _bind_partial_tiles(self) -> None:
        """Fetch the partial tile of every level and check that they fold to the root."""
        level, count = 0, self.size
        while count:  # ``count`` hashes at tile level ``level``
            if count % TILE_WIDTH:  # tlog-tiles, "Partial Tiles": floor(s / 256^L) mod 256
                ref = TileRef(level, count >> TILE_HEIGHT, count % TILE_WIDTH)
                self._tiles[(level, ref.index)] = self._load(ref)
            level += 1
            count >>= TILE_HEIGHT
        # RFC 9162 §2.1.1: every subtree of the root's decomposition lies in one of those tiles,
        # so this reads nothing else (a full tile, were one read, would be checked against them).
        computed = self.range_hash(0, self.size)
        if not hmac.compare_digest(computed, self.root_hash):
            raise errors.ProofError(
                "tlog.tile_mismatch",
                f"the tiles' root of size {self.size} is not the checkpoint's root",
                details={"expected": self.root_hash.hex(), "computed": computed.hex()},
            )

    def _tile(self, level: int, index: int) -> _Tile:
        """The bound tile at ``level``/``index``: a partial one (bound at construction) or a full
        one checked against its hash in the tile above."""
        cached = self._tiles.get((level, index))
        if cached is not None:
            return cached
        ref = self.tile_ref(level, index)
        if ref.partial:  # pragma: no cover - bound at construction, so always cached
            raise AssertionError(f"{ref.path} was not bound at construction")
        tile = self._load(ref)
        # tlog-tiles, "Merkle Tree": full tile (L, N) is the subtree of hash N at tile level L+1;
        # its MTH (the tile's inner node of height 8) must be that hash, itself bound.
        above = self._tile(level + 1, index >> TILE_HEIGHT)
        expected = above.levels[0][index % TILE_WIDTH]
        if not hmac.compare_digest(tile.node(TILE_HEIGHT, 0), expected):
            raise errors.ProofError(
                "tlog.tile_mismatch",
                f"{ref.path} does not hash to its hash in the tile above "
                f"({self.tile_ref(level + 1, index >> TILE_HEIGHT).path}, position "
                f"{index % TILE_WIDTH}), which the checkpoint's root binds",
                details={"path": ref.path},
            )
        self._tiles[(level, index)] = tile
        return tile

    def _load(self, ref: TileRef) -> _Tile:
        """Fetch tile ``ref`` (the full one's prefix when a partial one is gone), unchecked."""
        data, used = self._get(ref)
        _check_length(used, data)
        return _Tile(data[: ref.byte_length])  # a full tile's prefix in the fallback

    # -- tiles ----------------------------------------------------------------------------------

    def tile_ref(self, level: int, index: int) -> TileRef:
        """The tile at ``level``/``index`` as this size has it: full, or partial of this size.

        Raises:
            ``tlog.beyond_tree``: the tree of this size has no such tile.
        """
        count = self.size >> (TILE_HEIGHT * level) if 0 <= level <= MAX_LEVEL else 0
        if index < 0 or index >= -(-count // TILE_WIDTH):
            raise _beyond(f"tree size {self.size} has no tile at level {level}, index {index}")
        width = TILE_WIDTH if index < count >> TILE_HEIGHT else count % TILE_WIDTH
        return TileRef(level, index, width)

    def _get(self, ref: TileRef) -> tuple[bytes, TileRef]:
        """Fetch ``ref``; for a partial one that is gone, the full one. Returns the bytes and the
        resource they are."""
        data = self._fetch_one(ref.path)
        if data is not None:
            return data, ref
        if ref.partial:
            # tlog-tiles: clients "MAY fetch the full tile ... as a fallback in case the partial
            # tile is not available anymore".
            data = self._fetch_one(ref.full.path)
            if data is not None:
                return data, ref.full
        raise errors.ProofError(
            "tlog.tile_missing",
            f"{ref.path} is not available" + (f" (nor {ref.full.path})" if ref.partial else ""),
            details={"path": ref.path},
        )

    def _fetch_one(self, path: str) -> bytes | None:
        data = self._fetch(path)
        if data is None:
            self.missed.append(path)
            return None
        data = bytes(data)
        self.fetched.append((path, len(data)))
        return data

    # -- hashes ---------------------------------------------------------------------------------

    def node(self, height: int, index: int) -> bytes:
        """The hash of the complete subtree at tree level ``height``, position ``index`` (leaves
        ``[index·2^height, (index+1)·2^height)``), which must lie within the size.

        Raises:
            ``tlog.beyond_tree``: the subtree is not complete within the size.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        if height < 0 or index < 0 or (index + 1) << height > self.size:
            raise _beyond(
                f"subtree ({height}, {index}) is not complete in a tree of size {self.size}"
            )
        level, inner = divmod(height, TILE_HEIGHT)
        first = index << inner  # its first hash at tile level ``level``
        tile = self._tile(level, first >> TILE_HEIGHT)
        return tile.node(inner, (first % TILE_WIDTH) >> inner)

    def leaf_hash(self, index: int) -> bytes:
        """The leaf hash of leaf ``index`` (its level-0 tile hash).

        Raises:
            ``tlog.beyond_tree``, ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        return self.node(0, index)

    def range_hash(self, start: int, end: int) -> bytes:
        """MTH of leaves ``[start, end)`` (RFC 6962 §2.1), for ``start`` a multiple of a power of
        two at least ``end - start`` (every range a root or proof needs).

        Raises:
            ``usage.invalid``: the range is reversed or not so aligned.
            ``tlog.beyond_tree``, ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        if start == end:
            return EMPTY_ROOT
        if not 0 <= start < end or (start and (start & -start) < end - start):
            raise errors.UsageError(f"[{start}, {end}) is not an aligned range of leaves")
        if end > self.size:
            raise _beyond(f"leaves [{start}, {end}) are beyond tree size {self.size}")
        return subtree_hash(start, end, self.node)

    def root(self, size: int | None = None) -> bytes:
        """The root (MTH) of the first ``size`` leaves (default: this size); any smaller size is
        computed from this size's tiles, for a consistency check.

        Raises:
            ``tlog.beyond_tree``: ``size`` is negative or beyond this size.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        return self.range_hash(0, self._size(size))

    # -- proofs ---------------------------------------------------------------------------------

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 §2.1.3.1 inclusion proof of leaf ``index`` in the tree of ``size`` leaves
        (default: this size), leaf end first.

        Raises:
            ``tlog.beyond_tree``: not ``0 <= index < size <= this size``.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        n = self._size(size)
        if not 0 <= index < n:
            raise _beyond(f"leaf index {index} is not below tree size {n}")
        return [self.range_hash(a, b) for a, b in inclusion_ranges(index, n)]

    def consistency_proof(self, old: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 §2.1.4.1 consistency proof from ``old`` to ``size`` leaves (default: this
        size); empty when they are equal.

        Raises:
            ``merkle.consistency_from_zero``: ``old`` is 0.
            ``tlog.beyond_tree``: not ``0 < old <= size <= this size``.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        n = self._size(size)
        if old == 0:
            raise errors.ProofError(
                "merkle.consistency_from_zero", "a consistency proof from size 0 proves nothing"
            )
        if not 0 < old <= n:
            raise _beyond(f"no consistency proof from size {old} to size {n}")
        return [self.range_hash(a, b) for a, b in consistency_ranges(old, n)]

    # -- entries --------------------------------------------------------------------------------

    def entry_bundle(self, index: int) -> list[bytes]:
        """The entries of bundle ``index`` at this size (256, or the partial count of the last),
        each checked to hash to its level-0 tile hash.

        Raises:
            ``tlog.beyond_tree``: the tree of this size has no such bundle.
            ``tlog.tile_missing``, ``tlog.tile_malformed``, ``tlog.bundle_malformed``.
            ``tlog.tile_mismatch``: an entry does not hash to its tile's leaf hash.
        """
        tile = self.tile_ref(0, index)
        hashes = self._tile(0, index).levels[0]  # bound first: the entries are checked against it
        ref = TileRef(0, index, tile.width, entries=True)
        data, used = self._get(ref)
        entries = parse_bundle(data, used.width)[: ref.width]  # the full bundle's prefix, maybe
        for position, entry in enumerate(entries):
            if not hmac.compare_digest(leaf_hash(entry), hashes[position]):
                leaf = tile.start + position
                raise errors.ProofError(
                    "tlog.tile_mismatch",
                    f"entry {leaf} in {ref.path} does not hash to its leaf hash in {tile.path}",
                    details={"index": leaf, "path": ref.path},
                )
        return entries

    def check_entries(self, start: int = 0, end: int | None = None) -> int:
        """Check every entry of leaves ``[start, end)`` (default: to this size) against its
        level-0 tile hash, reading the bundles that hold them; returns how many were checked.

        Raises:
            ``tlog.beyond_tree``: the range is reversed or beyond this size.
            ``tlog.tile_missing``, ``tlog.tile_malformed``, ``tlog.bundle_malformed``,
            ``tlog.tile_mismatch``: as for :meth:`entry_bundle`.
        """
        stop = self._size(end)
        if not 0 <= start <= stop:
            raise _beyond(f"entries [{start}, {stop}) are not a range within size {self.size}")
        if start == stop:
            return 0
        for index in range(start >> TILE_HEIGHT, -(-stop // TILE_WIDTH)):
            self.entry_bundle(index)
        return stop - start

    def _size(self, size: int | None) -> int:
        if size is None:
            return self.size
        if not 0 <= size <= self.size:
            raise _beyond(f"tree size {size} is beyond this tree's size {self.size}")
        return size


def _beyond(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.beyond_tree", message)


def _check_length(ref: TileRef, data: bytes) -> None:
    if len(data) != ref.byte_length:
        raise errors.ProofError(
            "tlog.tile_malformed",
            f"{ref.path} is {len(data)} bytes; a tile of width {ref.width} is {ref.byte_length}",
            details={"path": ref.path, "length": len(data), "expected": ref.byte_length},
        )
