"""The servers as a user installs them (issue 34): the benchmarks that start ``affidavit registry
serve`` or ``witness serve`` run them from a virtualenv made with the install command of
docs/start.md, ``pip install '<checkout>[registry]'`` (not editable), in ``build/bench-venv``,
and a registry on PostgreSQL from one made with docs/postgresql.md's, ``pip install
'<checkout>[postgres]'``, in ``build/bench-venv-postgres``; the load generator stays in the dev
virtualenv that runs the benchmark.

The virtualenv is made once and reused while it is current: made again when pyproject.toml or
the interpreter changed (the dependencies may differ), Affidavit alone reinstalled when only the
sources changed. pip builds from a copy of the sources (pyproject.toml, README.md, LICENSE and
the package folders, as they are in the working tree), so a stale ``build/lib`` in the checkout
never reaches the wheel.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "build" / "bench-venv"
PACKAGES = ("verify", "attest", "cli", "registry", "witness", "specs")
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE")
PIP_LOCK = "/tmp/affidavit-pip.lock"  # the Makefile's: pip runs one at a time on this machine
STAMP = "affidavit-bench.json"
STACK = ("uvicorn", "uvloop", "httptools", "h11", "starlette", "psycopg")
DEV = Path(sys.executable).parent / "affidavit"  # the dev virtualenv's (editable) command


@dataclass(frozen=True)
class Install:
    """A virtualenv holding Affidavit as installed by ``pip install '<checkout>[extra]'``."""

    venv: Path
    extra: str
    versions: dict[str, str]  # the server stack's distributions installed there

    @property
    def affidavit(self) -> str:
        return str(self.venv / "bin" / "affidavit")

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def stack(self) -> str:
        """The server stack, for a benchmark's header: ``uvicorn 0.55.0, uvloop 0.23.0, ...``."""
        return ", ".join(f"{name} {v}" for name, v in self.versions.items()) or "?"

    def header(self) -> str:
        """Where the servers come from, for a benchmark's header."""
        return f"{self.venv} (pip install '<checkout>[{self.extra}]', not editable): {self.stack()}"


def baseline_tree(
    revision: str, folder: Path, *, also: tuple[str, ...] = (), repository: Path = ROOT
) -> str:
    """``revision``'s packages, and the folders ``also`` names, by ``git archive`` into
    ``folder/tree``; returns a PYTHONPATH that imports ``affidavit`` from that tree: a folder whose
    ``affidavit/<package>`` links point into it (the project has no ``affidavit/`` folder of its
    own, docs/adr/0001). Raises ``subprocess.CalledProcessError`` when git cannot archive it."""
    tree = folder / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(repository), "archive", revision, *PACKAGES, *also],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shim = folder / "shim" / "affidavit"
    shim.mkdir(parents=True)
    for package in PACKAGES:
        (shim / package).symlink_to(tree / package)
    return str(shim.parent)


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _sources() -> list[Path]:
    files = [ROOT / name for name in PROJECT_FILES]
    for package in PACKAGES:
        files += (
            p
            for p in (ROOT / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        )
    return sorted(files)


def _stamp(extra: str) -> dict[str, str]:
    return {
        "extra": extra,
        "interpreter": f"{sys.base_prefix} {sys.version}",
        "dependencies": _digest([ROOT / "pyproject.toml"]),
        "sources": _digest(_sources()),
    }


def _pip(venv: Path, *args: str) -> None:
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *args]
    if shutil.which("flock"):
        command = ["flock", PIP_LOCK, *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:  # pip's notices only when it failed
        raise SystemExit(f"bench: {' '.join(command)} failed:\n{done.stderr[-4000:]}")


def _copy_sources(folder: Path) -> Path:
    tree = folder / "affidavit"
    tree.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, tree / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return tree


def user_install(extra: str = "registry", venv: Path | None = None) -> Install:
    """``venv`` (default: ``build/bench-venv``, ``build/bench-venv-<extra>`` for another extra)
    holding this checkout as ``pip install '<checkout>[extra]'`` installs it, made or refreshed
    when it is not current (module docstring)."""
    if venv is None:
        venv = VENV if extra == "registry" else VENV.with_name(f"{VENV.name}-{extra}")
    wanted = _stamp(extra)
    stamp = venv / STAMP
    have = json.loads(stamp.read_text()) if stamp.exists() else {}
    fresh = (
        have.get("extra") != extra
        or have.get("interpreter") != wanted["interpreter"]
        or have.get("dependencies") != wanted["dependencies"]
        or not (venv / "bin" / "python").exists()
    )
    if fresh or have.get("sources") != wanted["sources"]:
        print(f"bench: installing the checkout into {venv} (pip install '<checkout>[{extra}]')")
        if fresh:
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
            tree = _copy_sources(Path(tmp))
            if fresh:
                _pip(venv, f"{tree}[{extra}]")  # the documented command, not editable
            else:  # the same dependencies: Affidavit alone, again
                _pip(venv, "--no-deps", "--force-reinstall", str(tree))
        stamp.write_text(json.dumps(wanted))
    return Install(venv, extra, _versions(venv))


def _versions(venv: Path) -> dict[str, str]:
    """The server stack installed in ``venv``, and a check that Affidavit is imported from the
    virtualenv itself (not from the checkout or an editable install)."""
    probe = (
        "import importlib.metadata as m, json, affidavit.registry as r\n"
        "v = {}\n"
        f"for n in {STACK!r}:\n"
        "    try: v[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps([r.__file__, v]))\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        check=True,
        capture_output=True,
        cwd=venv,
        env={"PATH": "/usr/bin:/bin"},
    )
    where, versions = json.loads(done.stdout)
    if not Path(where).resolve().is_relative_to(venv.resolve()):
        raise SystemExit(f"bench: {venv} imports affidavit from {where}, not from itself")
    return dict(versions)


def server_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a server of an installed virtualenv: no PYTHONPATH leading elsewhere."""
    return {k: v for k, v in env.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}


def stack_line(log: Path) -> str:
    """A server's start-up line naming its event loop and HTTP parser (cli/_serve.py), from its
    log file; empty when it has none."""
    if not log.exists():
        return ""
    marker = "server: event loop"
    for raw in log.read_text(errors="replace").splitlines():
        line = raw
        if raw.startswith("{"):  # a JSON log line (cli/_serve.py): its message
            try:
                line = str(json.loads(raw).get("message", ""))
            except (ValueError, AttributeError):
                continue
        if marker in line:
            return line[line.index(marker) + len("server: ") :]
    return ""
