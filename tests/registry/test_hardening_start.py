"""Refused starts (docs/adr/0005): a lost, emptied, forked or damaged database is never served
and never re-initialised; every refusal is one line ``error: <code>: <message>`` and exit 2; and
everything the registry creates is private (0700 folders, 0600 files)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from affidavit.registry.app import create_app
from affidavit.registry.settings import Settings

from tests.processes import free_port
from tests.registry.conftest import Clock, make_key
from tests.registry.helpers import contract, fact

AFFIDAVIT = str(Path(sys.executable).parent / "affidavit")


def _serve(settings: Settings, port: int | None = None) -> subprocess.CompletedProcess[str]:
    """``registry serve``; a refused start returns before serving (bounded by the timeout)."""
    env = {**os.environ, "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": str(settings.contracts_dir)}
    chosen = str(port if port is not None else free_port())
    return subprocess.run(
        [AFFIDAVIT, "registry", "serve", "--port", chosen, "--data-dir", str(settings.data_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _refused(settings: Settings, code: str, port: int | None = None) -> str:
    result = _serve(settings, port)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {code}: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _populate(settings: Settings, clock: Clock, contracts: int = 2) -> None:
    """First start with the key generated in the data folder; publish, store a fact, sign."""
    with TestClient(create_app(settings, clock=clock)) as client:
        token = make_key(settings.data_dir, "publish", "facts:write")
        auth = {"Authorization": f"Bearer {token}"}
        for i in range(contracts):
            body = json.dumps(contract(f"acme.start_{i}.v0"))
            assert (
                client.post("/protocol/adapter-contracts", content=body, headers=auth).status_code
                == 201
            )
        assert (
            client.put("/v1/facts", content=json.dumps(fact("urn:x:a")), headers=auth).status_code
            == 201
        )
        assert client.get("/protocol/merkle/latest").json()["tree_size"] == contracts


def _flip_node(db: Path, level: int, index: int) -> None:
    with sqlite3.connect(db) as conn:
        (value,) = conn.execute(
            "SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index)
        ).fetchone()
        conn.execute(
            "UPDATE log_nodes SET hash = ? WHERE level = ? AND idx = ?",
            (bytes([value[0] ^ 1]) + bytes(value[1:]), level, index),
        )


@pytest.mark.parametrize("how", ["truncated", "deleted"])
def test_lost_database_is_refused_not_reinitialised(
    settings: Settings, clock: Clock, how: str
) -> None:
    """Reproduction: with registry.db emptied or deleted and the key folder intact, the registry
    started healthy with a new empty log under the same key and log id (a fork)."""
    _populate(settings, clock)
    db = settings.database_path
    if how == "truncated":
        db.write_bytes(b"")
    else:
        db.unlink()
    line = _refused(settings, "log.state_mismatch")
    assert "registry.db" in line
    keys = subprocess.run(
        [
            AFFIDAVIT,
            "registry",
            "keys",
            "create",
            "--scope",
            "facts:write",
            "--data-dir",
            str(settings.data_dir),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert keys.returncode == 2
    assert keys.stderr.startswith("error: log.state_mismatch: ")
    if how == "truncated":
        assert db.stat().st_size == 0  # never initialised
    else:
        assert not db.exists()


def test_forked_database_is_refused(settings: Settings, clock: Clock, tmp_path: Path) -> None:
    """A different history under the same key and log id (another registry's database) is
    refused: it does not extend the head the key signed last."""
    _populate(settings, clock, contracts=2)
    other = Settings(data_dir=tmp_path / "other", contracts_dir=settings.contracts_dir)
    other.key_dir.mkdir(parents=True)
    for name in os.listdir(settings.key_dir):  # the same key, a separate log of its own
        if name.endswith((".key", ".pub", ".json")) and "logstate" not in name:
            target = other.key_dir / name
            target.write_bytes((settings.key_dir / name).read_bytes())
            target.chmod(0o600)
    with TestClient(create_app(other, clock=clock)) as client:
        token = make_key(other.data_dir, "publish")
        body = json.dumps(contract("acme.forked.v0"))
        auth = {"Authorization": f"Bearer {token}"}
        assert (
            client.post("/protocol/adapter-contracts", content=body, headers=auth).status_code
            == 201
        )
    for suffix in ("", "-wal", "-shm"):
        Path(f"{settings.database_path}{suffix}").unlink(missing_ok=True)
    settings.database_path.write_bytes(other.database_path.read_bytes())
    _refused(settings, "log.state_mismatch")


def test_flipped_node_on_the_root_path_is_refused_at_start(
    settings: Settings, clock: Clock
) -> None:
    """Reproduction: a flipped interior node, restart, and the server signed a head whose root
    contradicts its own head of the same size."""
    _populate(settings, clock, contracts=3)
    _flip_node(settings.database_path, 1, 0)  # root of size 3 = H((1,0), leaf 2)
    _refused(settings, "log.state_mismatch")


def test_flipped_node_off_the_root_path_is_refused_at_start(
    settings: Settings, clock: Clock
) -> None:
    _populate(settings, clock, contracts=4)
    _flip_node(settings.database_path, 1, 1)  # under the stored (2, 0): only the audit sees it
    line = _refused(settings, "log.unhealthy")
    assert "(1, 1)" in line


def test_damaged_page_is_refused_at_start(settings: Settings, clock: Clock) -> None:
    _populate(settings, clock)
    db = settings.database_path
    with sqlite3.connect(db) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'registry_contracts'"
        ).fetchone()
    with db.open("r+b") as handle:  # garbage over the b-tree page header of one table
        handle.seek((root - 1) * page_size)
        handle.write(b"\xee" * 64)
    _refused(settings, "store.corrupt")


def test_world_readable_key_and_bad_data_dir_are_one_line(
    settings: Settings, clock: Clock, tmp_path: Path
) -> None:
    """Reproduction: these starts printed a traceback and exited 3 (3 means policy refusal)."""
    _populate(settings, clock, contracts=1)
    key = settings.key_dir / f"{settings.key_id}.key"
    key.chmod(0o644)
    _refused(settings, "key.insecure_permissions")
    key.chmod(0o600)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    _refused(
        Settings(data_dir=blocked, contracts_dir=settings.contracts_dir),
        "registry.data_dir_invalid",
    )
    settings.database_path.write_bytes(b"this is not an sqlite database at all" * 200)
    result = _serve(settings)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


def test_created_files_are_private(settings: Settings, clock: Clock) -> None:
    """Reproduction: registry.db and its WAL/SHM were created 0644 in a 0755 folder."""
    with TestClient(create_app(settings, clock=clock)) as client:
        assert client.get("/protocol/merkle/latest").status_code == 200
        modes = {
            p.name: p.stat().st_mode & 0o777
            for p in (settings.data_dir, settings.key_dir, *settings.data_dir.glob("registry.db*"))
        }
        state_files = list(settings.key_dir.glob("*.logstate-*.json"))
    assert modes.pop(settings.data_dir.name) == 0o700
    assert modes.pop(settings.key_dir.name) == 0o700
    assert {"registry.db", "registry.db-wal", "registry.db-shm"} <= set(modes)
    assert set(modes.values()) == {0o600}
    assert [p.stat().st_mode & 0o777 for p in state_files] == [0o600]


def test_existing_world_readable_database_is_tightened(settings: Settings, clock: Clock) -> None:
    _populate(settings, clock, contracts=1)
    settings.database_path.chmod(0o644)
    with TestClient(create_app(settings, clock=clock)) as client:
        assert client.get("/v1/health").status_code == 200
    assert settings.database_path.stat().st_mode & 0o777 == 0o600


def test_port_in_use_is_one_line(settings: Settings) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        _refused(settings, "net.bind_failed", port=taken.getsockname()[1])
