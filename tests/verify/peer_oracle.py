"""Run the pinned peer (``aigentsy-verify`` 1.6.3) and Affidavit on the same files, side by side.

The peer is an oracle, never an authority (docs/parity.md). Its decision here is what a user of
the peer gets from its own command line, ``aigentsy-verify bundle FILE --json --strict
--public-key KEYFILE [--swarm-strict]`` (run in-process through its ``cli.cmd_bundle``, or as a
real process), combined with its library sidecar check ``verify_actor_signature_sidecar`` when the
bundle carries a sidecar: the peer's CLI never runs that check (docs/parity.md row S-0), and the
sidecar is a check the peer *makes*, so a bundle whose sidecar the peer rejects counts as not
verified by the peer.

Affidavit's decision comes from the real ``affidavit verify bundle --json`` command, run once per
batch of files.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aigentsy_verify import cli as peer_cli
from aigentsy_verify.bundle import verify_actor_signature_sidecar

ROOT: Final = Path(__file__).resolve().parents[2]
BIN: Final = Path(sys.executable).parent
PEER_CLI: Final = BIN / "aigentsy-verify"
OUR_CLI: Final = BIN / "affidavit"


@dataclass
class PeerVerdict:
    """What the peer decided about one bundle, and why."""

    verified: bool  # CLI verdict and, with a sidecar, the library sidecar check
    cli_exit: int
    result: dict[str, Any]
    sidecar: dict[str, Any] = field(default_factory=dict)

    @property
    def failing_steps(self) -> set[str]:
        """Steps the peer ran and failed (plus ``actor_signature_sidecar`` when it failed)."""
        failing = {
            name
            for name, step in self.result.get("steps", {}).items()
            if isinstance(step, dict) and not step.get("passed") and not step.get("skipped")
        }
        if self.sidecar.get("present") and not self.sidecar.get("passed"):
            failing.add("actor_signature_sidecar")
        return failing

    def reasons(self) -> list[str]:
        """Every error string the failing steps carry (for messages and findings)."""
        out: list[str] = []
        for name in sorted(self.failing_steps):
            step = (
                self.sidecar
                if name == "actor_signature_sidecar"
                else self.result["steps"].get(name, {})
            )
            out.extend(f"{name}: {e}" for e in step.get("errors", []) if isinstance(e, str))
            out.extend(f"{name}: {e}" for e in step.get("binding_errors", []))
            out.extend(
                f"{name}: {row.get('reason')}"
                for row in step.get("events", [])
                if isinstance(row, dict) and row.get("result") == "FAIL"
            )
            out.extend(
                f"{name}.{key}={step[key]}"
                for key in ("leaf_binding", "consequence_binding", "status")
                if key in step
            )
        return out


def write_peer_key(folder: Path, public_key_b64: str) -> Path:
    """The peer's key document, ``{"public_key_base64": ...}`` (its ``--public-key`` file)."""
    path = folder / "peer-log-key.json"
    path.write_text(json.dumps({"public_key_base64": public_key_b64, "algorithm": "Ed25519"}))
    return path


def peer_verdict(path: Path, key_file: Path | None, *, swarm_strict: bool = False) -> PeerVerdict:
    """The peer CLI's verdict on ``path`` (in-process: its own ``cmd_bundle``), plus its sidecar
    check. ``--strict`` is passed, as a careful peer user would."""
    args = argparse.Namespace(
        file=str(path),
        json=True,
        strict=True,
        swarm_strict=swarm_strict,
        fetch_key=False,
        public_key=None if key_file is None else str(key_file),
    )
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            peer_cli.cmd_bundle(args)  # type: ignore[no-untyped-call]  # the peer is untyped
        except SystemExit as e:
            code = int(e.code or 0)
    result = json.loads(out.getvalue())
    bundle = json.loads(path.read_text(encoding="utf-8"))
    sidecar = verify_actor_signature_sidecar(bundle) if "actor_signature_sidecar" in bundle else {}
    verified = code == 0 and (not sidecar.get("present") or bool(sidecar.get("passed")))
    return PeerVerdict(verified, code, result, sidecar)


def run(argv: Sequence[str], *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a real command (no shell) with a bounded time; output as text."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


def our_verdicts(
    paths: Sequence[Path], key_b64: str, *, profile: str = "default", extra: Sequence[str] = ()
) -> tuple[int, dict[str, dict[str, Any]]]:
    """``affidavit verify bundle --json`` over ``paths`` in one process: exit code and the
    result of each file (by path)."""
    argv = [str(OUR_CLI), "verify", "bundle", "--json", "--public-key-base64", key_b64]
    if profile != "default":
        argv += ["--profile", profile]
    argv += [*extra, *map(str, paths)]
    done = run(argv, timeout=120)
    if not done.stdout:  # the command refused its arguments: every file gets that as its result
        problem = (done.stderr.strip().splitlines() or ["no output"])[-1]
        failed = {"verdict": "unreadable", "verified": False, "code": f"cli: {problem}"}
        return done.returncode, {str(path): failed for path in paths}
    document = json.loads(done.stdout)
    return done.returncode, {r["source"]: r for r in document["results"]}
