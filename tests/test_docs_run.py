"""The docs are tests (issue 23): every ``sh`` block of README.md, docs/start.md and
docs/guides/*.md runs as written (tools/docs_run.py), top to bottom, in an empty folder per
document; a failure names the file and the line. Blocks marked ``# not run ...`` on their first
line are few and say why.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The blocks deliberately not run, by document: each says why on its first line.
MAX_NORUN = {"README.md": 1}
MAX_NORUN_ELSEWHERE = 2


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_run", ROOT / "tools" / "docs_run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_run"] = module
    spec.loader.exec_module(module)
    return module


docs_run = _load()

# README.md promises its blocks run after `make demo` alone (issue 33), so they run in a checkout
# whose .venv is made as the Makefile's `install` target makes it: the runtime and the registry
# extra, none of the dev extra (stigmem-node, the peers, the test tools). The virtualenv is made
# once, again when pyproject.toml changes; the checkout is this one, seen through symlinks with
# that virtualenv as its .venv (the README puts "$AFFIDAVIT_REPO/.venv/bin" on PATH).
DEMO_VENV = ROOT / "build" / "demo-venv"
AFTER_DEMO_ALONE = {"README.md"}


class AfterDemo(NamedTuple):
    checkout: Path  # this checkout, its .venv the demo virtualenv
    dev_found: list[str]  # the dev extra's modules that virtualenv held before the run


def _pip(python: Path, verb: str, *args: str) -> None:
    command = ["flock", "/tmp/affidavit-pip.lock", str(python), "-m", "pip", verb, "--quiet"]
    subprocess.run([*command, *args], cwd=ROOT, check=True, timeout=900)


@pytest.fixture(scope="session")
def after_demo(tmp_path_factory: pytest.TempPathFactory) -> AfterDemo:
    """This checkout as `make demo` alone leaves it: its .venv holds the runtime install only."""
    stamp = DEMO_VENV / ".installed-runtime"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    python = DEMO_VENV / "bin" / "python"
    if not stamp.exists() or stamp.read_text() != want:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(DEMO_VENV)], check=True)
        _pip(python, "install", "--upgrade", "pip", "setuptools", "wheel")
        _pip(python, "install", "-e", ".[registry]", "--config-settings", "editable_mode=strict")
        stamp.write_text(want)
    # A strict editable install sees new modules only when re-run (the Makefile's `install`).
    _pip(python, "install", "--no-deps", "--no-build-isolation", "-e", ".", "--config-settings",
         "editable_mode=strict")  # fmt: skip
    # The README's Stigmem block installs stigmem-node itself: each run starts without it.
    _pip(python, "uninstall", "--yes", "stigmem-node")
    dev = ("pytest", "aigentsy", "stigmem_node")
    probe = f"import importlib.util as u; print(*[m for m in {dev} if u.find_spec(m)])"
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True)
    view = tmp_path_factory.mktemp("after-demo")
    for entry in ROOT.iterdir():
        if entry.name != ".venv":
            (view / entry.name).symlink_to(entry)
    (view / ".venv").symlink_to(DEMO_VENV)
    return AfterDemo(view, found.stdout.split())


@pytest.mark.network_local
@pytest.mark.parametrize("name", docs_run.DOCUMENTS)
def test_every_shell_block_runs_as_written(name: str, request: pytest.FixtureRequest) -> None:
    if name in AFTER_DEMO_ALONE:
        repo = request.getfixturevalue("after_demo").checkout
        done = docs_run.run(ROOT / name, repo=repo, venv=repo / ".venv")
    else:
        done = docs_run.run(ROOT / name)
    where = f"{name}:{done.failed_line}" if done.failed_line else name
    assert done.returncode == 0, f"{where}: a shell block failed\n{done.output[-6000:]}"


def test_the_readme_runs_without_the_dev_extra(request: pytest.FixtureRequest) -> None:
    # The fixture is what it claims: no dev-extra package in the README's virtualenv when made.
    after = request.getfixturevalue("after_demo")
    assert (after.checkout / ".venv").resolve() == DEMO_VENV
    assert after.dev_found == []


@pytest.mark.parametrize("name", docs_run.DOCUMENTS)
def test_blocks_not_run_are_few_and_say_why(name: str) -> None:
    found = docs_run.blocks((ROOT / name).read_text(encoding="utf-8"))
    norun = [b for b in found if b.norun]
    assert len(norun) <= MAX_NORUN.get(name, MAX_NORUN_ELSEWHERE), f"{name}: too many norun"
    for block in norun:
        why = block.lines[0].removeprefix(docs_run.NORUN_MARK)
        assert len(why.strip(" :")) > 10, f"{name}:{block.first_line}: say why it is not run"
    shells = [b for b in found if b.info[:1] in {("bash",), ("shell",), ("shell-session",)}]
    assert not shells, f"{name}: fence shell blocks as sh"
    odd = [b for b in found if b.info[:1] == ("sh",) and b.info != ("sh",)]
    assert not odd, f"{name}: a sh fence with more words renders badly; mark it '# not run'"


@pytest.mark.parametrize("name", docs_run.DOCUMENTS)
def test_run_blocks_have_no_placeholder_and_only_local_urls(name: str) -> None:
    for block in docs_run.blocks((ROOT / name).read_text(encoding="utf-8")):
        if not block.runs:
            continue
        for offset, line in enumerate(block.lines):
            where = f"{name}:{block.first_line + offset}"
            assert not re.search(r"<[a-z][a-z_-]*>", line), f"{where}: a <placeholder>"
            for url in re.findall(r"https?://[^\s\"'#)]+", line):
                assert url.startswith("http://127.0.0.1"), f"{where}: {url} is not local"


def test_a_failure_names_the_file_and_line(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n```sh\ntrue\n```\n\ntext\n\n```sh\necho hi\nfalse\n```\n")
    done = docs_run.run(page, timeout=30)
    assert done.returncode != 0
    assert done.failed_line == 11
    assert "hi" in done.output


def test_norun_and_console_blocks_are_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n```sh\n# not run by this test: shown only\nfalse\n```\n\n"
        '```console\n$ false\n```\n\n```sh\nX=1\n```\n\n```sh\ntest "$X" = 1\n```\n'
    )
    done = docs_run.run(page, timeout=30)
    assert done.returncode == 0, done.output


def test_a_server_left_running_is_stopped(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    pid_file = tmp_path / "pid"
    page.write_text(f"# Title\n\n```sh\nsleep 300 &\necho $! > {pid_file}\n```\n")
    done = docs_run.run(page, timeout=30)
    assert done.returncode == 0, done.output
    status = Path(f"/proc/{pid_file.read_text().strip()}/status")
    deadline = time.monotonic() + 5  # SIGKILL was sent; the kernel and init finish the job
    while status.exists() and "State:\tZ" not in status.read_text(errors="replace"):
        assert time.monotonic() < deadline, "the background process still runs"
        time.sleep(0.05)
