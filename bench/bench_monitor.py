"""Monitor catch-up over HTTP: a monitor that trusted a 1,000-leaf tree catches up to 1,000,000.

Two rounds against the same tile folder, served over plain HTTP on 127.0.0.1 by the standard
library's file server (what any static host does):

- **consistency only** (``log monitor``): the new checkpoint's tiles hash to its root, and give
  the trusted root at the trusted size; the floor is the tiles those two roots need;
- **every entry** (``log monitor --entries``): also each new entry, hashed to its level-0 tile; the
  floor is the level-0 tiles and entry bundles covering the new leaves (plus the upper tiles the
  roots need), which no monitor that checks every entry can avoid reading.

In both, every full tile read is bound to the checkpoint's root through the tile above it
(tlog-tiles, "Merkle Tree"; issue 21), so the floor counts those tiles too: a client that binds
every byte it uses cannot read less.

"bytes read / floor" is the ratio the monitor must keep near 1.0: it reads no tile twice and no
tile it does not need. The 1M-leaf log and its tiles are built once into bench-out/ and reused.

Usage: python bench/bench_monitor.py [--quick]   (--quick: 100,000 leaves)
"""

from __future__ import annotations

import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import table
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.tiles import folder_fetch, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients.tiles import TileReader
from affidavit.verify.crypto.checkpoint import (
    parse_checkpoint_body,
    parse_note,
    verifier_key_string,
)
from affidavit.verify.tlog.layout import TILE_WIDTH, bundle_path, tile_path
from affidavit.verify.tlog.monitor import MonitorState, check_round
from affidavit.verify.tlog.tiles import TiledTree

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out"
KEY = derive_test_key("affidavit bench monitor key")  # TEST-ONLY
ORIGIN = "bench.affidavit.example/monitor"
TRUSTED = 1000


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def build(size: int) -> tuple[Path, bytes]:
    """A log of ``size`` ~60-byte entries and its tile folder (cached in bench-out/)."""
    folder = OUT / f"monitor-{size}"
    db, tiles = folder / "log.db", folder / "tiles"
    if (tiles / "checkpoint").exists():
        return tiles, (tiles / "checkpoint").read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    log = TransparencyLog.create(db, KEY, ORIGIN)
    for start in range(0, size, 10_000):
        log.append(
            [
                f'{{"n":{i},"note":"entry {i:08d}"}}'.encode()
                for i in range(start, min(size, start + 10_000))
            ]
        )
    write_tiles(log, tiles, log.checkpoint())
    log.close()
    return tiles, (tiles / "checkpoint").read_bytes()


def trusted_state(tiles: Path, note: bytes) -> MonitorState:
    """The state of a monitor that trusted the first 1,000 leaves (their root, from the tiles)."""
    checkpoint = parse_checkpoint_body(parse_note(note.decode()).text)
    root = TiledTree.for_checkpoint(folder_fetch(tiles), checkpoint).root(TRUSTED)
    return MonitorState(ORIGIN, (verifier_key_string(ORIGIN, KEY.public_key),), TRUSTED, root, "")


def _root_tiles(prefix: int, size: int) -> set[str]:
    """The tiles (of a tree of ``size``) holding the complete subtrees the root of the first
    ``prefix`` leaves folds (RFC 9162 §2.1.1): a subtree of height h is one hash, or a run of
    hashes within one tile, at tile level h // 8. Worked out here, not by the client measured."""
    paths, start = set(), 0
    while start < prefix:
        height = (prefix - start).bit_length() - 1  # the largest complete subtree that fits
        level = height // 8
        first = start >> (8 * level)  # its first hash at tile level `level`
        index = first // TILE_WIDTH
        hashes_at_level = size >> (8 * level)
        width = min(TILE_WIDTH, hashes_at_level - index * TILE_WIDTH)
        paths.add(tile_path(level, index, width))
        start += 1 << height
    return paths


def _binding_tiles(path: str, size: int) -> set[str]:
    """``path`` and the tiles above it that bind it to the root of ``size``: a full tile (L, N)
    is hash N of tile level L + 1 (tlog-tiles, "Merkle Tree"), up to a partial tile, which the
    root folds. Worked out here, not by the client measured."""
    paths = {path}
    parts = path.split("/")
    level, index = int(parts[1]), int("".join(parts[2:]).split(".")[0].replace("x", ""))
    while not path.split("/")[-2].endswith(".p"):  # a full tile: bound by the tile above
        level, index = level + 1, index // TILE_WIDTH
        hashes_at_level = size >> (8 * level)
        width = min(TILE_WIDTH, hashes_at_level - index * TILE_WIDTH)
        path = tile_path(level, index, width)
        paths.add(path)
    return paths


def floor_bytes(tiles: Path, size: int, *, entries: bool) -> int:
    """Bytes of the tiles a round cannot avoid (module docstring), read from the folder: those
    the two roots fold, every one bound up to the root, and with ``entries`` the level-0 tiles
    and bundles of the new leaves."""
    needed = _root_tiles(size, size) | _root_tiles(TRUSTED, size)
    if entries:
        for index in range(TRUSTED // TILE_WIDTH, -(-size // TILE_WIDTH)):
            width = min(TILE_WIDTH, size - index * TILE_WIDTH)
            needed.add(tile_path(0, index, width))
            needed.add(bundle_path(index, width))
    bound = set().union(*(_binding_tiles(p, size) for p in needed if "/entries/" not in p))
    return sum((tiles / path).stat().st_size for path in needed | bound)


def main() -> None:
    size = 100_000 if "--quick" in sys.argv else 1_000_000
    started = time.perf_counter()
    tiles, note = build(size)
    print(f"log of {size:,} leaves and its tiles ready in {time.perf_counter() - started:.1f} s")
    state = trusted_state(tiles, note)
    vkey = state.vkey
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(tiles)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    rows = []
    try:
        for entries in (False, True):
            with TileReader(url) as reader:
                start = time.perf_counter()
                report, _ = check_round(
                    reader.checkpoint(), vkey, reader.tile, state, entries=entries
                )
                elapsed = time.perf_counter() - start
            floor = floor_bytes(tiles, size, entries=entries)
            rows.append(
                [
                    "every entry" if entries else "consistency only",
                    f"{elapsed:.2f} s",
                    report.subject["tiles_read"],
                    f"{report.subject['bytes_read']:,}",
                    f"{floor:,}",
                    f"{report.subject['bytes_read'] / floor:.3f}",
                    f"{(size - TRUSTED) / elapsed:,.0f}" if entries else "-",
                ]
            )
    finally:
        server.shutdown()
        server.server_close()
    headers = [
        "catch-up 1,000 -> " + f"{size:,}",
        "time",
        "tiles",
        "bytes read",
        "floor bytes",
        "read / floor",
        "entries/s",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
