"""C2SP tlog-tiles client (https://c2sp.org/tlog-tiles): computes roots and RFC 6962 proofs from
tiles. The layout (tile paths, which tiles a size needs, entry bundles) is
:mod:`affidavit.verify.tlog.layout`.

>>> from affidavit.verify.crypto.merkle import leaf_hash, root_of, verify_inclusion
>>> leaves = [leaf_hash(b"%d" % i) for i in range(300)]
>>> store = {"tile/0/000": b"".join(leaves[:256]), "tile/0/001.p/44": b"".join(leaves[256:]),
...          "tile/1/000.p/1": root_of(leaves[:256])}
>>> tree = TiledTree(store.get, 300, root_of(leaves))  # the checkpoint's size and root
>>> verify_inclusion(leaves[7], 7, 300, tree.inclusion_proof(7), root_of(leaves))
>>> forged = TiledTree({**store, "tile/0/000": bytes(8192)}.get, 300, root_of(leaves))
>>> try:                                   # a full tile is bound to its hash in the tile above
...     forged.leaf_hash(7)
... except errors.ProofError as e:
...     print(e.code, e.details)
tlog.tile_mismatch {'path': 'tile/0/000'}

:class:`TiledTree` does no I/O of its own and uses no byte it has not bound to the root of a
checkpoint the caller verified (C2SP client guidance). It reads through ``fetch(path)``, e.g.
``dict.get`` or an HTTP GET: a path under the log's prefix (``"tile/0/x001/067"``) to its bytes,
or ``None`` for no such resource (``tlog.tile_missing``); what it raises (a failed fetch, not a
missing tile) propagates.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Final

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import Checkpoint
from affidavit.verify.crypto.merkle import (
    EMPTY_ROOT,
    HASH_BYTES,
    consistency_ranges,
    inclusion_ranges,
    leaf_hash,
    node_hash,
    subtree_hash,
)
from affidavit.verify.tlog.layout import (
    _MAX_INDEX,
    MAX_LEVEL,
    TILE_HEIGHT,
    TILE_WIDTH,
    TileRef,
    parse_bundle,
)

__all__ = ["Fetch", "TiledTree"]

Fetch = Callable[[str], bytes | None]
"""``fetch(path) -> bytes | None`` (module docstring)."""


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
    """The Merkle tree of one checkpoint, read from tiles, every hash bound to the checkpoint's
    root before use (Go's ``tlog.TileHashReader``), else ``tlog.tile_mismatch``: the partial tiles
    of the size must fold to the root (fetched at construction; a gone one's full tile's prefix
    serves), a full tile ``(L, N)`` to hash ``N`` of the bound tile at level ``L + 1`` (the top
    level is always partial, so the recursion ends), an entry to its bound level-0 hash. A tile is
    exactly ``32 · width`` bytes (``tlog.tile_malformed``) and fetched at most once
    (:attr:`fetched`: ``(path, length)`` per fetch; :attr:`missed`: the paths not found). Not
    thread-safe.
    """

    def __init__(self, fetch: Fetch, size: int, root: bytes) -> None:
        """The tree of ``size`` leaves whose root is ``root``, from a verified checkpoint.

        Raises:
            ``usage.invalid``: ``size`` is negative or not below 2^64, or ``root`` is not 32 bytes.
            ``tlog.tile_mismatch``: the partial tiles do not hash to ``root``.
            ``tlog.tile_missing``, ``tlog.tile_malformed``: a partial tile absent, or misshapen.
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
            ``tlog.tile_mismatch``, ``tlog.tile_missing``, ``tlog.tile_malformed``: as ``__init__``.
        """
        return cls(fetch, checkpoint.tree_size, checkpoint.root_hash)

    @property
    def tiles_read(self) -> int:
        return len(self.fetched)

    @property
    def bytes_read(self) -> int:
        return sum(length for _, length in self.fetched)

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
        """The bound tile at ``level``/``index``."""
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
        """The bytes of ``ref`` (of the full one for a gone partial one), and the resource read."""
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

    def node(self, height: int, index: int) -> bytes:
        """The hash of the complete subtree at tree level ``height``, position ``index``.

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
        """MTH of leaves ``[start, end)`` (RFC 6962 §2.1), aligned as :func:`subtree_hash` needs.

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
        """The root (MTH) of the first ``size`` leaves (default: this size).

        Raises:
            ``tlog.beyond_tree``: ``size`` is negative or beyond this size.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        return self.range_hash(0, self._size(size))

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 §2.1.3.1 inclusion proof of leaf ``index`` at ``size`` (default: this size).

        Raises:
            ``tlog.beyond_tree``: not ``0 <= index < size <= this size``.
            ``tlog.tile_missing``, ``tlog.tile_malformed``.
        """
        n = self._size(size)
        if not 0 <= index < n:
            raise _beyond(f"leaf index {index} is not below tree size {n}")
        return [self.range_hash(a, b) for a, b in inclusion_ranges(index, n)]

    def consistency_proof(self, old: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 §2.1.4.1 consistency proof from ``old`` to ``size`` (default: this size).

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

    def entry_bundle(self, index: int) -> list[bytes]:
        """The entries of bundle ``index`` at this size, each bound to its level-0 tile hash.

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
        """Check every entry of leaves ``[start, end)`` (default: to this size) as
        :meth:`entry_bundle` does; returns how many were checked.

        Raises:
            ``tlog.beyond_tree``: the range is reversed or beyond this size.
            ``tlog.tile_missing``, ``tlog.tile_malformed``, ``tlog.bundle_malformed``,
            ``tlog.tile_mismatch``.
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
