"""The docs are tests (issue 23): every ``sh`` block of README.md, docs/start.md and
docs/guides/*.md runs as written (tools/docs_run.py), top to bottom, in an empty folder per
document; a failure names the file and the line. Blocks marked ``# not run ...`` on their first
line are few and say why.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from pathlib import Path
from types import ModuleType

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


@pytest.mark.network_local
@pytest.mark.parametrize("name", docs_run.DOCUMENTS)
def test_every_shell_block_runs_as_written(name: str) -> None:
    done = docs_run.run(ROOT / name)
    where = f"{name}:{done.failed_line}" if done.failed_line else name
    assert done.returncode == 0, f"{where}: a shell block failed\n{done.output[-6000:]}"


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
