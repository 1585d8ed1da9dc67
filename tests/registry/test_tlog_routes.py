"""The registry's log as C2SP tlog-tiles under /tlog/ (registry/routes/tlog.py): content types and
cache headers, the same bytes `affidavit log tiles` writes, 404 beyond the tree, 400 for a path
that is not a tile path, and a tile client reading the tree over HTTP."""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.tiles import rotations_bytes, tile_bytes, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.tlog.layout import bundles_for_size, tiles_for_size
from affidavit.verify.tlog.tiles import TiledTree

from tests.registry.conftest import Clock, registry_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.fixture
def app_client(settings: Settings, clock: Clock) -> Iterator[TestClient]:
    app = create_app(settings, clock=clock, signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def log(app_client: TestClient, settings: Settings) -> Iterator[TransparencyLog]:
    """A second handle on the registry's log (the app started and created it)."""
    opened = TransparencyLog.open(settings.database_path)
    yield opened
    opened.close()


def _verified(note: bytes, settings: Settings) -> tuple[int, bytes]:
    vkey = verifier_key_string(settings.log_id, registry_key().public_key)
    checkpoint = verify_checkpoint(note, [parse_verifier_key(vkey)]).checkpoint
    return checkpoint.tree_size, checkpoint.root_hash


def _fetch(client: TestClient) -> object:
    def fetch(path: str) -> bytes | None:
        response = client.get(f"/tlog/{path}")
        if response.status_code == 404:
            return None
        assert response.status_code == 200, response.text
        data: bytes = response.content
        return data

    return fetch


def test_checkpoint_route(app_client: TestClient, log: TransparencyLog, settings: Settings) -> None:
    log.append([b"entry %d" % i for i in range(300)])
    response = app_client.get("/tlog/checkpoint")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=5"
    size, root = _verified(response.content, settings)
    assert (size, root) == (log.size, log.root())
    heads = len(log.heads())
    assert app_client.get("/tlog/checkpoint").content == response.content
    assert len(log.heads()) == heads  # the recorded checkpoint is served, nothing new signed
    # cosignatures added to the recorded checkpoint are served with it
    cosigned = log.add_cosignatures(
        response.text, ["\u2014 witness.example AAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"]
    )
    assert app_client.get("/tlog/checkpoint").text == cosigned
    log.append([b"one more"])
    grown = app_client.get("/tlog/checkpoint")
    assert _verified(grown.content, settings) == (log.size, log.root())


def test_tiles_are_the_bytes_log_tiles_writes(
    app_client: TestClient, log: TransparencyLog, settings: Settings, tmp_path: Path
) -> None:
    log.append([b"entry %d" % i for i in range(600)])
    note = app_client.get("/tlog/checkpoint").text
    size, root = _verified(note.encode(), settings)
    report = write_tiles(log, tmp_path / "out", note)
    assert report.bundles_skipped == 0
    refs = [*tiles_for_size(size), *bundles_for_size(size)]
    for ref in refs:
        response = app_client.get(f"/tlog/{ref.path}", headers={"Accept-Encoding": "identity"})
        assert response.status_code == 200, ref.path
        assert response.headers["content-type"] == "application/octet-stream"
        assert response.headers["cache-control"] == IMMUTABLE
        assert "content-encoding" not in response.headers
        assert (
            response.content == (tmp_path / "out" / ref.path).read_bytes() == tile_bytes(log, ref)
        )
    tree = TiledTree(_fetch(app_client), size, root)  # type: ignore[arg-type]
    assert tree.check_entries() == size
    for index in (0, 255, 256, size - 1):
        proof = tree.inclusion_proof(index)
        assert proof == list(log.inclusion_proof(index, size).path)
        merkle.verify_inclusion(tree.leaf_hash(index), index, size, proof, root)


def test_entry_bundles_are_gzipped_when_accepted(
    app_client: TestClient, log: TransparencyLog
) -> None:
    log.append([b"entry %d" % i for i in range(300)])
    bundle = tile_bytes(log, next(iter(bundles_for_size(log.size))))
    with app_client.stream(
        "GET", "/tlog/tile/entries/000", headers={"Accept-Encoding": "gzip, identity"}
    ) as response:
        raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
        assert response.headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(raw) == bundle
    for header in ("identity", "gzip;q=0", "br"):
        plain = app_client.get("/tlog/tile/entries/000", headers={"Accept-Encoding": header})
        assert "content-encoding" not in plain.headers, header
        assert plain.content == bundle


def test_partial_tiles_of_older_sizes_are_served(
    app_client: TestClient, log: TransparencyLog
) -> None:
    log.append([b"entry %d" % i for i in range(600)])
    for path in ("tile/0/001.p/1", "tile/0/002.p/3", "tile/1/000.p/1", "tile/entries/002.p/7"):
        assert app_client.get(f"/tlog/{path}").status_code == 200, path


def test_beyond_the_tree_is_404(app_client: TestClient, log: TransparencyLog) -> None:
    log.append([b"entry %d" % i for i in range(300)])
    size = log.size
    last = size // 256
    for path in (
        f"tile/0/{last:03d}",  # not full yet
        f"tile/0/{last:03d}.p/{size % 256 + 1}",
        f"tile/0/{last + 1:03d}.p/1",
        "tile/1/000",
        f"tile/1/000.p/{size // 256 + 1}",
        "tile/2/000.p/1",
        "tile/63/x001/000",
        f"tile/entries/{last + 1:03d}",
    ):
        response = app_client.get(f"/tlog/{path}")
        assert response.status_code == 404, path
        assert response.json()["code"] == "registry.not_found"
    log.append_leaf_hashes([merkle.leaf_hash(b"by hash")])
    no_data = app_client.get(f"/tlog/tile/entries/{last:03d}.p/{log.size % 256}")
    assert (no_data.status_code, no_data.json()["code"]) == (404, "registry.not_found")


@pytest.mark.parametrize(
    "path",
    [
        "tile/0/1",
        "tile/00/000",
        "tile/0/x000/001",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/07",
        "tile/64/000",
        "tile/data/000",
        "tile/entries/",
        "tile/0/000/",
    ],
)
def test_a_path_that_is_not_a_tile_path_is_400(app_client: TestClient, path: str) -> None:
    response = app_client.get(f"/tlog/{path}")
    assert response.status_code == 400, path
    assert response.json()["code"] == "tlog.tile_path_invalid"
    assert app_client.post("/tlog/checkpoint").status_code == 405


def test_key_rotations_route(
    app_client: TestClient, log: TransparencyLog, settings: Settings, tmp_path: Path
) -> None:
    assert app_client.get("/tlog/key-rotations").status_code == 404  # never rotated
    log.append([b"entry"])
    app_client.get("/tlog/checkpoint")
    log.set_key(registry_key())
    log.rotate_key(derive_test_key("tlog routes new key", key_id="registry-2"))  # TEST-ONLY
    response = app_client.get("/tlog/key-rotations")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=5"
    assert response.content == rotations_bytes(log)
    assert response.text == log.key_history()[1].statement + "\n"
    write_tiles(log, tmp_path / "out", log.checkpoint())  # `log tiles` writes the same bytes
    assert (tmp_path / "out" / "key-rotations").read_bytes() == response.content
