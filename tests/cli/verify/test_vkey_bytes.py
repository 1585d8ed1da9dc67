"""A ``--vkey`` whose name holds a byte that is not UTF-8 is one line, ``key.vkey_malformed``,
in every verb with trust options (issue 35, hole 7), as the same key given as a file is.

Run as real processes with a bytes argv: the shell hands Python such a byte as a lone surrogate
(PEP 383), which no key name can hold (C2SP signed-note: a key name is UTF-8 text).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey

ROOT = Path(__file__).resolve().parents[3]
CLI = Path(sys.executable).parent / "affidavit"
FILE = str(ROOT / "vectors" / "bundles" / "stamped-accepted-2.0.0.json")
KEY = Ed25519PublicKey.from_b64("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
# A well-formed key ID and key under "logX"; the name is then swapped for b"log\xff".
TAIL = verifier_key_string("logX", KEY).split("+", 1)[1].encode()
BAD = b"log\xff+" + TAIL

VERBS = [
    ["verify", "bundle", FILE],
    ["verify", "attestation", FILE],
    ["verify", "anchor", FILE],
    ["verify", "checkpoint", FILE],
    ["verify", "dsse", FILE],
    ["verify", "receipt", FILE],
    ["verify", "scitt", FILE],
    ["lookup", "http://127.0.0.1:9", "ab" * 32],
]


def _one_line_error(done: subprocess.CompletedProcess[bytes], code: str) -> None:
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: {code}: "), err


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: " ".join(v[:2]))
def test_a_non_utf8_vkey_name_is_one_line(verb: list[str]) -> None:
    argv = [str(CLI).encode(), *(a.encode() for a in verb), b"--vkey", BAD]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    _one_line_error(done, "key.vkey_malformed")


def test_the_same_key_as_a_file_is_the_same_code(tmp_path: Path) -> None:
    path = tmp_path / "log.vkey"
    path.write_bytes(BAD + b"\n")
    argv = [str(CLI), "verify", "checkpoint", FILE, "--vkey", str(path)]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    _one_line_error(done, "key.vkey_malformed")


def test_log_monitor_vkey_too(tmp_path: Path) -> None:
    argv = [str(CLI).encode(), b"log", b"monitor", b"http://127.0.0.1:9", b"--vkey", BAD]
    argv += [b"--state", str(tmp_path / "state.json").encode()]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    _one_line_error(done, "key.vkey_malformed")
