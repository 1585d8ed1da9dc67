"""`affidavit log tiles DB DIR` in-process: the summary and --json, which checkpoint it publishes
(recorded or signed, with `log head`'s key rules), one-line errors with exit 2, and the golden
tile tree in vectors/tlog/tiles (regenerated here and byte-compared)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import SigningKey, derive_test_key, private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli.main import affidavit
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.tlog.layout import parse_tile_path, tile_path, tiles_for_size
from affidavit.verify.tlog.tiles import TiledTree
from click.testing import CliRunner, Result

from tests.conftest import UPDATE_GOLDENS, VECTORS, assert_golden, raises_code

KEY = derive_test_key("affidavit cli tiles key")  # TEST-ONLY
OTHER = derive_test_key("affidavit cli tiles other key")  # TEST-ONLY
LOG_ID = "cli.test/tiles"


def _key_file(folder: Path, name: str, key: SigningKey) -> Path:
    path = folder / f"{name}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(key))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["log", *args])


def _json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _error(result: Result, code: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {code}: "), lines[0]


def _append(db: Path, count: int) -> None:
    with TransparencyLog.open(db) as log:
        log.append([f"cli entry {i}".encode() for i in range(log.size, log.size + count)])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    key_file = _key_file(tmp_path, "log", KEY)
    path = tmp_path / "log.db"
    assert _run("init", str(path), "--key", str(key_file), "--log-id", LOG_ID).exit_code == 0
    return path


def test_summary_line_and_json(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _append(db, 300)
    first = _run("tiles", str(db), str(out))
    assert first.exit_code == 0, first.output
    assert first.stdout == (
        f"size 300 (from 0): 3 tiles, 2 entry bundles written, 0 bundles skipped (a leaf "
        f"without data or over 65,535 bytes); checkpoint signed in {out}\n"
    )
    again = _json(_run("tiles", str(db), str(out), "--json"))
    assert again == {
        "ok": True,
        "checkpoint_signed": False,  # the checkpoint recorded by the first run covers the size
        "directory": str(out),
        "tree_size": 300,
        "previous_size": 300,
        "tiles_written": 0,
        "tiles_kept": 0,
        "bundles_written": 0,
        "bundles_kept": 0,
        "bundles_skipped": 0,
        "bytes_written": 0,
        "checkpoint_written": False,
        "skipped_bundles": [],
    }
    _append(db, 10)
    grown = _json(_run("tiles", str(db), str(out), "--json"))
    assert grown["checkpoint_signed"] is True
    assert (grown["previous_size"], grown["tree_size"]) == (300, 310)
    assert (grown["tiles_written"], grown["bundles_written"]) == (1, 1)
    vkey = _run("vkey", str(db)).stdout.strip()
    note = (out / "checkpoint").read_bytes()
    checkpoint = verify_checkpoint(note, [parse_verifier_key(vkey)]).checkpoint
    with TransparencyLog.open(db) as log:
        tree = TiledTree.for_checkpoint(_fetch(out), checkpoint)
        assert tree.check_entries() == 310
        assert tree.inclusion_proof(299) == list(log.inclusion_proof(299).path)


def _fetch(root: Path) -> Any:
    def fetch(path: str) -> bytes | None:
        target = root.joinpath(*path.split("/"))
        return target.read_bytes() if target.exists() else None

    return fetch


def test_the_recorded_checkpoint_is_published_with_its_cosignatures(
    db: Path, tmp_path: Path
) -> None:
    _append(db, 3)
    with TransparencyLog.open(db, KEY) as log:
        note = log.checkpoint()
        cosigned = log.add_cosignatures(note, ["\u2014 witness.example AAAAAAAAAAAAAAAAAAAAAAA=\n"])
    result = _json(_run("tiles", str(db), str(tmp_path / "out"), "--json"))
    assert result["checkpoint_signed"] is False
    assert (tmp_path / "out" / "checkpoint").read_text() == cosigned


def test_origin_signs_a_checkpoint_under_that_name(db: Path, tmp_path: Path) -> None:
    _append(db, 3)
    _run("head", str(db), "--checkpoint")  # recorded under the log ID
    result = _json(
        _run("tiles", str(db), str(tmp_path / "out"), "--origin", "o.example/log", "--json")
    )
    assert result["checkpoint_signed"] is True
    note = (tmp_path / "out" / "checkpoint").read_text()
    assert note.startswith("o.example/log\n3\n")
    verify_checkpoint(
        note, [parse_verifier_key(verifier_key_string("o.example/log", KEY.public_key))]
    )
    # the folder is for that origin now: another origin is refused, one line, exit 2
    _error(_run("tiles", str(db), str(tmp_path / "out")), "log.tiles_conflict")


def test_key_rules_are_those_of_log_head(db: Path, tmp_path: Path) -> None:
    _append(db, 3)
    other = _key_file(tmp_path, "other", OTHER)
    _error(_run("tiles", str(db), str(tmp_path / "o1"), "--key", str(other)), "log.key_mismatch")
    bare = tmp_path / "bare.db"
    TransparencyLog.create(bare, KEY, LOG_ID + "/bare").close()  # no key path recorded
    _append(bare, 2)
    _error(_run("tiles", str(bare), str(tmp_path / "o2")), "log.no_signing_key")
    key_file = tmp_path / "log.key"
    assert _run("tiles", str(bare), str(tmp_path / "o2"), "--key", str(key_file)).exit_code == 0


def test_a_store_behind_the_signed_state_is_refused(db: Path, tmp_path: Path) -> None:
    _append(db, 3)
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    _append(db, 2)
    assert _run("head", str(db), "--checkpoint").exit_code == 0  # the state file says size 5
    _error(_run("tiles", str(copy), str(tmp_path / "out")), "log.state_mismatch")


def test_not_a_log_is_one_line(tmp_path: Path) -> None:
    _error(_run("tiles", str(tmp_path / "none.db"), str(tmp_path / "out")), "store.missing")


# -- golden vectors: vectors/tlog/tiles ----------------------------------------------------------

GOLDEN = VECTORS / "tlog" / "tiles"
GOLDEN_KEY_LABEL = "TEST-ONLY affidavit tlog-tiles vectors: log key"
GOLDEN_LOG_ID = "vectors.affidavit.test/tiles"
GOLDEN_SIZES = (5, 300, 513)


def _golden_entry(i: int) -> bytes:
    return f"affidavit tiles vector entry {i}".encode()


def _generate(work: Path) -> dict[str, bytes]:
    """The vector files: the tile folder after `log tiles` at each size, each checkpoint, the
    vkey and a manifest."""
    key = derive_test_key(GOLDEN_KEY_LABEL)
    key_file = _key_file(work, "vectors", key)
    db = work / "vectors.db"
    tree = work / "tree"
    assert _run("init", str(db), "--key", str(key_file), "--log-id", GOLDEN_LOG_ID).exit_code == 0
    files: dict[str, bytes] = {}
    cases: list[dict[str, Any]] = []
    for size in GOLDEN_SIZES:
        with TransparencyLog.open(db) as log:
            log.append([_golden_entry(i) for i in range(log.size, size)])
        result = _run("tiles", str(db), str(tree))
        assert result.exit_code == 0, result.output
        note = (tree / "checkpoint").read_bytes()
        files[f"checkpoint.{size}"] = note
        with TransparencyLog.open(db) as log:
            root = log.root(size)
        cases.append(
            {
                "id": f"tree-size-{size}",
                "input": {"checkpoint": f"checkpoint.{size}", "tree": "tree/"},
                "expected": {
                    "tree_size": size,
                    "root_hash_hex": root.hex(),
                    "tiles": [ref.path for ref in tiles_for_size(size)],
                },
                "clause": "c2sp.org/tlog-tiles (Merkle Tree, Partial Tiles, Log entries)",
            }
        )
    for path in sorted(tree.rglob("*")):
        if path.is_file() and path.name != "checkpoint":
            files[f"tree/{path.relative_to(tree)}"] = path.read_bytes()
    files["tree/checkpoint"] = (tree / "checkpoint").read_bytes()
    files["vkey"] = (verifier_key_string(GOLDEN_LOG_ID, key.public_key) + "\n").encode()
    cases += [
        {
            "id": "path-1234067",
            "input": {"level": 0, "index": 1234067},
            "expected": tile_path(0, 1234067),
            "clause": "c2sp.org/tlog-tiles: 1234067 is x001/x234/067",
        },
        {
            "id": "path-partial-level-2",
            "input": {"level": 2, "index": 0, "width": 1},
            "expected": tile_path(2, 0, 1),
            "clause": "c2sp.org/tlog-tiles, Partial Tiles",
        },
        {
            "id": "path-non-canonical-x000",
            "input": "tile/0/x000/001",
            "expected": "tlog.tile_path_invalid",
            "clause": "c2sp.org/tlog-tiles: N in zero-padded 3-digit elements",
        },
        {
            "id": "path-leading-zero-width",
            "input": "tile/0/001.p/05",
            "expected": "tlog.tile_path_invalid",
            "clause": "c2sp.org/tlog-tiles: W with no additional leading zeroes",
        },
    ]
    manifest = {
        "description": "A tlog-tiles tree written by `affidavit log tiles` from a deterministic "
        "log (TEST-ONLY key), published at sizes 5, 300 and 513 into one folder: tree/ holds "
        "every tile and entry bundle (partial tiles of the older sizes kept) and the last "
        "checkpoint; checkpoint.<size> is each size's. Generated by "
        "tests/cli/test_log_tiles_cli.py.",
        "vkey": "vkey",
        "vectors": cases,
    }
    files["manifest.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    return files


def test_golden_tile_tree(tmp_path: Path) -> None:
    files = _generate(tmp_path)
    if UPDATE_GOLDENS:
        shutil.rmtree(GOLDEN, ignore_errors=True)
    for name, data in files.items():
        assert_golden(GOLDEN / name, data)
    present = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert present == set(files), "vectors/tlog/tiles has files the generator does not write"
    assert sum(len(d) for d in files.values()) < 300_000


def test_golden_tile_tree_verifies_on_its_own() -> None:
    """The committed vectors, read as a third party would: vkey, checkpoints, tiles."""
    manifest = json.loads((GOLDEN / "manifest.json").read_bytes())
    verifier = parse_verifier_key((GOLDEN / "vkey").read_text().strip())
    tree_dir = GOLDEN / "tree"
    for case in manifest["vectors"]:
        if not case["id"].startswith("tree-size-"):
            continue
        note = (GOLDEN / case["input"]["checkpoint"]).read_bytes()
        checkpoint = verify_checkpoint(note, [verifier]).checkpoint
        assert checkpoint.tree_size == case["expected"]["tree_size"]
        assert checkpoint.root_hash.hex() == case["expected"]["root_hash_hex"]
        tree = TiledTree.for_checkpoint(_fetch(tree_dir), checkpoint)
        size = checkpoint.tree_size
        assert tree.check_entries() == size
        entries = [_golden_entry(i) for i in range(size)]
        leaves = [merkle.leaf_hash(e) for e in entries]
        assert merkle.root_of(leaves) == checkpoint.root_hash
        for index in (0, size // 2, size - 1):
            assert tree.inclusion_proof(index) == merkle.inclusion_proof(leaves, index)
        for ref_path in case["expected"]["tiles"]:
            ref = parse_tile_path(ref_path)
            assert (tree_dir / ref_path).stat().st_size == ref.byte_length
    for case in manifest["vectors"]:
        if case["expected"] == "tlog.tile_path_invalid":
            with raises_code("tlog.tile_path_invalid"):
                parse_tile_path(case["input"])
