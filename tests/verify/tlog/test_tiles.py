"""C2SP tlog-tiles client (verify/tlog/tiles.py): paths, tile sets, entry bundles, and roots and
proofs from tiles, against an in-memory tree built here independently (one MTH per tile hash)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import Checkpoint
from affidavit.verify.tlog.layout import (
    TileRef,
    bundle_path,
    bundles_for_size,
    encode_bundle,
    parse_bundle,
    parse_tile_path,
    tile_path,
    tiles_for_size,
)
from affidavit.verify.tlog.tiles import TiledTree
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code


def _entries(count: int) -> list[bytes]:
    return [f"entry {i}".encode() * (1 + i % 3) for i in range(count)]


@cache
def _leaves(count: int) -> tuple[bytes, ...]:
    return tuple(merkle.leaf_hash(e) for e in _entries(count))


def _store(size: int) -> dict[str, bytes]:
    """Every tile and bundle of a tree of ``size`` leaves, built from the spec's formula:
    tile (L, N) holds MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L]) for i in 0..W-1."""
    leaves = _leaves(size)
    store: dict[str, bytes] = {}
    level = 0
    while size >> (8 * level):
        span = 256**level
        count = size // span
        for n in range(-(-count // 256)):
            width = min(256, count - 256 * n)
            hashes = [
                merkle.root_of(leaves[(n * 256 + i) * span : (n * 256 + i + 1) * span])
                for i in range(width)
            ]
            store[tile_path(level, n, width)] = b"".join(hashes)
        level += 1
    entries = _entries(size)
    for n in range(-(-size // 256)):
        width = min(256, size - 256 * n)
        store[bundle_path(n, width)] = encode_bundle(entries[n * 256 : n * 256 + width])
    return store


def _root(size: int) -> bytes:
    return merkle.root_of(list(_leaves(size)))


def _tree(store: dict[str, bytes], size: int) -> TiledTree:
    """The tree of ``size`` leaves read from ``store``, under the reference root of that size."""
    return TiledTree(store.get, size, _root(size))


def _merged(*sizes: int) -> dict[str, bytes]:
    """The folder a log has after publishing each of ``sizes`` in turn (old partials kept)."""
    store: dict[str, bytes] = {}
    for size in sizes:
        store.update(_store(size))
    return store


# -- paths --------------------------------------------------------------------------------------


def test_tile_paths_follow_the_spec_examples() -> None:
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path(0, 0) == "tile/0/000"
    assert tile_path(1, 999) == "tile/1/999"
    assert tile_path(1, 1000) == "tile/1/x001/000"
    assert tile_path(63, 5, 255) == "tile/63/005.p/255"
    assert bundle_path(1234067, 8) == "tile/entries/x001/x234/067.p/8"
    assert TileRef(2, 3, 7).path == "tile/2/003.p/7"
    assert TileRef(0, 3, entries=True).full == TileRef(0, 3, 256, entries=True)
    assert TileRef(1, 2).start == 2 * 65536


@settings(max_examples=200)
@given(
    st.integers(0, 63),
    st.integers(0, 2**64 - 1),
    st.integers(1, 256),
    st.booleans(),
)
def test_parse_tile_path_round_trips(level: int, index: int, width: int, entries: bool) -> None:
    ref = TileRef(0 if entries else level, index, width, entries)
    assert parse_tile_path(ref.path) == ref


@pytest.mark.parametrize(
    "path",
    [
        "tile/00/000",  # leading zero in L
        "tile/64/000",  # L beyond 63
        "tile/-1/000",
        "tile/0/0",  # N element not 3 digits
        "tile/0/1234",
        "tile/0/x001",  # the last element has no x
        "tile/0/001/002",  # a non-last element without x
        "tile/0/x000/001",  # not canonical: a leading zero element
        "tile/0/001.p/0",  # W 0
        "tile/0/001.p/256",  # W 256 is the full tile
        "tile/0/001.p/010",  # leading zero in W
        "tile/0/001.p/",
        "tile/0/001.p",
        "tile/0/001/",
        "/tile/0/001",
        "tile/0/001\n",
        "tile/entries/000.p/",
        "tile/entries/x000/000",
        "tile/data/000",
        "tile/0/\u0660\u0660\u0660",  # non-ASCII digits
        "tile/0/x018/x446/x744/x073/x709/x551/616",  # 2^64: beyond 64 bits
        "",
        "checkpoint",
    ],
)
def test_parse_tile_path_refuses_non_canonical_paths(path: str) -> None:
    with raises_code("tlog.tile_path_invalid"):
        parse_tile_path(path)


def test_tile_refs_refuse_impossible_tiles() -> None:
    for args in [(64, 0, 1), (0, -1, 1), (0, 0, 0), (0, 0, 257)]:
        with raises_code("usage.invalid"):
            TileRef(*args)
    with raises_code("usage.invalid"):
        TileRef(1, 0, entries=True)


# -- which tiles a size has ---------------------------------------------------------------------


def test_tiles_of_size_70000_are_the_spec_example() -> None:
    refs = tiles_for_size(70_000)
    full0 = [r for r in refs if r.level == 0 and not r.partial]
    assert [r.index for r in full0] == list(range(273))
    partial = [(r.level, r.index, r.width) for r in refs if r.partial]
    assert partial == [(0, 273, 112), (1, 1, 17), (2, 0, 1)]
    assert [r for r in refs if r.level == 1 and not r.partial] == [TileRef(1, 0)]
    assert len(refs) == 273 + 1 + 1 + 1 + 1


def test_tiles_of_small_sizes() -> None:
    assert [r.path for r in tiles_for_size(256)] == ["tile/0/000", "tile/1/000.p/1"]
    assert [r.path for r in tiles_for_size(255)] == ["tile/0/000.p/255"]
    assert tiles_for_size(0) == []
    assert [r.path for r in tiles_for_size(65536)] == [
        *(tile_path(0, n) for n in range(256)),
        "tile/1/000",
        "tile/2/000.p/1",
    ]
    assert [r.path for r in bundles_for_size(300)] == ["tile/entries/000", "tile/entries/001.p/44"]


def test_tiles_since_an_older_size_are_only_the_new_ones() -> None:
    assert [r.path for r in tiles_for_size(300, since=290)] == ["tile/0/001.p/44"]
    assert [r.path for r in tiles_for_size(300, since=300)] == []
    assert [r.path for r in tiles_for_size(512, since=300)] == ["tile/0/001", "tile/1/000.p/2"]
    assert [r.path for r in bundles_for_size(512, since=10)] == [
        "tile/entries/000",
        "tile/entries/001",
    ]
    with raises_code("usage.invalid"):
        tiles_for_size(10, since=11)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 200_000), st.integers(0, 200_000))
def test_tiles_since_partition_the_tiles_of_a_size(a: int, b: int) -> None:
    old, new = sorted((a, b))
    before = {r.path for r in tiles_for_size(old)}
    added = {r.path for r in tiles_for_size(new, since=old)}
    full_before = {p for p in before if ".p/" not in p}
    assert {r.path for r in tiles_for_size(new)} <= before | added
    assert not added & full_before
    assert {r.path for r in tiles_for_size(new) if not r.partial} == (
        full_before | {p for p in added if ".p/" not in p}
    )


# -- entry bundles ------------------------------------------------------------------------------


def test_bundles_round_trip_and_are_strict() -> None:
    entries = [b"", b"one", b"\x00" * 300, b"x" * 65_535]
    data = encode_bundle(entries)
    assert data[:5] == b"\x00\x00\x00\x03o"
    assert parse_bundle(data, 4) == entries
    assert parse_bundle(b"", 0) == []
    for broken, count in [
        (data + b"\x00", 4),  # trailing bytes
        (data, 3),  # more entries than asked
        (data, 5),  # fewer
        (data[:-1], 4),  # truncated entry
        (b"\x00", 1),  # truncated length
        (data + b"\x00\x01", 4),
    ]:
        with raises_code("tlog.bundle_malformed"):
            parse_bundle(broken, count)
    with raises_code("tlog.entry_too_large"):
        encode_bundle([b"x" * 65_536])


# -- the tree from tiles ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 7, 255, 256, 257, 300, 511, 512, 1000, 65_537])
def test_roots_and_proofs_from_tiles_match_the_reference(size: int) -> None:
    leaves = list(_leaves(size))
    root = merkle.root_of(leaves)
    tree = TiledTree(_store(size).get, size, root)
    assert tree.root() == root
    probes = sorted({0, 1, size // 3, size // 2, size - 1} & set(range(size)))
    for index in probes:
        proof = tree.inclusion_proof(index)
        assert proof == merkle.inclusion_proof(leaves, index)
        merkle.verify_inclusion(leaves[index], index, size, proof, root)
        assert tree.leaf_hash(index) == leaves[index]
    for old in sorted({1, size // 2, size - 1, size} - {0}):
        assert tree.root(old) == merkle.root_of(leaves[:old])
        proof = tree.consistency_proof(old)
        assert proof == merkle.consistency_proof(leaves, old, size)
        if old < size:
            merkle.verify_consistency(old, size, proof, merkle.root_of(leaves[:old]), root)
    assert tree.consistency_proof(size, size) == []
    # proofs in a smaller tree, from this size's tiles
    small = max(1, size // 2)
    assert tree.inclusion_proof(0, small) == merkle.inclusion_proof(leaves, 0, small)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_proofs_from_tiles_verify(data: st.DataObject) -> None:
    size = data.draw(st.integers(1, 1100))
    leaves = list(_leaves(size))
    root = merkle.root_of(leaves)
    tree = TiledTree(_store(size).get, size, root)
    index = data.draw(st.integers(0, size - 1))
    merkle.verify_inclusion(leaves[index], index, size, tree.inclusion_proof(index), root)
    old = data.draw(st.integers(1, size))
    assert tree.consistency_proof(old) == merkle.consistency_proof(leaves, old, size)


def test_a_tree_fetches_only_the_tiles_it_needs() -> None:
    store = _merged(300, 310)
    tree = _tree(store, 300)
    tree.root()
    # MTH(D[0:300]) = MTH(D[0:256]) (level-1 tile) and the level-0 partial tile's subtrees: the
    # partial tiles, read level by level when the tree is built
    assert [path for path, _ in tree.fetched] == ["tile/0/001.p/44", "tile/1/000.p/1"]
    assert tree.bytes_read == 32 + 44 * 32
    assert tree.tiles_read == 2
    tree.inclusion_proof(5)
    tree.root()
    paths = [path for path, _ in tree.fetched]
    assert paths == ["tile/0/001.p/44", "tile/1/000.p/1", "tile/0/000"]  # each fetched once
    assert not any(p.endswith(".p/54") for p in paths)  # never the partial tile of another size


def test_the_empty_tree_fetches_nothing() -> None:
    empty: dict[str, bytes] = {}
    tree = TiledTree(empty.get, 0, merkle.EMPTY_ROOT)
    assert tree.root() == merkle.EMPTY_ROOT
    assert tree.fetched == []
    with raises_code("tlog.tile_mismatch"):
        TiledTree(empty.get, 0, bytes(32))
    with raises_code("tlog.beyond_tree"):
        tree.leaf_hash(0)


def test_a_deleted_partial_tile_falls_back_to_the_full_tile() -> None:
    store = _merged(300, 512)
    del store["tile/0/001.p/44"]
    del store["tile/entries/001.p/44"]
    tree = _tree(store, 300)
    assert "tile/0/001.p/44" in tree.missed
    assert ("tile/0/001", 8192) in tree.fetched
    assert tree.entry_bundle(1) == _entries(300)[256:]


def test_a_missing_tile_is_tile_missing_and_fetch_errors_propagate() -> None:
    store = _store(300)
    del store["tile/0/001.p/44"]
    with raises_code("tlog.tile_missing"):
        _tree(store, 300)

    def broken(path: str) -> bytes | None:
        raise OSError(f"network down fetching {path}")

    with pytest.raises(OSError, match="network down"):
        TiledTree(broken, 300, _root(300))


@pytest.mark.parametrize(
    ("path", "change"),
    [
        ("tile/0/001.p/44", lambda b: b[:-1]),
        ("tile/0/001.p/44", lambda b: b + b"\x00" * 32),
        ("tile/1/000.p/1", lambda b: b""),
    ],
)
def test_a_tile_of_the_wrong_length_is_malformed(path: str, change: object) -> None:
    store = _store(300)
    store[path] = change(store[path])  # type: ignore[operator]
    with raises_code("tlog.tile_malformed"):
        _tree(store, 300)


def test_a_full_tile_fallback_of_the_wrong_length_is_malformed() -> None:
    store = _merged(300, 512)
    del store["tile/0/001.p/44"]
    store["tile/0/001"] = store["tile/0/001"][:-32]
    with raises_code("tlog.tile_malformed"):
        _tree(store, 300)


def test_a_changed_hash_fails_the_root_check() -> None:
    store = _store(300)
    data = bytearray(store["tile/0/001.p/44"])
    data[100] ^= 1
    store["tile/0/001.p/44"] = bytes(data)
    root = _root(300)
    with raises_code("tlog.tile_mismatch"):
        TiledTree(store.get, 300, root)
    checkpoint = Checkpoint("example.com/log", 300, root)
    with raises_code("tlog.tile_mismatch"):
        TiledTree.for_checkpoint(store.get, checkpoint)
    assert TiledTree.for_checkpoint(_store(300).get, checkpoint).size == 300
    with raises_code("usage.invalid"):
        TiledTree(_store(300).get, 300, root[:31])


@pytest.mark.parametrize(("size", "path", "above"), [
    (300, "tile/0/000", "tile/1/000.p/1"),
    (512, "tile/0/001", "tile/1/000.p/2"),
    (65_537, "tile/0/255", "tile/1/000"),
    (65_537, "tile/1/000", "tile/2/000.p/1"),
])  # fmt: skip
def test_a_changed_full_tile_is_refused_before_any_use(size: int, path: str, above: str) -> None:
    # Issue 21: a full tile the root does not fold is bound through its hash in the tile above
    # (tlog-tiles, "Merkle Tree"); before, a proof or an old root through it used its bytes.
    store = _store(size)
    data = bytearray(store[path])
    data[100] ^= 1
    store[path] = bytes(data)
    tree = _tree(store, size)  # the partial tiles are intact: the tree builds
    first = parse_tile_path(path).start
    for use in (
        lambda: tree.leaf_hash(first),
        lambda: tree.inclusion_proof(first),
        lambda: tree.root(first + 1),
        lambda: tree.consistency_proof(first + 1),
    ):
        with raises_code("tlog.tile_mismatch") as caught:
            use()
        assert caught.value.details == {"path": path}, above
    assert above in [p for p, _ in tree.fetched]


def test_a_full_tile_is_checked_up_to_the_root_through_every_level() -> None:
    # Leaf 0 of a 65,537-leaf tree: tile/0/000 (full) under tile/1/000 (full) under
    # tile/2/000.p/1 (partial, bound by the root).
    store = _store(65_537)
    tree = _tree(store, 65_537)
    assert tree.leaf_hash(0) == _leaves(65_537)[0]
    assert [p for p, _ in tree.fetched] == [
        "tile/0/256.p/1",
        "tile/2/000.p/1",
        "tile/0/000",
        "tile/1/000",
    ]


def test_entry_bundles_are_checked_against_the_level_0_tiles() -> None:
    store = _store(300)
    tree = _tree(store, 300)
    assert tree.entry_bundle(0) == _entries(300)[:256]
    assert tree.entry_bundle(1) == _entries(300)[256:]
    assert tree.check_entries() == 300
    assert tree.check_entries(256, 256) == 0
    assert tree.check_entries(10, 20) == 10
    changed = _entries(300)[256:]
    changed[3] = b"forged"
    store["tile/entries/001.p/44"] = encode_bundle(changed)
    with raises_code("tlog.tile_mismatch") as caught:
        _tree(store, 300).entry_bundle(1)
    assert caught.value.details["index"] == 259
    store["tile/entries/001.p/44"] = encode_bundle(changed[:-1])
    with raises_code("tlog.bundle_malformed"):
        _tree(store, 300).entry_bundle(1)
    del store["tile/entries/001.p/44"]
    with raises_code("tlog.tile_missing"):
        _tree(store, 300).check_entries()


def test_questions_beyond_the_size_are_refused() -> None:
    tree = _tree(_store(300), 300)
    calls: list[Callable[[], object]] = [
        lambda: tree.leaf_hash(300),
        lambda: tree.leaf_hash(-1),
        lambda: tree.root(301),
        lambda: tree.inclusion_proof(300),
        lambda: tree.inclusion_proof(5, 5),
        lambda: tree.consistency_proof(301),
        lambda: tree.consistency_proof(5, 301),
        lambda: tree.node(9, 0),
        lambda: tree.node(8, 1),
        lambda: tree.tile_ref(0, 2),
        lambda: tree.tile_ref(2, 0),
        lambda: tree.tile_ref(-1, 0),
        lambda: tree.entry_bundle(2),
        lambda: tree.check_entries(0, 301),
        lambda: tree.check_entries(20, 10),
    ]
    for call in calls:
        with raises_code("tlog.beyond_tree"):
            call()
    with raises_code("merkle.consistency_from_zero"):
        tree.consistency_proof(0)
    with raises_code("usage.invalid"):
        tree.range_hash(3, 7)  # not aligned
    with raises_code("usage.invalid"):
        TiledTree(_store(1).get, -1, _root(1))
    assert tree.tile_ref(1, 0) == TileRef(1, 0, 1)
    assert tree.range_hash(4, 4) == merkle.EMPTY_ROOT


def test_fetch_results_may_be_any_bytes_like() -> None:
    store = {path: bytearray(data) for path, data in _store(40).items()}
    tree = TiledTree(store.get, 40, _root(40))  # type: ignore[arg-type]
    assert tree.root() == merkle.root_of(list(_leaves(40)))


def test_errors_are_proof_errors() -> None:
    with pytest.raises(errors.ProofError):
        parse_tile_path("nope")


# -- issue 36: what the first mutation run showed no test judged --------------------------------


def _said(call: Callable[[], object], code: str) -> errors.AffidavitError:
    with raises_code(code) as caught:
        call()
    assert isinstance(caught.value.message, str)
    assert caught.value.message
    return caught.value


def test_every_refusal_says_why_with_its_details() -> None:
    store = _store(300)
    tree = _tree(store, 300)
    beyond: list[Callable[[], object]] = [
        lambda: tree.leaf_hash(300),
        lambda: tree.node(-1, 0),  # a negative height is no subtree (not a shift error)
        lambda: tree.node(0, -1),
        lambda: tree.root(301),
        lambda: tree.inclusion_proof(300),
        lambda: tree.consistency_proof(301),
        lambda: tree.tile_ref(0, 2),
        lambda: tree.range_hash(0, 301),
        lambda: tree.check_entries(20, 10),
    ]
    for call in beyond:
        _said(call, "tlog.beyond_tree")
    _said(lambda: tree.consistency_proof(0), "merkle.consistency_from_zero")
    usage: list[Callable[[], object]] = [
        lambda: tree.range_hash(12, 20),  # 12 is a multiple of 4, not of 8
        lambda: tree.range_hash(7, 3),
        lambda: TiledTree(store.get, 300, bytes(31)),
        lambda: TiledTree(store.get, -1, _root(1)),
    ]
    for call in usage:
        _said(call, "usage.invalid")
    wrong_root = bytes(32)
    mismatch = _said(lambda: TiledTree(store.get, 300, wrong_root), "tlog.tile_mismatch")
    assert mismatch.details == {"expected": wrong_root.hex(), "computed": _root(300).hex()}
    short = {**store, "tile/0/001.p/44": store["tile/0/001.p/44"][:-1]}
    malformed = _said(lambda: _tree(short, 300), "tlog.tile_malformed")
    assert malformed.details == {"path": "tile/0/001.p/44", "length": 44 * 32 - 1, "expected": 1408}
    gone = {k: v for k, v in store.items() if k != "tile/0/000"}
    missing = _said(lambda: _tree(gone, 300).leaf_hash(0), "tlog.tile_missing")
    assert missing.details == {"path": "tile/0/000"}
    forged = _entries(300)[:256]
    forged[7] = b"forged"
    bad_entry = {**store, "tile/entries/000": encode_bundle(forged)}
    entry = _said(lambda: _tree(bad_entry, 300).entry_bundle(0), "tlog.tile_mismatch")
    assert entry.details == {"index": 7, "path": "tile/entries/000"}
    bad_tile = {**store, "tile/0/000": bytes(8192)}
    tile = _said(lambda: _tree(bad_tile, 300).leaf_hash(0), "tlog.tile_mismatch")
    assert tile.details == {"path": "tile/0/000"}


def test_a_tree_size_is_below_2_64() -> None:
    empty: dict[str, bytes] = {}
    with raises_code("usage.invalid"):
        TiledTree(empty.get, 1 << 64, bytes(32))
    with raises_code("tlog.tile_missing"):  # a size it takes: then it looks for the tiles
        TiledTree(empty.get, (1 << 64) - 1, bytes(32))


def test_size_zero_is_the_empty_tree_within_any_tree() -> None:
    tree = _tree(_store(300), 300)
    assert tree.root(0) == merkle.EMPTY_ROOT
    assert tree.check_entries(0, 0) == 0
    with raises_code("tlog.beyond_tree"):
        tree.inclusion_proof(0, 0)


def test_check_entries_reads_exactly_the_bundles_of_its_range() -> None:
    store = _store(600)
    del store["tile/entries/000"]  # leaves 0..255: not in [300, 600)
    tree = _tree(store, 600)
    assert tree.check_entries(300) == 300
    assert not any(path.startswith("tile/entries/000") for path, _ in tree.fetched)
    changed = _entries(600)[256:512]
    changed[1] = b"forged"
    store["tile/entries/001"] = encode_bundle(changed)
    with raises_code("tlog.tile_mismatch") as caught:
        _tree(store, 600).check_entries(300)
    assert caught.value.details["index"] == 257


def test_tile_refs_of_a_tree_of_2_60_plus_1_leaves() -> None:
    # Two partial tiles: 16 hashes at level 7 (subtrees of 2^56 leaves) and one leaf at level 0,
    # index 2^52; the root is RFC 6962's MTH of the two parts. 2^60 + 1 has no float form, so
    # a tile count computed in floats would lose the last, partial tile.
    size = (1 << 60) + 1
    top = [merkle.leaf_hash(b"top %d" % i) for i in range(16)]
    leaf = merkle.leaf_hash(b"last")
    store = {tile_path(7, 0, 16): b"".join(top), tile_path(0, 1 << 52, 1): leaf}
    root = merkle.node_hash(merkle.root_of(top), leaf)
    tree = TiledTree(store.get, size, root)
    assert tree.tile_ref(0, 1 << 52) == TileRef(0, 1 << 52, 1)
    assert tree.tile_ref(0, (1 << 52) - 1) == TileRef(0, (1 << 52) - 1, 256)
    assert tree.tile_ref(7, 0) == TileRef(7, 0, 16)
    assert tree.leaf_hash(size - 1) == leaf
    assert tree.root() == root
    with raises_code("tlog.beyond_tree"):
        tree.tile_ref(0, (1 << 52) + 1)
