"""The log as C2SP tlog-tiles (attest/log/tiles.py): the tile bytes, the folder writer's
incremental, never-overwrite and atomic rules, and the tiles' roots and proofs against the SQLite
log's own, byte for byte; a writer killed with SIGKILL leaves no torn tile."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.log.tiles import folder_fetch, tile_bytes, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.tlog.layout import (
    TileRef,
    bundles_for_size,
    parse_bundle,
    parse_tile_path,
    tiles_for_size,
)
from affidavit.verify.tlog.tiles import TiledTree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code

KEY = derive_test_key("affidavit tiles writer test key")  # TEST-ONLY
OTHER = derive_test_key("affidavit tiles writer other key")  # TEST-ONLY
LOG_ID = "tiles.test/log"
BIG = 1100


def _data(i: int) -> bytes:
    return f"leaf {i} ".encode() * (1 + i % 4)


def _log(path: Path, count: int, key: object = KEY, log_id: str = LOG_ID) -> TransparencyLog:
    log = TransparencyLog.create(path, key, log_id)  # type: ignore[arg-type]
    if count:
        log.append([_data(i) for i in range(count)])
    return log


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _db_fetch(log: TransparencyLog) -> object:
    return lambda path: tile_bytes(log, parse_tile_path(path))


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransparencyLog]:
    log = _log(tmp_path_factory.mktemp("big") / "big.db", BIG)
    yield log
    log.close()


# -- the bytes ----------------------------------------------------------------------------------


def test_tile_bytes_are_the_stored_nodes(big_log: TransparencyLog) -> None:
    leaves = [merkle.leaf_hash(_data(i)) for i in range(BIG)]
    assert tile_bytes(big_log, TileRef(0, 0)) == b"".join(leaves[:256])
    assert tile_bytes(big_log, TileRef(0, 4, 76)) == b"".join(leaves[1024:1100])
    assert tile_bytes(big_log, TileRef(0, 4, 3)) == b"".join(leaves[1024:1027])  # older size
    level1 = [merkle.root_of(leaves[i * 256 : (i + 1) * 256]) for i in range(4)]
    assert tile_bytes(big_log, TileRef(1, 0, 4)) == b"".join(level1)
    bundle = tile_bytes(big_log, TileRef(0, 1, entries=True))
    assert bundle is not None
    assert parse_bundle(bundle, 256) == [_data(i) for i in range(256, 512)]
    for beyond in [
        TileRef(0, 4),  # not full yet
        TileRef(0, 4, 77),
        TileRef(0, 5, 1),
        TileRef(1, 0, 5),
        TileRef(2, 0, 1),
        TileRef(0, 4, 77, entries=True),
    ]:
        assert tile_bytes(big_log, beyond) is None, beyond


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_tiles_give_the_logs_roots_and_proofs(
    big_log: TransparencyLog, data: st.DataObject
) -> None:
    size = data.draw(st.integers(1, BIG), label="size")
    tree = TiledTree(_db_fetch(big_log), size, big_log.root(size))  # type: ignore[arg-type]
    assert tree.root() == big_log.root(size)
    index = data.draw(st.integers(0, size - 1), label="index")
    assert tree.inclusion_proof(index) == list(big_log.inclusion_proof(index, size).path)
    old = data.draw(st.integers(1, size), label="old")
    assert tree.root(old) == big_log.root(old)
    assert tree.consistency_proof(old) == list(big_log.consistency_proof(old, size).path)


@pytest.fixture(scope="module")
def hashed_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransparencyLog]:
    """70,000 leaves appended by hash: three tile levels, no entry data."""
    log = TransparencyLog.create(tmp_path_factory.mktemp("hashed") / "big.db", KEY, LOG_ID)
    log.append_leaf_hashes([hashlib.sha256(b"%d" % i).digest() for i in range(70_000)])
    yield log
    log.close()


def test_a_70000_leaf_tree(hashed_log: TransparencyLog, tmp_path: Path) -> None:
    log = hashed_log
    report = write_tiles(log, tmp_path / "out", log.checkpoint())
    files = _files(tmp_path / "out")
    expected = {ref.path for ref in tiles_for_size(70_000)}
    assert set(files) == expected | {"checkpoint"}
    assert (report.tiles_written, report.bundles_written) == (277, 0)
    assert report.bundles_skipped == 274  # appended by hash: no entry data
    assert report.skipped_bundles[-1] == "tile/entries/273.p/112"
    tree = TiledTree(folder_fetch(tmp_path / "out"), 70_000, log.root())
    for index in (0, 255, 256, 65_535, 65_536, 69_999):
        assert tree.inclusion_proof(index) == list(log.inclusion_proof(index).path)
    for old in (1, 256, 65_536, 69_000):
        assert tree.consistency_proof(old) == list(log.consistency_proof(old).path)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_tiles_of_a_large_tree_give_the_logs_proofs(
    hashed_log: TransparencyLog, data: st.DataObject
) -> None:
    size = data.draw(st.integers(65_000, 70_000), label="size")
    tree = TiledTree(_db_fetch(hashed_log), size, hashed_log.root(size))  # type: ignore[arg-type]
    assert tree.root() == hashed_log.root(size)
    index = data.draw(st.integers(0, size - 1), label="index")
    assert tree.inclusion_proof(index) == list(hashed_log.inclusion_proof(index, size).path)
    old = data.draw(st.integers(1, size), label="old")
    assert tree.consistency_proof(old) == list(hashed_log.consistency_proof(old, size).path)


# -- the writer ---------------------------------------------------------------------------------


def test_incremental_writes_keep_every_published_size_readable(tmp_path: Path) -> None:
    out = tmp_path / "out"
    log = _log(tmp_path / "log.db", 0)
    published: list[tuple[int, bytes]] = []
    previous = 0
    for size in (5, 5, 300, 301, 700, 1100):
        log.append([_data(i) for i in range(log.size, size)])
        note = log.checkpoint()
        before = _files(out) if out.exists() else {}
        report = write_tiles(log, out, note)
        assert (report.previous_size, report.tree_size) == (previous, size)
        new = {ref.path for ref in tiles_for_size(size, since=previous)}
        bundles = {ref.path for ref in bundles_for_size(size, since=previous)}
        after = _files(out)
        assert set(after) - set(before) - {"checkpoint"} == new | bundles
        assert all(after[p] == b for p, b in before.items() if p != "checkpoint")  # kept
        assert report.tiles_written == len(new)
        assert report.bundles_written == len(bundles)
        assert after["checkpoint"] == note.encode()
        published.append((size, log.root(size)))
        previous = size
    fetch = folder_fetch(out)
    for size, root in published:  # a client holding any older checkpoint is still served
        tree = TiledTree(fetch, size, root)
        assert tree.check_entries() == size
        assert tree.inclusion_proof(size - 1) == list(log.inclusion_proof(size - 1, size).path)
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    log.close()


def test_same_size_rewrites_only_a_changed_checkpoint(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 10)
    note = log.checkpoint()
    write_tiles(log, tmp_path / "out", note)
    again = write_tiles(log, tmp_path / "out", note)
    assert (again.tiles_written, again.bundles_written, again.checkpoint_written) == (0, 0, False)
    assert again.bytes_written == 0
    # the same checkpoint with a witness cosignature line added (an unknown key: ignored)
    cosigned = log.add_cosignatures(note, ["\u2014 witness.example AAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"])
    report = write_tiles(log, tmp_path / "out", cosigned)
    assert report.checkpoint_written
    assert (tmp_path / "out" / "checkpoint").read_text() == cosigned


def test_hash_only_and_oversized_leaves_skip_their_bundles(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 256)
    log.append_leaf_hashes([merkle.leaf_hash(b"by hash")])  # in bundle 1
    log.append([b"after"] * 255)
    log.append([b"x" * 70_000])  # over the uint16 length of a bundle entry, in bundle 2
    log.append([b"after"] * 10)
    report = write_tiles(log, tmp_path / "out", log.checkpoint())
    assert report.bundles_written == 1
    assert report.skipped_bundles == ["tile/entries/001", "tile/entries/002.p/11"]
    assert tile_bytes(log, TileRef(0, 2, 11, entries=True)) is None
    assert tile_bytes(log, TileRef(0, 0, entries=True)) is not None
    tree = TiledTree(folder_fetch(tmp_path / "out"), log.size, log.root())
    assert tree.entry_bundle(0) == [_data(i) for i in range(256)]
    with raises_code("tlog.tile_missing"):
        tree.entry_bundle(1)


def test_an_empty_log_writes_only_its_checkpoint(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 0)
    report = write_tiles(log, tmp_path / "out", log.checkpoint())
    assert set(_files(tmp_path / "out")) == {"checkpoint"}
    assert (report.tree_size, report.tiles_written) == (0, 0)


def test_a_full_tile_with_other_bytes_is_never_overwritten(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 600)
    out = tmp_path / "out"
    (out / "tile" / "0").mkdir(parents=True)
    (out / "tile" / "0" / "001").write_bytes(b"\x00" * 8192)  # someone else's tile
    with raises_code("log.tiles_conflict"):
        write_tiles(log, out, log.checkpoint())
    assert (out / "tile" / "0" / "001").read_bytes() == b"\x00" * 8192
    assert not (out / "checkpoint").exists()
    # the same bytes are kept (an interrupted run)
    (out / "tile" / "0" / "001").write_bytes(tile_bytes(log, TileRef(0, 1)) or b"")
    report = write_tiles(log, out, log.checkpoint())
    # 0/001 is kept; the refused run may have written some of the others (this log's bytes)
    assert report.tiles_written + report.tiles_kept == 4
    assert report.tiles_kept >= 1
    tree = TiledTree(folder_fetch(out), 600, log.root())
    assert tree.inclusion_proof(300) == list(log.inclusion_proof(300).path)


def test_another_logs_folder_is_refused(tmp_path: Path) -> None:
    mine = _log(tmp_path / "mine.db", 10)
    other = _log(tmp_path / "other.db", 10, key=OTHER)
    write_tiles(other, tmp_path / "out", other.checkpoint())
    with raises_code("log.tiles_conflict"):
        write_tiles(mine, tmp_path / "out", mine.checkpoint())
    renamed = _log(tmp_path / "renamed.db", 0)
    renamed.append([_data(i) for i in range(10)])
    write_tiles(renamed, tmp_path / "r", renamed.checkpoint())
    with raises_code("log.tiles_conflict"):  # the same log under another origin
        write_tiles(renamed, tmp_path / "r", renamed.checkpoint("other.example/log"))


def test_the_published_checkpoint_never_moves_back_or_forks(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 10)
    old = log.checkpoint()
    log.append([b"more"])
    write_tiles(log, tmp_path / "out", log.checkpoint())
    with raises_code("log.tiles_conflict"):
        write_tiles(log, tmp_path / "out", old)
    # a fork: the same key and log ID, another tree, publishing into the first log's folder
    fork = _log(tmp_path / "fork.db", 9)
    fork.append([b"different"] * 3)
    with raises_code("log.tiles_conflict"):
        write_tiles(fork, tmp_path / "out", fork.checkpoint())


def test_a_folder_published_before_a_key_rotation_stays_this_logs(tmp_path: Path) -> None:
    moments = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
    log = TransparencyLog.create(tmp_path / "log.db", KEY, LOG_ID, clock=lambda: moments[-1])
    log.append([_data(i) for i in range(10)])
    write_tiles(log, tmp_path / "out", log.checkpoint())  # signed by KEY
    moments.append(moments[0] + dt.timedelta(hours=1))
    log.rotate_key(OTHER, moments[0] + dt.timedelta(minutes=30))
    log.append([_data(i) for i in range(10, 300)])
    report = write_tiles(log, tmp_path / "out", log.checkpoint())  # signed by OTHER
    assert (report.previous_size, report.tree_size) == (10, 300)
    TiledTree(folder_fetch(tmp_path / "out"), 300, log.root())
    log.close()


def test_a_checkpoint_of_another_log_or_tree_is_refused(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 10)
    other = _log(tmp_path / "other.db", 10, key=OTHER)
    with raises_code("checkpoint.no_trusted_signature"):
        write_tiles(log, tmp_path / "out", other.checkpoint())
    same_key = _log(tmp_path / "same.db", 12)
    with raises_code("log.checkpoint_foreign"):  # size 12 > 10
        write_tiles(log, tmp_path / "out", same_key.checkpoint())
    forked = _log(tmp_path / "forked.db", 0)
    forked.append([b"x"] * 10)
    with raises_code("log.checkpoint_foreign"):  # same size, other root
        write_tiles(log, tmp_path / "out", forked.checkpoint())
    assert not (tmp_path / "out").exists()


def test_stale_temporary_files_are_reused_or_cleaned_up(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 300)
    out = tmp_path / "out"
    (out / "tile" / "0" / "001.p").mkdir(parents=True)
    (out / "tile" / "0" / ".000.tmp").write_bytes(b"torn")  # the tile being written: reused
    (out / "tile" / "0" / "001.p" / ".17.tmp").write_bytes(b"torn")  # another size's partial
    write_tiles(log, out, log.checkpoint())
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert (out / "tile" / "0" / "000").stat().st_size == 8192


def test_a_missing_node_is_an_integrity_error(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.db", 300)
    with log.store.write() as db:
        db.execute("DELETE FROM log_nodes WHERE level = 0 AND idx = 17")
    with raises_code("log.integrity"):
        tile_bytes(log, TileRef(0, 0))
    assert tile_bytes(log, TileRef(0, 1, 44)) is not None
    log.close()


def test_folder_fetch_reads_relative_paths_only(tmp_path: Path) -> None:
    (tmp_path / "tile").mkdir()
    (tmp_path / "tile" / "x").write_bytes(b"data")
    fetch = folder_fetch(tmp_path)
    assert fetch("tile/x") == b"data"
    assert fetch("tile/y") is None
    assert fetch("tile/x/z") is None
    for bad in ["/etc/passwd", "../x", "tile/../tile/x", "tile//x", "tile/./x"]:
        with raises_code("usage.invalid"):
            fetch(bad)


# -- a writer killed mid-way --------------------------------------------------------------------

CRASH_LEAVES = 600_000


def _tile_files(root: Path) -> Iterator[tuple[Path, TileRef]]:
    for path in root.rglob("*"):
        if path.is_file() and not path.name.startswith(".") and path.name != "checkpoint":
            yield path, parse_tile_path(str(path.relative_to(root)))


@pytest.mark.slow
def test_sigkill_mid_write_leaves_no_torn_tile(tmp_path: Path) -> None:
    key_file = tmp_path / "log.key"
    key_file.write_bytes(private_key_pem(KEY))
    key_file.chmod(0o600)
    db = tmp_path / "crash.db"
    with TransparencyLog.create(db, KEY, LOG_ID, key_path=str(key_file)) as log:
        for offset in range(0, CRASH_LEAVES, 100_000):
            log.append_leaf_hashes(
                [hashlib.sha256(b"%d" % i).digest() for i in range(offset, offset + 100_000)]
            )
        note = log.checkpoint()
    affidavit = str(Path(sys.executable).with_name("affidavit"))
    killed = False
    for attempt in range(3):  # the writer may win the race on a fast disk: try a fresh folder
        out = tmp_path / f"out{attempt}"
        child = subprocess.Popen(
            [affidavit, "log", "tiles", str(db), str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and child.poll() is None:
                level0 = out / "tile" / "0"
                if level0.is_dir() and len(os.listdir(level0)) > 20:
                    break
                time.sleep(0.002)
            if child.poll() is None and not (out / "checkpoint").exists():
                os.kill(child.pid, signal.SIGKILL)
                killed = True
        finally:
            if child.poll() is None:
                child.kill()
            child.wait(timeout=30)
        if killed:
            break
    assert killed, "the writer finished before it could be killed, three times"
    assert not (out / "checkpoint").exists()
    written = list(_tile_files(out))
    assert written, "nothing was written before the kill"
    for path, ref in written:  # every visible tile is whole: never a torn or temporary file
        assert path.stat().st_size == ref.byte_length, path
    done = subprocess.run(
        [affidavit, "log", "tiles", str(db), str(out), "--json"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (out / "checkpoint").read_text() == note  # the recorded checkpoint, reused
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert {str(p.relative_to(out)) for p, _ in _tile_files(out)} == {
        ref.path for ref in tiles_for_size(CRASH_LEAVES)
    }
    vkey = verifier_key_string(LOG_ID, KEY.public_key)
    checkpoint = verify_checkpoint(
        (out / "checkpoint").read_bytes(), [parse_verifier_key(vkey)]
    ).checkpoint
    assert checkpoint == parse_checkpoint_body(parse_note(note).text)
    tree = TiledTree.for_checkpoint(folder_fetch(out), checkpoint)
    with TransparencyLog.open(db) as log:
        for index in (0, 123_456, CRASH_LEAVES - 1):
            proof = tree.inclusion_proof(index)
            assert proof == list(log.inclusion_proof(index).path)
            merkle.verify_inclusion(
                tree.leaf_hash(index), index, CRASH_LEAVES, proof, checkpoint.root_hash
            )
        for _, ref in _tile_files(out):  # every tile of the folder is the log's
            assert (out / ref.path).read_bytes() == tile_bytes(log, ref)


def test_key_rotations_are_written_before_the_checkpoint_and_only_grow(tmp_path: Path) -> None:
    clock = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
    log = TransparencyLog.create(tmp_path / "log.db", KEY, LOG_ID, clock=lambda: clock[0])
    log.append([b"a"])
    out = tmp_path / "out"
    write_tiles(log, out, log.checkpoint())
    assert not (out / "key-rotations").exists()  # a log that never rotated: no file
    for seq in (1, 2):
        clock[0] += dt.timedelta(hours=1)
        log.rotate_key(derive_test_key(f"writer rotation {seq}", key_id=f"k{seq}"))  # TEST-ONLY
        log.append([b"b"])
        write_tiles(log, out, log.checkpoint())
        history = log.key_history()
        expected = "".join(f"{entry.statement}\n" for entry in history[1:])
        assert (out / "key-rotations").read_text() == expected
    (out / "key-rotations").write_text("another log's rotations\n")
    with raises_code("log.tiles_conflict"):
        write_tiles(log, out, log.checkpoint())
    assert (out / "key-rotations").read_text() == "another log's rotations\n"
