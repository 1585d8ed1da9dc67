"""Third-party conformance: a tlog-tiles tree written by Trillian Tessera (POSIX driver), read
from ``../shared/peer-vectors/tlog-tessera`` (its README: the vkey, 15 entries, a checkpoint per
size). For every size 0..15 the checkpoint verifies, the tiles hash to its root, the entries are
the README's and hash to the level-0 tiles, and every inclusion and consistency proof computed
from the tiles verifies."""

from __future__ import annotations

from pathlib import Path

import pytest
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import parse_verifier_key, verify_checkpoint
from affidavit.verify.tlog.layout import tiles_for_size
from affidavit.verify.tlog.tiles import TiledTree

from tests.conftest import raises_code

VKEY = "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx"
ENTRIES = [
    b"one",
    b"two",
    b"three",
    b"four",
    b"five",
    b"six",
    b"seven",
    b"eit",
    b"nain",
    b"ten",
    b"ileven",
    b"twelf",
    b"threeten",
    b"fourten",
    b"fivten",
]


@pytest.fixture(scope="module")
def tessera(peer_vectors: Path) -> Path:
    folder = peer_vectors / "tlog-tessera"
    if not folder.is_dir():
        pytest.skip(f"the Tessera test log is not at {folder}")
    return folder


def _fetch(folder: Path) -> object:
    def fetch(path: str) -> bytes | None:
        target = folder.joinpath(*path.split("/"))
        return target.read_bytes() if target.is_file() else None

    return fetch


def _checkpoint(folder: Path, size: int) -> tuple[int, bytes]:
    note = (folder / f"checkpoint.{size}").read_bytes()
    verified = verify_checkpoint(
        note, [parse_verifier_key(VKEY)], origin="example.com/log/testdata"
    )
    return verified.checkpoint.tree_size, verified.checkpoint.root_hash


def test_the_readme_vkey_is_the_one_used_here(tessera: Path) -> None:
    assert VKEY in (tessera / "README.md").read_text(encoding="utf-8")
    assert (tessera / "checkpoint").read_bytes() == (tessera / "checkpoint.15").read_bytes()


def test_size_0_checkpoint_is_the_empty_tree(tessera: Path) -> None:
    size, root = _checkpoint(tessera, 0)
    assert (size, root) == (0, merkle.EMPTY_ROOT)
    tree = TiledTree(_fetch(tessera), 0, root)  # type: ignore[arg-type]
    assert tree.fetched == []


@pytest.mark.parametrize("size", range(1, 16))
def test_tessera_tree_of_each_size(tessera: Path, size: int) -> None:
    checkpoint_size, root = _checkpoint(tessera, size)
    assert checkpoint_size == size
    tree = TiledTree(_fetch(tessera), size, root)  # type: ignore[arg-type]
    assert tree.entry_bundle(0) == ENTRIES[:size]
    leaves = [merkle.leaf_hash(e) for e in ENTRIES[:size]]
    assert [tree.leaf_hash(i) for i in range(size)] == leaves
    for index in range(size):
        merkle.verify_inclusion(leaves[index], index, size, tree.inclusion_proof(index), root)
    for old in range(1, size + 1):
        _, old_root = _checkpoint(tessera, old)
        assert tree.root(old) == old_root
        merkle.verify_consistency(old, size, tree.consistency_proof(old), old_root, root)
    # only this size's partial tiles were read (tlog-tiles: never an arbitrary partial tile)
    wanted = {ref.path for ref in tiles_for_size(size)} | {f"tile/entries/000.p/{size}"}
    assert {path for path, _ in tree.fetched} <= wanted


def test_tessera_tiles_refuse_a_wrong_root(tessera: Path) -> None:
    _, root = _checkpoint(tessera, 14)
    with raises_code("tlog.tile_mismatch"):
        TiledTree(_fetch(tessera), 15, root)  # type: ignore[arg-type]
