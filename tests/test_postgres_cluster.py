"""The throwaway PostgreSQL cluster the PostgreSQL store's tests run against (tests/pg.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import POSTGRES_MISSING, ROOT, postgres_bindir

try:
    import psycopg

    from tests import pg
except ImportError:  # psycopg is missing: the [postgres] extra is not installed
    if os.environ.get("AFFIDAVIT_REQUIRE_POSTGRES") == "1":
        raise
    pytest.skip("psycopg is not installed (the [postgres] extra)", allow_module_level=True)

LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp
LOOPBACK_HEX = "0100007F"  # 127.0.0.1, little-endian as /proc/net/tcp prints it


def _listeners(port: int) -> dict[str, list[str]]:
    """Local addresses (hex, as in /proc/net/tcp{,6}) listening on ``port``, per family."""
    found: dict[str, list[str]] = {}
    for family in ("tcp", "tcp6"):
        table = Path("/proc/net") / family
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if fields[3] == LISTEN and int(port_hex, 16) == port:
                found.setdefault(family, []).append(address)
    return found


def _refuses(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(5)
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_pg_url_is_a_fresh_database_on_loopback(pg_cluster: pg.PgCluster, pg_url: str) -> None:
    assert pg_url.startswith(f"postgresql://postgres@127.0.0.1:{pg_cluster.port}/t")
    name = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == (name,)
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)


def test_values_round_trip_including_bytea(pg_url: str) -> None:
    blob = bytes(range(256)) * 3  # every byte value, NUL included
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        conn.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, body BYTEA NOT NULL)")
        conn.execute(
            "INSERT INTO t VALUES (%s, %s, %s), (%s, %s, %s)",
            (1, "café ✓", blob, 2**62, "", b""),
        )
        conn.commit()
        rows = conn.execute("SELECT id, name, body FROM t ORDER BY id").fetchall()
    assert rows == [(1, "café ✓", blob), (2**62, "", b"")]
    assert type(rows[0][2]) is bytes


def test_databases_are_independent(pg_cluster: pg.PgCluster) -> None:
    first = pg_cluster.new_database_name("independent a")
    second = pg_cluster.new_database_name("independent b")
    assert first != second
    urls = [pg_cluster.create_database(first), pg_cluster.create_database(second)]
    try:
        for url, value in zip(urls, ("a", "b"), strict=True):
            with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
                conn.execute("CREATE TABLE shared_name (v TEXT)")
                conn.execute("INSERT INTO shared_name VALUES (%s)", (value,))
        for url, value in zip(urls, ("a", "b"), strict=True):
            with psycopg.connect(url, connect_timeout=10) as conn:
                assert conn.execute("SELECT v FROM shared_name").fetchall() == [(value,)]
    finally:
        pg_cluster.drop_database(first)
        pg_cluster.drop_database(second)
    with pg_cluster.connect() as conn:
        names = {row[0] for row in conn.execute("SELECT datname FROM pg_database")}
    assert first not in names
    assert second not in names


def test_listens_on_127_0_0_1_only(pg_cluster: pg.PgCluster) -> None:
    with pg_cluster.connect() as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        sockets = conn.execute("SHOW unix_socket_directories").fetchone()
    assert sockets == (str(pg_cluster.socket_dir),)
    assert (pg_cluster.socket_dir / f".s.PGSQL.{pg_cluster.port}").exists()
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp to list the listening sockets")
    assert _listeners(pg_cluster.port) == {"tcp": [LOOPBACK_HEX]}


def test_server_is_durable_and_roomy(pg_cluster: pg.PgCluster) -> None:
    with pg_cluster.connect() as conn:
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()
            for name in ("fsync", "synchronous_commit", "full_page_writes", "max_connections")
        }
    assert settings == {
        "fsync": ("on",),
        "synchronous_commit": ("on",),
        "full_page_writes": ("on",),
        "max_connections": ("200",),
    }


def test_create_database_rejects_names_that_need_quoting(pg_cluster: pg.PgCluster) -> None:
    for bad in ("", "Upper", "a-b", "x; DROP DATABASE postgres", "1abc", "a" * 64):
        with pytest.raises(ValueError, match="not a plain database name"):
            pg_cluster.create_database(bad)
    assert pg_cluster.new_database_name("test_x[Param-1]").endswith("_test_x_param_1")


def test_committed_rows_survive_a_crash_and_stop_removes_everything() -> None:
    cluster = pg.PgCluster(postgres_bindir())
    try:
        cluster.start()
        port = cluster.port
        url = cluster.create_database("crash")
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (v BYTEA)")
            conn.execute("INSERT INTO t VALUES (%s)", (b"\x00kept",))
        cluster.restart("immediate")  # SIGQUIT: no shutdown checkpoint, WAL replay on start
        assert cluster.port == port
        assert cluster.url("crash") == url
        with psycopg.connect(url, connect_timeout=10) as conn:
            assert conn.execute("SELECT v FROM t").fetchall() == [(b"\x00kept",)]
        pid = cluster._postmaster_pid()
        assert pid is not None
        assert pg._alive(pid)
    finally:
        cluster.stop()
    assert not cluster.base.exists()
    assert not pg._alive(pid)
    assert _refuses(port)
    cluster.stop()  # a second stop is a no-op
    with pytest.raises(pg.PgClusterError, match="not running"):
        cluster.url()


def test_exit_without_stop_leaves_no_server_behind() -> None:
    """The atexit hook stops a cluster that the test run never stopped."""
    script = (
        "from tests.pg import PgCluster\n"
        "c = PgCluster().start()\n"
        "print(c.base, c._postmaster_pid(), c.port, flush=True)\n"
    )
    postgres_bindir()  # skip (or fail) as the fixtures do when PostgreSQL is absent
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    base, pid, port = done.stdout.split()
    assert Path(base).name.startswith("affidavit-pg-")
    assert not Path(base).exists()
    assert not pg._alive(int(pid))
    assert _refuses(int(port))


def test_missing_postgres_skips_or_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg, "find_bindir", lambda: None)
    monkeypatch.setattr(pg, "can_install", lambda: False)
    monkeypatch.delenv("AFFIDAVIT_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL is not installed"):
        postgres_bindir()
    monkeypatch.setenv("AFFIDAVIT_REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="AFFIDAVIT_REQUIRE_POSTGRES=1") as failed:
        postgres_bindir()
    assert POSTGRES_MISSING in str(failed.value)


def test_find_bindir_skips_folders_without_a_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def fake(folder: Path, *names: str) -> Path:
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text("")
        return folder

    client_only = fake(tmp_path / "client", "pg_config", "psql")  # libpq-dev's pg_config
    debian = tmp_path / "lib"
    fake(debian / "9.6" / "bin", *pg.BINARIES)
    newest = fake(debian / "15" / "bin", *pg.BINARIES)
    fake(debian / "16" / "bin", "psql")  # a client package only
    monkeypatch.setattr(pg, "_pg_config_bindir", lambda: client_only)
    monkeypatch.setattr(pg, "DEBIAN_ROOT", debian)
    assert pg.find_bindir() == newest
    monkeypatch.setattr(pg, "DEBIAN_ROOT", tmp_path / "absent")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert pg.find_bindir() is None
