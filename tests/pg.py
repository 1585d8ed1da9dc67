"""A real, throwaway PostgreSQL cluster for tests (never a mock).

``PgCluster`` runs ``initdb`` into a temporary folder and starts a server that listens on
127.0.0.1 only, on a free port, with its Unix socket inside that folder (nothing touches
``/var/run``). Authentication is ``trust`` (the server is reachable from this machine only, for
the length of a test session). ``fsync`` and ``synchronous_commit`` are on: tests of the
PostgreSQL store check durability, so the server must behave as in production.

When the tests run as root, the cluster belongs to the ``postgres`` user (PostgreSQL refuses to
run as root): the folder is chowned to it and the binaries run through ``runuser``/``su``.

``stop()`` stops the server and removes the folder; it is also registered with ``atexit``, so a
test run that fails or is interrupted does not leave a server behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from tests.processes import free_port

PG_USER = "postgres"
DEBIAN_ROOT = Path("/usr/lib/postgresql")
BINARIES = ("initdb", "pg_ctl", "postgres")

INITDB_TIMEOUT = 120.0
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections
STOP_TIMEOUT = 30
CONNECT_TIMEOUT = 10
APT_UPDATE_TIMEOUT = 300.0
APT_INSTALL_TIMEOUT = 600.0

# One name per database: lower-case letters, digits and underscores, at most 63 bytes
# (NAMEDATALEN - 1), so it never needs quoting in a URL.
_DB_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# Server settings appended to postgresql.conf. max_connections leaves room for two registry
# instances with their pools plus the tests' own connections.
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "max_connections": "200",
    "shared_buffers": "16MB",
    "huge_pages": "off",
    "logging_collector": "off",
}


class PostgresMissing(RuntimeError):
    """The PostgreSQL server binaries (initdb, pg_ctl, postgres) are not on this machine."""


class PgClusterError(RuntimeError):
    """initdb, pg_ctl or the server failed; the message carries the command's output."""


def _has_binaries(bindir: Path) -> bool:
    return all((bindir / name).is_file() for name in BINARIES)


def _pg_config_bindir() -> Path | None:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
        )
        return Path(done.stdout.strip())
    return None


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.parent.name)) or (0,)


def find_bindir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None.

    Looks at ``pg_config --bindir`` first (libpq-dev alone provides a pg_config whose folder has
    no server, so the folder is checked), then the newest ``/usr/lib/postgresql/*/bin`` (Debian's
    layout, not on PATH), then ``initdb`` on PATH (symlinks resolved).
    """
    candidates: list[Path] = []
    from_config = _pg_config_bindir()
    if from_config is not None:
        candidates.append(from_config)
    if DEBIAN_ROOT.is_dir():
        candidates += sorted(DEBIAN_ROOT.glob("*/bin"), key=_version_key, reverse=True)
    on_path = shutil.which("initdb")
    if on_path is not None:
        candidates.append(Path(on_path).resolve().parent)
    return next((c for c in candidates if _has_binaries(c)), None)


def is_root() -> bool:
    """True when this process runs as root (the cluster then belongs to ``postgres``)."""
    return os.geteuid() == 0


def can_install() -> bool:
    """True when Debian's ``postgresql`` package can be installed here (root, apt-get)."""
    return is_root() and shutil.which("apt-get") is not None


def install_debian_postgresql() -> None:
    """``apt-get install postgresql`` (bounded), then stop the Debian default cluster.

    The package's own cluster (``main``, port 5432) is not used: tests run their own. It is
    stopped and set to ``manual`` start so it does not come back at boot.
    """
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "postgresql"]
    try:
        first = subprocess.run(
            install, env=env, capture_output=True, timeout=APT_INSTALL_TIMEOUT, check=False
        )
        if first.returncode != 0:  # stale or empty package lists: refresh once, then retry
            subprocess.run(
                ["apt-get", "update", "-qq"],
                env=env,
                capture_output=True,
                timeout=APT_UPDATE_TIMEOUT,
                check=True,
            )
            subprocess.run(
                install, env=env, capture_output=True, timeout=APT_INSTALL_TIMEOUT, check=True
            )
    except subprocess.CalledProcessError as exc:
        output = (exc.stderr or b"").decode(errors="replace")[-2000:]
        raise PostgresMissing(f"apt-get install postgresql failed: {output}") from exc
    except subprocess.TimeoutExpired as exc:
        raise PostgresMissing(f"apt-get timed out after {exc.timeout} s") from exc
    stop_debian_clusters()


def stop_debian_clusters() -> None:
    """Stop every cluster ``pg_lsclusters`` lists and set it to manual start (best effort)."""
    if shutil.which("pg_lsclusters") is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        listing = subprocess.run(
            ["pg_lsclusters", "-h"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
        for line in listing.splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            version, name = fields[0], fields[1]
            subprocess.run(
                ["pg_ctlcluster", version, name, "stop"],
                capture_output=True,
                timeout=STOP_TIMEOUT + 10,
                check=False,
            )
            start_conf = Path("/etc/postgresql") / version / name / "start.conf"
            if start_conf.is_file():
                start_conf.write_text("manual\n")


def _reachable_by_others(folder: Path) -> bool:
    """True when every ancestor of ``folder`` can be traversed by another user (o+x)."""
    return all(os.stat(p).st_mode & 0o001 for p in [folder, *folder.parents])


def _temp_parent() -> str:
    """Where to make the cluster folder: the usual temp folder, or /tmp when root's TMPDIR is
    private (the postgres user must be able to reach the folder)."""
    parent = Path(tempfile.gettempdir())
    if is_root() and not _reachable_by_others(parent):
        return "/tmp"  # sticky and world-traversable; the cluster folder itself is 0700
    return str(parent)


class PgCluster:
    """A throwaway PostgreSQL cluster on 127.0.0.1; ``start()`` it, ``stop()`` removes it."""

    def __init__(self, bindir: Path | None = None) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise PostgresMissing("initdb, pg_ctl and postgres were not found")
        self.bindir = found
        self.as_postgres = is_root()
        self.base = Path(tempfile.mkdtemp(prefix="affidavit-pg-", dir=_temp_parent()))
        self.data = self.base / "data"
        self.socket_dir = self.base / "sock"
        self.logfile = self.base / "postgres.log"
        self.port = 0
        self.running = False
        self._removed = False
        self._counter = 0
        atexit.register(self.stop)
        try:
            self._prepare()
        except BaseException:
            self.stop()
            raise

    # -- running the binaries ---------------------------------------------------------------

    def _argv(self, binary: str, args: Sequence[str]) -> list[str]:
        argv = [str(self.bindir / binary), *args]
        if not self.as_postgres:
            return argv
        if shutil.which("runuser") is not None:
            return ["runuser", "-u", PG_USER, "--", *argv]
        return ["su", PG_USER, "-s", "/bin/sh", "-c", shlex.join(argv)]

    def _run(self, binary: str, args: Sequence[str], timeout: float) -> str:
        """Run one PostgreSQL binary (as ``postgres`` when root); its output, or an error."""
        argv = self._argv(binary, args)
        try:
            done = subprocess.run(
                argv,
                cwd=self.base,  # root's working folder may be unreadable to postgres
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PgClusterError(f"{binary} timed out after {timeout} s{self._log_tail()}") from exc
        if done.returncode != 0:
            raise PgClusterError(
                f"{binary} exited {done.returncode}: {done.stdout}{done.stderr}{self._log_tail()}"
            )
        return done.stdout

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\nserver log:\n" + self.logfile.read_text(errors="replace")[-3000:]
        return ""

    # -- life cycle -------------------------------------------------------------------------

    def _prepare(self) -> None:
        self.socket_dir.mkdir()
        if self.as_postgres:
            try:
                user = pwd.getpwnam(PG_USER)
            except KeyError as exc:
                raise PostgresMissing(
                    f"running as root but there is no '{PG_USER}' user to own the cluster"
                ) from exc
            for path in (self.base, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run(
            "initdb",
            [
                "-D",
                str(self.data),
                "-U",
                PG_USER,
                "-A",
                "trust",  # local and 127.0.0.1 connections; nothing else listens
                "-E",
                "UTF8",
                "--locale=C",
            ],
            timeout=INITDB_TIMEOUT,
        )
        settings = {**SETTINGS, "unix_socket_directories": f"'{self.socket_dir}'"}
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# tests/pg.py: a throwaway test cluster\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def start(self, attempts: int = 3) -> PgCluster:
        """Start the server and wait until it accepts connections (``pg_ctl start -w``).

        The first start takes a free port; a restart keeps its port, so URLs handed out stay
        valid. When the port is taken meanwhile, another free port is tried.
        """
        if self.running:
            return self
        for attempt in range(1, attempts + 1):
            if not self.port or attempt > 1:
                self.port = free_port()
            try:
                self._run(
                    "pg_ctl",
                    [
                        "-D",
                        str(self.data),
                        "-l",
                        str(self.logfile),
                        "-o",
                        f"-p {self.port}",
                        "-w",
                        "-t",
                        str(START_TIMEOUT),
                        "start",
                    ],
                    timeout=START_TIMEOUT + 10,
                )
                break
            except PgClusterError:
                self._kill_postmaster()
                if attempt == attempts:
                    raise
        self.running = True
        return self

    def restart(self, mode: str = "fast") -> None:
        """Stop (``fast``; or ``immediate``, which is a crash: no checkpoint, WAL recovery on
        start) and start again on the same port."""
        self.stop_server(mode)
        self.start()

    def _postmaster_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return None

    def _kill_postmaster(self) -> None:
        pid = self._postmaster_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)  # the backends exit when the postmaster dies
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.05)

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server and keep the folder (``start()`` brings it back on the same port)."""
        if not self.data.is_dir() or self._postmaster_pid() is None:
            self.running = False
            return
        try:
            self._run(
                "pg_ctl",
                ["-D", str(self.data), "-m", mode, "-w", "-t", str(STOP_TIMEOUT), "stop"],
                timeout=STOP_TIMEOUT + 10,
            )
        except PgClusterError:
            self._kill_postmaster()
        self.running = False

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m fast``; SIGKILL if that fails) and remove the
        folder. Safe to call twice."""
        if self._removed:
            return
        try:
            self.stop_server()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)
            self._removed = True
            atexit.unregister(self.stop)

    # -- faults ----------------------------------------------------------------------------

    def terminate_backends(self, url: str) -> int:
        """``pg_terminate_backend`` every session connected to the database of ``url`` (but this
        one); how many."""
        with self.connect() as admin:
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database_name(url),),
            ).fetchall()
        return len(rows)

    # -- databases --------------------------------------------------------------------------

    def url(self, dbname: str = "postgres") -> str:
        """``postgresql://postgres@127.0.0.1:PORT/DBNAME`` (trust authentication)."""
        if not self.running:
            raise PgClusterError("the cluster is not running")
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres") -> psycopg.Connection[TupleRow]:
        """An autocommit connection to ``dbname``, with bounded connect and statement times."""
        return psycopg.connect(
            self.url(dbname),
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            options="-c statement_timeout=60000",
        )

    def new_database_name(self, hint: str = "") -> str:
        """A fresh valid database name: ``t<counter>_<hint, sanitised and shortened>``."""
        self._counter += 1
        tail = re.sub(r"[^a-z0-9_]+", "_", hint.lower()).strip("_")[:40]
        return f"t{self._counter}_{tail}" if tail else f"t{self._counter}"

    def create_database(self, name: str) -> str:
        """``CREATE DATABASE name TEMPLATE template0``; the new database's URL."""
        if not _DB_NAME.fullmatch(name):
            raise ValueError(f"not a plain database name: {name!r}")
        with self.connect() as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name))
            )
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """``DROP DATABASE IF EXISTS name WITH (FORCE)``: closes what is still connected."""
        if not _DB_NAME.fullmatch(name):
            raise ValueError(f"not a plain database name: {name!r}")
        with self.connect() as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def database_name(url: str) -> str:
    """The database a ``postgresql://.../NAME`` URL names."""
    return url.rsplit("/", 1)[1]


class LockWatch:
    """One admin connection that asks who holds an advisory lock (the registry's writer lock,
    attest/stores/postgres.py) in the database of ``url``; ``close()`` it."""

    def __init__(self, cluster: PgCluster, url: str) -> None:
        self.admin = cluster.connect()
        self.dbname = database_name(url)

    def close(self) -> None:
        self.admin.close()

    def holders(self, pid: int | None = None) -> list[tuple[str, str]]:
        """(state, query) of each session holding an advisory lock; only registry process
        ``pid``'s (its ``application_name`` is ``affidavit-PID``) when given."""
        query = (
            "SELECT a.state, a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND a.datname = %s"
        )
        args = [self.dbname]
        if pid is not None:
            query += " AND a.application_name = %s"
            args.append(f"affidavit-{pid}")
        rows = self.admin.execute(query, args).fetchall()
        return [(str(state), str(text)) for state, text in rows]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers signal 0; its state in /proc says it is gone.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True
