"""The ``registry`` extra installs the server stack the registry is benchmarked on (issue 34):
uvloop's event loop and httptools' HTTP parser, the two ``cli/_serve.py`` runs on when they
import, read from the project's metadata (pyproject.toml and the installed distribution), never
from timing. And a server without them still serves, on asyncio and h11, and its start-up log
line says which loop and parser it runs on (docs/adr/0018 "The server stack").
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from affidavit.cli import _serve
from packaging.requirements import Requirement

from tests.conftest import ROOT
from tests.processes import RegistryProcess

# What cli/_serve.py runs on when it imports, by distribution name.
FAST = ("uvloop", "httptools")
# A platform with uvloop wheels (CPython on Linux) and one without (Windows): the markers that
# decide whether the extra asks for uvloop there.
LINUX = {"sys_platform": "linux", "platform_python_implementation": "CPython", "extra": "registry"}
WINDOWS = {
    "sys_platform": "win32",
    "platform_python_implementation": "CPython",
    "extra": "registry",
}


def _declared() -> dict[str, Requirement]:
    """The registry extra as pyproject.toml declares it, by distribution name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = (Requirement(line) for line in project["optional-dependencies"]["registry"])
    return {r.name.lower(): r for r in reqs}


def _installed() -> dict[str, Requirement]:
    """The registry extra as the installed distribution's metadata (Requires-Dist) carries it:
    the requirements whose marker holds for ``extra == "registry"`` on this machine."""
    reqs = (Requirement(line) for line in importlib.metadata.requires("affidavit") or [])
    return {
        r.name.lower(): r
        for r in reqs
        if r.marker is not None and r.marker.evaluate({"extra": "registry"})
    }


@pytest.mark.parametrize("read", [_declared, _installed], ids=["pyproject", "installed"])
def test_registry_extra_brings_the_benchmarked_loop_and_parser(
    read: Callable[[], dict[str, Requirement]],
) -> None:
    extra = read()
    missing = [name for name in FAST if name not in extra]
    assert not missing, (
        f"the registry extra ({read.__name__}) does not bring {missing}: a user's registry would "
        "run on asyncio and h11 at about half the rate bench/bench_write.py reports "
        "(docs/adr/0018; after editing pyproject.toml, re-run make install-dev)"
    )
    assert "uvicorn" in extra


def test_uvloop_is_asked_for_where_it_has_wheels_only() -> None:
    uvloop = _declared()["uvloop"]
    assert uvloop.marker is not None
    assert uvloop.marker.evaluate(LINUX)
    assert not uvloop.marker.evaluate(WINDOWS)  # uvloop does not build there: no failed install
    httptools = _declared()["httptools"]
    assert httptools.marker is None or httptools.marker.evaluate(WINDOWS)


def test_the_extra_names_the_two_packages_not_uvicorn_standard() -> None:
    # docs/adr/0018 "The server stack": dependencies are chosen; uvicorn[standard] would add
    # watchfiles, websockets and python-dotenv, which no server here uses.
    extra = _declared()
    assert not extra["uvicorn"].extras
    assert not {"watchfiles", "websockets", "python-dotenv"} & set(extra)


def test_serve_runs_on_what_the_extra_brings() -> None:
    # The names cli/_serve.py loads are the distributions the extra names (docs/adr/0018).
    _factory, loop = _serve._loop_factory()
    parser = _serve._parser_name(_serve._protocol_class())
    assert loop.split()[0] in _declared()
    assert parser.split()[0] in _declared()


def _serve_log(data: Path, env: dict[str, str]) -> str:
    """The messages the registry logged, one a line (stderr is JSON lines: docs/postgresql.md)."""
    server = RegistryProcess(data, env)
    server.start()
    server.stop()  # uvicorn re-raises the SIGTERM once shut down: -15 is normal
    lines = server.stderr_text.decode().splitlines()
    return "\n".join(str(json.loads(line).get("message", line)) for line in lines if line)


@pytest.mark.network_local
def test_start_up_line_names_uvloop_and_httptools(tmp_path: Path) -> None:
    log = _serve_log(tmp_path / "data", {})
    assert re.search(r"^server: event loop uvloop \S+, HTTP parser httptools \S+$", log, re.M), log


@pytest.mark.network_local
def test_serves_on_asyncio_and_h11_without_them(tmp_path: Path) -> None:
    # A plain `pip install affidavit` plus uvicorn by hand, or a platform without uvloop wheels:
    # a sitecustomize makes both unimportable (None in sys.modules, as the import system does),
    # and the registry must still start, answer /v1/health (RegistryProcess.start) and say so.
    blocker = tmp_path / "without"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nsys.modules['uvloop'] = None\nsys.modules['httptools'] = None\n"
    )
    log = _serve_log(tmp_path / "data", {"PYTHONPATH": str(blocker)})
    expected = (
        r"^server: event loop asyncio, HTTP parser h11 \S+ "
        r"\(install the registry extra, 'affidavit\[registry\]', for uvloop and httptools\)$"
    )
    assert re.search(expected, log, re.M), log
    assert "Traceback" not in log
