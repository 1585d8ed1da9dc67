"""Properties of the monitor over real HTTP (issue 21): no single changed byte of any file it reads,
and no mix of two forked trees, ever makes a round pass with a view other than the honest tree;
and for honest logs its roots are the SQLite log's.

The files are served by an HTTP server thread on 127.0.0.1 and read by the registry's
:class:`~affidavit.registry.clients.tiles.TileReader`, as ``affidavit log monitor`` reads them. The
network is the harness's: ``affidavit.verify`` itself still opens no socket (its code is handed
the reader's ``tile`` method as the fetch function), so this module lifts the folder's socket ban
(tests/verify/conftest.py) for itself only.

The reference tree is built here from the spec's formula alone (tlog-tiles, "Merkle Tree": tile
(L, N) holds the hashes of the complete subtrees of tree level 8·L, positions 256·N onwards; RFC
6962 §2.1 for the root), never through :class:`~affidavit.verify.tlog.tiles.TiledTree`.

Bounded: a few seconds per test by default; ``AFFIDAVIT_PROPERTY_SECONDS=S`` (or ``CI=true``: 20 s)
gives each test about S seconds: the number of examples is the budget times the examples a second
measured on a shared 2-core machine.
"""

from __future__ import annotations

import base64
import os
import random
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.tiles import folder_fetch, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients.tiles import TileReader
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT, leaf_hash, node_hash
from affidavit.verify.results import Result
from affidavit.verify.tlog.layout import encode_bundle, parse_bundle, parse_tile_path, tile_path
from affidavit.verify.tlog.monitor import MonitorState, check_round
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import budget


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


pytestmark = pytest.mark.network_local

ORIGIN = "properties.monitor.example/log"
KEY = derive_test_key("monitor property tests")  # TEST-ONLY
VKEY = verifier_key_string(ORIGIN, KEY.public_key)
MAX_SIZE = 70_000
EDGES = (1, 2, 3, 255, 256, 257, 511, 512, 65_535, 65_536, 65_537, MAX_SIZE)


def _budget_seconds() -> float:
    value = os.environ.get("AFFIDAVIT_PROPERTY_SECONDS")
    if value:
        return float(value)
    return float(budget(local=4, ci=10))


BUDGET = _budget_seconds()


def _settings(examples_per_second: float) -> Callable[[Any], Any]:
    return settings(
        max_examples=max(5, int(BUDGET * examples_per_second)),
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
        ],
    )


@pytest.fixture(autouse=True)
def _no_sockets() -> None:
    """Overrides tests/verify/conftest.py: the harness serves over HTTP (module docstring)."""


# -- the reference tree -------------------------------------------------------------------------


class Tree:
    """Entries, and the hash of every complete subtree (``levels[h][i]``: leaves
    ``[i·2^h, (i+1)·2^h)``)."""

    def __init__(self, entries: Sequence[bytes], base: Tree | None = None, same: int = 0) -> None:
        """``base`` shares its first ``same`` entries: those subtrees are copied, not hashed."""
        self.entries = list(entries)
        level = [
            base.levels[0][i] if base is not None and i < same else leaf_hash(e)
            for i, e in enumerate(self.entries)
        ]
        self.levels = [level]
        height = 0
        while len(level) > 1:
            height += 1
            kept = (same >> height) if base is not None else 0
            shared = base.levels[height][:kept] if base is not None else []
            level = shared + [
                node_hash(level[2 * i], level[2 * i + 1]) for i in range(kept, len(level) // 2)
            ]
            self.levels.append(level)

    def root(self, size: int) -> bytes:
        """RFC 6962 §2.1: MTH of the first ``size`` leaves, folded from the largest subtrees."""
        if size == 0:
            return EMPTY_ROOT
        parts, start = [], 0
        for height in reversed(range(size.bit_length())):
            if size >> height & 1:
                parts.append(self.levels[height][start >> height])
                start += 1 << height
        result = parts.pop()
        while parts:
            result = node_hash(parts.pop(), result)
        return result

    def file(self, path: str, size: int) -> bytes | None:
        """The resource at ``path`` of the log published at ``size`` (None: not there)."""
        if path == "checkpoint":
            return note(size, self.root(size))
        try:
            ref = parse_tile_path(path)
        except errors.ProofError:
            return None
        count = size >> (8 * ref.level)
        first = ref.index * 256
        if first + ref.width > count or (ref.partial and first + ref.width != count):
            return None  # beyond the tree, or the partial tile of another size
        if ref.entries:
            return encode_bundle(self.entries[first : first + ref.width])
        return b"".join(self.levels[8 * ref.level][first : first + ref.width])


def note(size: int, root: bytes) -> bytes:
    """A checkpoint signed by the log's key (c2sp tlog-checkpoint, signed-note)."""
    body = checkpoint_body(ORIGIN, size, root)
    key_id = key_id_c2sp(ORIGIN, KEY.public_key.raw)
    line = note_signature_line(ORIGIN, key_id, KEY.sign(body.encode()))
    return format_note(body, [line]).encode()


def _entries(count: int, tag: str = "entry") -> list[bytes]:
    return [f"{tag} {i}".encode() * (1 + i % 3) for i in range(count)]


@cache
def honest() -> Tree:
    return Tree(_entries(MAX_SIZE))


# -- the HTTP server ----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    serve: Callable[[str], bytes | None] = staticmethod(lambda path: None)

    def do_GET(self) -> None:
        data = type(self).serve(self.path.lstrip("/"))
        self.send_response(404 if data is None else 200)
        self.send_header("Content-Length", str(0 if data is None else len(data)))
        self.end_headers()
        self.wfile.write(data or b"")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def monitor_round(
    url: str,
    serve: Callable[[str], bytes | None],
    previous: MonitorState | None,
    *,
    entries: bool,
) -> tuple[Result, MonitorState, list[str]]:
    """One round over HTTP; also the paths it fetched, in order."""
    _Handler.serve = staticmethod(serve)
    fetched: list[str] = []
    with TileReader(url, timeout=10) as reader:

        def fetch(path: str) -> bytes | None:
            fetched.append(path)
            return reader.tile(path)

        report, state = check_round(reader.checkpoint(), VKEY, fetch, previous, entries=entries)
    return report, state, fetched


def trusted_state(size: int) -> MonitorState:
    """A monitor that trusted the honest tree at ``size``."""
    text = note(size, honest().root(size)).decode()
    return MonitorState(ORIGIN, (VKEY,), size, honest().root(size), text)


sizes = st.one_of(st.sampled_from(EDGES), st.integers(1, MAX_SIZE))


# -- any single changed byte --------------------------------------------------------------------


def _expected_code(path: str, tampered: bytes, width: int) -> str:
    """The one error code a round must fail with when ``path`` is served as ``tampered``."""
    if path == "checkpoint":
        try:
            verify_checkpoint(tampered, [parse_verifier_key(VKEY)], origin=ORIGIN)
        except errors.AffidavitError as e:
            return e.code
        raise AssertionError("a changed checkpoint verified")  # pragma: no cover
    if "/entries/" in path:
        try:
            parse_bundle(tampered, width)
        except errors.ProofError as e:
            return e.code  # tlog.bundle_malformed
    return "tlog.tile_mismatch"  # a tile's hash, or an entry: bound to the root


@_settings(examples_per_second=4)
@given(data=st.data(), size=sizes, entries=st.booleans())
def test_one_changed_byte_of_any_file_read_never_passes(
    server: str, data: st.DataObject, size: int, entries: bool
) -> None:
    tree = honest()
    trusted = data.draw(st.one_of(st.none(), st.integers(1, size)), label="trusted size")
    previous = None if trusted is None else trusted_state(trusted)
    report, state, fetched = monitor_round(
        server, lambda p: tree.file(p, size), previous, entries=entries
    )
    assert (report.subject["tree_size"], report.subject["root_hash"]) == (
        size,
        _b64(tree.root(size)),
    )
    assert state.tree_size == size

    path = data.draw(st.sampled_from(fetched), label="file")
    honest_bytes = tree.file(path, size)
    assert honest_bytes
    offset = data.draw(st.integers(0, len(honest_bytes) - 1), label="offset")
    mask = data.draw(st.integers(1, 255), label="xor")
    changed = bytearray(honest_bytes)
    changed[offset] ^= mask
    tampered = bytes(changed)
    width = parse_tile_path(path).width if path != "checkpoint" else 0
    expected = _expected_code(path, tampered, width)

    def serve(wanted: str) -> bytes | None:
        return tampered if wanted == path else tree.file(wanted, size)

    with pytest.raises(errors.AffidavitError) as caught:
        monitor_round(server, serve, previous, entries=entries)
    assert caught.value.code == expected, (path, offset, mask, caught.value)


@_settings(examples_per_second=4)
@given(data=st.data(), size=st.one_of(st.sampled_from(EDGES[4:]), st.integers(256, MAX_SIZE)))
def test_a_full_tile_and_its_bundle_from_another_log_never_pass(
    server: str, data: st.DataObject, size: int
) -> None:
    # Issue 21, hole 2 generalised: one full level-0 tile and its entry bundle replaced, together
    # and consistently, by those of another log.
    tree = honest()
    index = data.draw(st.integers(0, size // 256 - 1), label="tile index")
    others = _entries(256, f"other log, tile {index},")
    replaced = {
        f"tile/0/{_index_path(index)}": b"".join(leaf_hash(e) for e in others),
        f"tile/entries/{_index_path(index)}": encode_bundle(others),
    }
    with pytest.raises(errors.AffidavitError) as caught:
        monitor_round(server, lambda p: replaced.get(p) or tree.file(p, size), None, entries=True)
    assert caught.value.code == "tlog.tile_mismatch"
    assert caught.value.details["path"] == f"tile/0/{_index_path(index)}"


def _index_path(index: int) -> str:
    return tile_path(0, index).removeprefix("tile/0/")


# -- forks: two trees sharing a prefix ----------------------------------------------------------


@_settings(examples_per_second=6)
@given(data=st.data())
def test_a_fork_never_passes_whatever_mix_of_the_two_trees_is_served(
    server: str, data: st.DataObject
) -> None:
    trusted = data.draw(st.one_of(st.sampled_from(EDGES[:-1]), st.integers(1, MAX_SIZE - 1)))
    size = data.draw(st.integers(trusted, MAX_SIZE), label="served size")
    shared = data.draw(st.integers(max(0, trusted - 600), trusted - 1), label="shared prefix")
    entries = data.draw(st.booleans(), label="entries")
    a = honest()
    b = Tree(a.entries[:shared] + _entries(size, "fork")[shared:size], base=a, same=shared)
    previous = trusted_state(trusted)
    # B's own tiles: the old root at the trusted size is not A's
    with pytest.raises(errors.AffidavitError) as caught:
        monitor_round(server, lambda p: b.file(p, size), previous, entries=entries)
    assert caught.value.code == "tlog.fork"
    # B's checkpoint, each other file from A or from B as the attacker likes (same size: the
    # same paths and widths): bound tiles leave nothing to mix. Issue 21, hole 1 generalised:
    # B's partial tiles (B's root) with A's full tiles (A's old root); or any random mix.
    chooser = random.Random(data.draw(st.integers(0, 2**32), label="mix"))
    full_from_a = data.draw(st.booleans(), label="full tiles from A, partial ones from B")
    picks: dict[str, bool] = {}

    def serve(path: str) -> bytes | None:
        if path == "checkpoint":
            return b.file(path, size)
        if full_from_a:
            from_a = not parse_tile_path(path).partial
        else:
            from_a = picks.setdefault(path, chooser.random() < 0.5)
        return (a if from_a else b).file(path, size)

    with pytest.raises(errors.AffidavitError) as caught:
        monitor_round(server, serve, previous, entries=entries)
    assert caught.value.code in {"tlog.fork", "tlog.tile_mismatch"}, caught.value


# -- differential: the real SQLite log ----------------------------------------------------------


@_settings(examples_per_second=1.5)
@given(steps=st.lists(st.one_of(st.sampled_from([1, 255, 256, 257]), st.integers(1, 3000)),
                      min_size=1, max_size=5))  # fmt: skip
def test_the_monitors_roots_are_the_sqlite_logs(server: str, steps: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = TransparencyLog.create(Path(folder) / "log.db", KEY, ORIGIN)
        tiles = Path(folder) / "tiles"
        previous: MonitorState | None = None
        try:
            for step in steps:
                log.append(_entries(log.size + step)[log.size :])
                write_tiles(log, tiles, log.checkpoint())
                report, previous, _ = monitor_round(
                    server, folder_fetch(tiles), previous, entries=True
                )
                assert (report.subject["tree_size"], report.subject["root_hash"]) == (
                    log.size, _b64(log.root())
                )  # fmt: skip
                assert report.subject["root_hash"] == _b64(
                    honest().root(log.size)
                )  # and the reference's
                checked, before = (
                    report.subject["entries_checked"],
                    report.subject["previous_size"],
                )
                assert checked == step or before is None
        finally:
            log.close()
