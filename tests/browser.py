"""Headless Chromium for the browser tests: Debian's ``chromium``, a fresh profile per run.

A test that needs it calls :func:`chromium` (or a helper below), which skips the test with one
clear message when Chromium is not installed (CI installs it, .ci/run, and there the skip is a
failure: tests/conftest.py). Every run is a real browser process, bounded in time; nothing
listens beyond 127.0.0.1.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
MISSING = "chromium is not installed (apt-get install chromium; CI installs it)"
TIMEOUT = 120  # seconds one run may take
PNG = b"\x89PNG\r\n\x1a\n"


def chromium() -> str:
    """The Chromium binary; skips the calling test when there is none."""
    found = shutil.which("chromium") or (str(DEBIAN_CHROMIUM) if DEBIAN_CHROMIUM.exists() else None)
    if found is None:
        pytest.skip(MISSING)
    return found


def command(profile: Path, *args: str) -> list[str]:
    """Chromium, headless and quiet (no network of its own, no first-run pages), on ``profile``,
    then ``args``."""
    return [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}", *args,
    ]  # fmt: skip


def run(profile: Path, *args: str) -> str:
    """One run to its end; fails unless Chromium exits 0. Its stdout (``--dump-dom``'s page)."""
    done = subprocess.run(
        command(profile, *args), capture_output=True, timeout=TIMEOUT, check=False, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(url: str, shot: Path, profile: Path, width: int, height: int, *args: str) -> Path:
    """A PNG of ``url`` at ``width`` x ``height`` written to ``shot`` (replaced); fails unless one
    was written."""
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    run(profile, *args, f"--screenshot={shot}", f"--window-size={width},{height}", url)
    assert shot.read_bytes()[:8] == PNG
    return shot
