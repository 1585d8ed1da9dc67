"""What a newcomer sees on a terminal (issue 23): ``canon`` ends with a newline on a terminal and
stays byte-exact in a pipe; ``registry serve`` says where it listens, as the witness does."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.processes import AFFIDAVIT, free_port


def _on_a_terminal(args: list[str], cwd: Path) -> bytes:
    """Run ``args`` with stdout on a pseudo-terminal; everything it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(args, cwd=cwd, stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    output = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 10)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert process.wait(timeout=10) == 0
    return output.replace(b"\r\n", b"\n")  # the terminal's line discipline


def test_canon_ends_with_a_newline_on_a_terminal_only(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text('{"b": 1, "a": [true, null]}\n')
    shown = _on_a_terminal([AFFIDAVIT, "canon", "doc.json"], tmp_path)
    assert shown == b'{"a":[true,null],"b":1}\n'
    piped = subprocess.run(
        [AFFIDAVIT, "canon", "doc.json"], cwd=tmp_path, capture_output=True, check=True
    )
    assert piped.stdout == b'{"a":[true,null],"b":1}'  # the bytes that are hashed, exactly


@pytest.mark.network_local
def test_registry_serve_says_where_it_listens(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [AFFIDAVIT, "registry", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(tmp_path / "data"), "--no-access-log"],
            stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while f"registry on http://127.0.0.1:{port}" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        answer = httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=5)
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=15)
