"""Run a document's shell blocks as written: the docs are tests (issue 23).

Every fenced block whose info string is ``sh`` is run, top to bottom, as one ``bash -Eeuo
pipefail`` script in an empty folder, with only what earlier blocks made. A block whose first
line is a comment starting ``# not run`` (and saying why) is shown and never run: the mark is
what a reader sees, on GitHub and on the site alike. ``console`` blocks are transcripts (a
prompt, then what was printed) and are not run.

The script keeps the document's line numbers: line N of the script is line N of the document
(lines outside the blocks are blank), so a failure names the file and the line as ``bash`` reports
it. Usage, from the checkout: ``python tools/docs_run.py README.md`` (what
``tests/test_docs_run.py`` does for README.md, docs/start.md and docs/guides/*.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The documents whose shell blocks run (tests/test_docs_run.py).
DOCUMENTS = ("README.md", "docs/start.md", *sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "guides").glob("*.md")
))  # fmt: skip
NORUN_MARK = "# not run"
# Opening fences: ``` or ~~~, with an info string; closing: the same fence alone.
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# How long one document may run, in all (servers started and stopped included).
TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: its info string's words, first content line (1-based), and lines."""

    info: tuple[str, ...]
    first_line: int
    lines: tuple[str, ...]

    @property
    def norun(self) -> bool:
        """A shell block marked, on its first line, as not run."""
        return (
            self.info == ("sh",) and self.lines[:1] != () and self.lines[0].startswith(NORUN_MARK)
        )

    @property
    def runs(self) -> bool:
        return self.info == ("sh",) and not self.norun


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order (an unclosed fence runs to the end)."""
    found: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        body: list[str] = []
        index += 1
        first = index + 1
        while index < len(lines) and lines[index].strip() != fence:
            body.append(lines[index])
            index += 1
        found.append(Block(tuple(opening["info"].split()), first, tuple(body)))
        index += 1
    return found


def script(text: str) -> str:
    """The document's ``sh`` blocks as one bash script with the document's line numbers."""
    lines = [""] * (len(text.splitlines()) + 1)
    for block in blocks(text):
        if block.runs:
            for offset, line in enumerate(block.lines):
                lines[block.first_line - 1 + offset] = line
    # Line 1 of a document is its title, never inside a block: the prelude takes its place.
    lines[0] = (
        "set -Eeuo pipefail; "
        "trap 'echo \"docs-run: line $LINENO failed (exit $?): $BASH_COMMAND\" >&2' ERR"
    )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Run:
    """What running a document's blocks did."""

    returncode: int
    output: str
    failed_line: int | None


def run(
    document: Path, *, repo: Path = ROOT, venv: Path | None = None, timeout: float = TIMEOUT_S
) -> Run:
    """Run ``document``'s blocks in a new empty folder; every process it left behind is stopped.

    The environment is the caller's, with ``venv``'s ``bin`` (default the checkout's ``.venv``)
    first on PATH, ``AFFIDAVIT_REPO`` the checkout (blocks copy files from it) and TMPDIR inside
    the run's folder.
    """
    bin_dir = (venv if venv is not None else repo / ".venv") / "bin"
    with tempfile.TemporaryDirectory(prefix="affidavit-docs-") as folder:
        work = Path(folder) / "work"
        tmp = Path(folder) / "tmp"
        work.mkdir()
        tmp.mkdir()
        (Path(folder) / "run.sh").write_text(script(document.read_text(encoding="utf-8")))
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "AFFIDAVIT_REPO": str(repo),
            "TMPDIR": str(tmp),
        }
        for name in ("AFFIDAVIT_API_KEY", "AFFIDAVIT_REGISTRY_URL", "AFFIDAVIT_DATA_DIR"):
            env.pop(name, None)  # a reader's settings must not leak into the run
        log = Path(folder) / "output.txt"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                ["bash", str(Path(folder) / "run.sh")],
                cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                returncode = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                returncode = -1
            finally:
                # The backstop: servers a block forgot to stop die with the process group.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        output = log.read_text(encoding="utf-8", errors="replace")
    if returncode == -1:
        output += f"\ndocs-run: {document.name} did not finish within {timeout:.0f} s\n"
    failed = re.findall(r"^docs-run: line (\d+) failed", output, flags=re.MULTILINE)
    return Run(returncode, output, int(failed[0]) if failed else None)


def main(argv: list[str]) -> int:
    """``python tools/docs_run.py [DOC...]``: run each document (default: all of them)."""
    status = 0
    for name in argv or list(DOCUMENTS):
        document = Path(name).resolve()
        done = run(document)
        where = f"{name}:{done.failed_line}" if done.failed_line else name
        print(done.output, end="")
        print(f"== {where}: {'ok' if done.returncode == 0 else f'FAILED (exit {done.returncode})'}")
        status = status or (done.returncode != 0)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
