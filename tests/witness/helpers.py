"""Witness test helpers: TEST-ONLY keys, checkpoints of a reference tree, and ``affidavit witness
serve`` as a real process on 127.0.0.1."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from affidavit.attest.keyring import SigningKey, derive_test_key, private_key_pem
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    verifier_key_string,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import consistency_proof, leaf_hash, root_of

from tests.processes import AFFIDAVIT, free_port, stderr_until

ORIGIN = "example.com/test-log"


def log_key(label: str = "witness tests: log") -> SigningKey:
    """TEST-ONLY: a log's key."""
    return derive_test_key(label)


def write_key(path: Path, key: SigningKey) -> Path:
    """A PKCS#8 key file, mode 0600."""
    path.write_bytes(private_key_pem(key))
    os.chmod(path, 0o600)
    return path


class Tree:
    """A reference tree of ``n`` leaves and checkpoints of it signed by a log key."""

    def __init__(self, n: int, key: SigningKey | None = None, origin: str = ORIGIN) -> None:
        self.leaves = [leaf_hash(f"leaf {i}".encode()) for i in range(n)]
        self.key = key or log_key()
        self.origin = origin

    @property
    def vkey(self) -> str:
        return verifier_key_string(self.origin, self.key.public_key)

    def root(self, size: int) -> bytes:
        return root_of(self.leaves[:size])

    def note(self, size: int, *, root: bytes | None = None, key: SigningKey | None = None) -> str:
        """A checkpoint of ``size`` signed by the log (or ``key``)."""
        signer = key or self.key
        body = checkpoint_body(self.origin, size, root if root is not None else self.root(size))
        key_id = key_id_c2sp(self.origin, signer.public_key.raw)
        line = note_signature_line(self.origin, key_id, signer.sign(body.encode()))
        return format_note(body, [line])

    def proof(self, old: int, new: int) -> list[bytes]:
        if old in (0, new):
            return []
        return consistency_proof(self.leaves, old, new)

    def body(self, old: int, new: int, *, proof: Sequence[bytes] | None = None) -> bytes:
        """An add-checkpoint body from ``old`` to a checkpoint of ``new``."""
        hashes = self.proof(old, new) if proof is None else proof
        lines = [f"old {old}", *(base64.b64encode(h).decode() for h in hashes)]
        return ("\n".join(lines) + "\n\n" + self.note(new)).encode()


class WitnessProcess:
    """``affidavit witness serve`` on 127.0.0.1 (a free port); stop() sends SIGTERM."""

    def __init__(
        self,
        key_file: Path,
        state: Path,
        log_vkeys: Sequence[str],
        *,
        name: str = "witness.example/w1",
        ml_dsa_key: Path | None = None,
        port: int | None = None,
    ) -> None:
        self.args = [
            AFFIDAVIT,
            "witness",
            "serve",
            "--name",
            name,
            "--key",
            str(key_file),
            "--state",
            str(state),
            *(a for v in log_vkeys for a in ("--log-vkey", v)),
        ]
        if ml_dsa_key is not None:
            self.args += ["--ml-dsa-key", str(ml_dsa_key)]
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr = b""

    def start(self, attempts: int = 3) -> WitnessProcess:
        """Start it and wait until it answers. The port was picked free a moment before; when
        another process took it meanwhile (``net.bind_failed``), start again on another free
        port (issue 36); ``port`` and ``url`` follow."""
        for _ in range(attempts):
            before = len(self.stderr)
            if self._launch():
                return self
            if b"net.bind_failed" not in self.stderr[before:]:
                break
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        raise AssertionError(f"the witness did not start: {self.stderr[-2000:]!r}")

    def _launch(self) -> bool:
        self.process = subprocess.Popen(
            [*self.args, "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # Its banner, printed once bound (cli/witness.py; on stdout under --json), says that
        # what answers on the port is this process, not another one.
        if "--json" not in self.args:
            banner = f" on {self.url}\n".encode()
            bound, seen = stderr_until(self.process, banner, 20)
            self.stderr += seen
            if not bound:
                self.stop()
                return False
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                httpx.get(f"{self.url}/{'0' * 64}/checkpoint", timeout=1)
                return True
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        return False

    def stop(self) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(15)
        if self.process.stderr is not None and not self.process.stderr.closed:
            self.stderr += self.process.stderr.read()
            self.process.stderr.close()
        self.process = None
        return code

    def __enter__(self) -> WitnessProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
