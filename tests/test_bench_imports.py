"""Every benchmark script imports: `make bench` runs them all in a row (bench/run.sh, set -e), so
one stale import (a module an issue moved) stops every benchmark after it. Found when
bench_receipts.py still imported ``affidavit.cli._input`` two issues after it went (issue 32)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(path.stem for path in (ROOT / "bench").glob("bench_*.py"))

# One interpreter imports each script in turn and prints those that fail, with the error.
_IMPORT_ALL = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - report every failure, not the first
        print(f"{name}: {type(e).__name__}: {e}")
"""


def test_every_benchmark_script_imports() -> None:
    assert len(SCRIPTS) >= 15, SCRIPTS  # the glob found the folder
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, str(ROOT / "bench"), *SCRIPTS],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "benchmark scripts that do not import:\n" + done.stdout
