"""``affidavit log monitor`` over real HTTP on 127.0.0.1: a third party's tree (Trillian Tessera's
test log, served by a static file server) and a real split view (two registry processes sharing
one log key but not one tree). Exit codes: 0 extends, 1 rollback/fork/bad signature, 2 input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem

from tests.processes import AFFIDAVIT, RegistryProcess, api_key
from tests.registry.helpers import contract
from tests.schemas import assert_output_schema

pytestmark = pytest.mark.network_local

TESSERA_VKEY = "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx"


def _monitor(url: str, vkey: str, state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AFFIDAVIT, "log", "monitor", url, "--vkey", vkey, "--state", str(state), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class _TesseraHandler(SimpleHTTPRequestHandler):
    """Serves the Tessera folder; ``checkpoint`` is ``checkpoint.<size>`` of the current size."""

    size = 15

    def translate_path(self, path: str) -> str:
        if path.split("?", maxsplit=1)[0] == "/checkpoint":
            path = f"/checkpoint.{type(self).size}"
        return super().translate_path(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def tessera_server(peer_vectors: Path) -> Iterator[tuple[str, type[_TesseraHandler]]]:
    folder = peer_vectors / "tlog-tessera"
    if not folder.is_dir():
        pytest.skip(f"the Tessera test log is not at {folder}")
    handler = type("Handler", (_TesseraHandler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", handler
    finally:
        server.shutdown()
        server.server_close()


def test_monitor_follows_tessera_and_catches_its_rollback(
    tessera_server: tuple[str, type[_TesseraHandler]], tmp_path: Path
) -> None:
    url, handler = tessera_server
    state = tmp_path / "state.json"
    seen = []
    for size in (3, 8, 8, 15):
        handler.size = size
        done = _monitor(url, TESSERA_VKEY, state, "--entries", "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert_output_schema("log monitor", report)
        seen.append((report["previous_size"], report["tree_size"], report["entries_checked"]))
    assert seen == [(None, 3, 3), (3, 8, 5), (8, 8, 0), (8, 15, 7)]
    trusted = state.read_bytes()

    handler.size = 9  # the log now shows an older tree: a rollback
    done = _monitor(url, TESSERA_VKEY, state)
    assert done.returncode == 1
    assert done.stderr.startswith("error: tlog.rollback: ")
    assert state.read_bytes() == trusted  # the evidence is kept, the state untouched

    other = "example.com/log/testdata+00000000+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx"
    done = _monitor(url, other, state)
    assert done.returncode == 2
    assert done.stderr.startswith("error: key.vkey_malformed: ")


def test_monitor_refuses_bad_input_with_exit_2(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("{not json")
    done = _monitor("http://127.0.0.1:9/", TESSERA_VKEY, state)
    assert (done.returncode, done.stderr.split(":")[1].strip()) == (2, "json.syntax")
    done = _monitor("ftp://example/", TESSERA_VKEY, tmp_path / "new.json")
    assert (done.returncode, done.stderr.split(":")[1].strip()) == (2, "usage.invalid")
    # Nothing listens on port 9: the log cannot be reached, no state is written. A tile server
    # is not a registry: the neutral transport code (issue 22), exit 2 as before.
    done = _monitor("http://127.0.0.1:9/", TESSERA_VKEY, tmp_path / "new.json")
    assert (done.returncode, done.stderr.split(":")[1].strip()) == (2, "net.unavailable")
    assert not (tmp_path / "new.json").exists()


def _publish(server: RegistryProcess, adapter_id: str) -> None:
    response = httpx.post(
        server.url + "/protocol/adapter-contracts",
        json=contract(adapter_id),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=10,
    )
    assert response.status_code in (200, 201), response.text


def test_split_view_between_two_registries_sharing_aapi_key(tmp_path: Path) -> None:
    honest, evil = RegistryProcess(tmp_path / "a"), RegistryProcess(tmp_path / "b")
    honest.data_dir.mkdir()
    honest.token = api_key(honest.data_dir, "publish")
    honest.start()
    try:
        # The second registry gets the first one's log key: one origin, one key, two trees.
        (evil.data_dir / "keys").mkdir(parents=True)
        for key_file in (honest.data_dir / "keys").glob("*.key"):
            shutil.copy2(key_file, evil.data_dir / "keys" / key_file.name)
        evil.token = api_key(evil.data_dir, "publish")
        evil.start()
        try:
            _publish(honest, "acme.honest.v0")
            _publish(evil, "acme.other.v0")
            _publish(evil, "acme.more.v0")
            vkey = subprocess.run(
                [AFFIDAVIT, "log", "vkey", str(honest.data_dir / "registry.db")],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            state = tmp_path / "monitor.json"
            done = _monitor(honest.url + "/tlog/", vkey, state)
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith("ok: ")
            both = [httpx.get(s.url + "/tlog/checkpoint").text for s in (honest, evil)]
            assert all(note.endswith("\n") for note in both)  # both sign under the same key
            done = _monitor(evil.url + "/tlog/", vkey, state)
            assert done.returncode == 1, done.stderr
            assert done.stderr.startswith("error: tlog.fork: ")
        finally:
            evil.stop()
    finally:
        honest.stop()


def _affidavit(*args: str) -> str:
    done = subprocess.run([AFFIDAVIT, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def folder_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A static HTTP server of ``tmp_path/tiles`` (what any web host of `log tiles` does)."""
    folder = tmp_path / "tiles"
    folder.mkdir()
    quiet = {"log_message": _TesseraHandler.log_message}
    handler = type("Handler", (SimpleHTTPRequestHandler,), quiet)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", folder
    finally:
        server.shutdown()
        server.server_close()


def test_monitor_follows_a_rotation_the_old_key_signed(
    folder_server: tuple[str, Path], tmp_path: Path
) -> None:
    # Issue 21, hole 3: after `log rotate-key` the state (bound to the old vkey) was refused with
    # the new vkey (exit 2), and the new key's checkpoint with the old one (exit 1).
    url, folder = folder_server
    db, old_key, new_key = tmp_path / "log.db", tmp_path / "old.key", tmp_path / "new.key"
    for path, seed in ((old_key, "cli monitor old"), (new_key, "cli monitor new")):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(private_key_pem(derive_test_key(seed)))  # TEST-ONLY keys
    _affidavit("log", "init", str(db), "--key", str(old_key), "--log-id", "monitor.example/log")
    (tmp_path / "entry").write_text("first")
    _affidavit("log", "append", str(db), str(tmp_path / "entry"))
    _affidavit("log", "tiles", str(db), str(folder))
    old_vkey = _affidavit("log", "vkey", str(db)).strip()
    states = [tmp_path / f"state{i}.json" for i in range(3)]
    for state in states:
        assert _monitor(url, old_vkey, state).returncode == 0
    time.sleep(1.1)  # a rotation is after every recorded head (whole seconds)
    _affidavit("log", "rotate-key", str(db), "--new-key", str(new_key))
    _affidavit("log", "append", str(db), str(tmp_path / "entry"))
    _affidavit("log", "tiles", str(db), str(folder))
    new_vkey = _affidavit("log", "vkey", str(db)).strip()
    assert new_vkey != old_vkey
    assert (folder / "key-rotations").read_text().count("\n") == 1

    done = _monitor(url, old_vkey, states[0], "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert_output_schema("log monitor", report)
    assert (report["previous_size"], report["tree_size"], report["rotated_to"]) == (
        1,
        2,
        [new_vkey],
    )
    assert json.loads(states[0].read_text())["vkeys"] == [old_vkey, new_vkey]
    done = _monitor(url, new_vkey, states[1])  # the operator already switched to the new vkey
    assert done.returncode == 0, done.stderr
    assert "followed the key rotation(s) the trusted key signed to" in done.stdout
    assert _monitor(url, new_vkey, states[0]).returncode == 0  # and later rounds, either key
    assert _monitor(url, old_vkey, states[0]).returncode == 0

    # A rotation the old key did not sign: exit 1, its own code, the state left as it was.
    statement = json.loads((folder / "key-rotations").read_text())
    statement["signature"] = statement["new_key_signature"]
    (folder / "key-rotations").write_text(json.dumps(statement, separators=(",", ":")) + "\n")
    before = states[2].read_bytes()
    done = _monitor(url, new_vkey, states[2])
    assert done.returncode == 1
    assert done.stderr.startswith("error: tlog.rotation_unproven: ")
    assert states[2].read_bytes() == before
