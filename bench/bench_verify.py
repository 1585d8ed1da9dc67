"""Bundle verification: Affidavit's library vs aigentsy_verify.verify_bundle, and CLI cold start.

Same run, same bundles: 1,200 spec-2.0.0 bundles stamped into one log under one signed tree head
(TEST-ONLY key), each carrying an embedded contract, the raw adapter output and a decision.

- library: ``BundleVerifier.verify`` (all steps: hashes, chain, proof binding, inclusion, head
  signature under the trusted key, cross-reference, adapter replay with validator re-run and
  policy replay) vs the peer's ``verify_bundle(bundle, public_key_base64)`` plus its
  ``verify_adapter_replay`` (what ``aigentsy-verify bundle`` runs); both on parsed dicts, one core.
- cold start: ``affidavit verify bundle F --public-key-base64 K`` vs ``aigentsy-verify bundle F
  --public-key KEYFILE``, whole processes, median of >= 21 alternating runs, after compiling
  both packages' bytecode (docs/adr/0003-cold-start.md).
- the speed tricks ADR 0003 keeps, each against the plain path it replaces, same run: the
  one-pass marked encoding of a bundle (library rate without it) and the function-level imports
  (every module of affidavit.verify and the verify commands imported first, as top-level imports
  would); and what the lazy command group saves (docs/adr/0022-click-alone.md: every command
  module the group's tables name imported first).

Run: ``python bench/bench_verify.py [--bundles N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import importlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _timing import table
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.contracts.policy import AcceptancePolicy

POLICY = {
    "rules": [
        {
            "conditions": [
                {"field": "signal_a", "op": "==", "value": True},
                {"field": "signal_b", "op": "==", "value": True},
            ],
            "action": "auto_accept",
        }
    ],
    "default": "require_review",
}


def _bundles(folder: Path, count: int) -> tuple[list[dict[str, Any]], str]:
    key = derive_test_key("bench_verify log key (TEST-ONLY)", key_id="bench")
    contract = example_contract()
    items = [
        StampItem(f"deal-{i:05d}", contract, {"signal_a": i % 3 != 0, "signal_b": i % 5 != 0})
        for i in range(count)
    ]
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    with TransparencyLog.create(folder / "log.db", key, "bench-log") as log:
        bundles = stamp_bundles(log, items, AcceptancePolicy.from_json(POLICY), when=when)
    return bundles, key.public_key.b64


def _rate(fn: Any, items: list[Any], runs: int) -> float:
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        for item in items:
            fn(item)
        rates.append(len(items) / (time.perf_counter() - start))
    return statistics.median(rates)


def _compile_bytecode() -> str:
    """Compile Affidavit's and the peer's modules, so neither pays for compiling source.

    Returns the bytecode state to print with the numbers (PYTHONDONTWRITEBYTECODE would otherwise
    leave an edited module recompiling on every start).
    """
    folders = [p for name in ("affidavit", "aigentsy_verify") for p in importlib.import_module(
        name).__path__]  # fmt: skip
    ok = all(compileall.compile_dir(folder, quiet=1, force=False) for folder in folders)
    return "bytecode compiled before timing" if ok else "bytecode: some modules did not compile"


def _cold(commands: dict[str, list[str]], runs: int) -> dict[str, float]:
    for command in commands.values():  # warm the file cache once
        subprocess.run(command, capture_output=True, check=False)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():  # alternate, so drift hits both alike
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, check=False)
            times[name].append((time.perf_counter() - start) * 1000)
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stdout!r} {done.stderr!r}")
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundles", type=int, default=1200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from aigentsy_verify import verify_bundle as peer_verify
    from aigentsy_verify.adapter import verify_adapter_replay as peer_replay

    folder = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    bundles, key_b64 = _bundles(folder, args.bundles)
    ours = BundleVerifier([Ed25519PublicKey.from_b64(key_b64)])
    assert all(ours.verify(b).verified for b in bundles[:50])
    assert all(peer_verify(b, key_b64)["verified"] for b in bundles[:50])

    def peer(bundle: dict[str, Any]) -> None:
        peer_verify(bundle, key_b64)
        peer_replay(bundle)

    def peer_core(bundle: dict[str, Any]) -> None:
        peer_verify(bundle, key_b64)

    def fresh(bundle: dict[str, Any]) -> None:
        BundleVerifier([Ed25519PublicKey.from_b64(key_b64)]).verify(bundle)  # no memo across

    def plain(bundle: dict[str, Any]) -> None:
        from affidavit.verify.bundles import verifier

        real, verifier.encode_once = verifier.encode_once, lambda _bundle: None
        try:  # every hash encoded on its own, as without the marked text (ADR 0003)
            ours.verify(bundle)
        finally:
            verifier.encode_once = real

    rows: list[list[object]] = []
    peer_rate = _rate(peer, bundles, args.runs)
    for name, fn in (
        ("affidavit BundleVerifier.verify (shared verifier)", ours.verify),
        ("affidavit, new verifier per bundle (head re-verified)", fresh),
        ("affidavit, shared verifier, without the one-pass encoding", plain),
        ("aigentsy_verify verify_bundle + adapter replay", peer),
        ("aigentsy_verify verify_bundle only", peer_core),
    ):
        rate = peer_rate if fn is peer else _rate(fn, bundles, args.runs)
        rows.append([name, rate, f"{rate / peer_rate:.2f}x"])
    print(f"library, {len(bundles)} bundles from one log, one core, median of {args.runs}")
    print(table(["verifier", "bundles/s", "vs peer"], rows))

    sample = folder / "bundle.json"
    sample.write_text(json.dumps(bundles[0]))
    key_file = folder / "key.json"
    key_file.write_text(json.dumps({"public_key_base64": key_b64}))
    bin_dir = Path(sys.executable).parent
    affidavit = shutil.which("affidavit") or str(bin_dir / "affidavit")
    aigentsy = shutil.which("aigentsy-verify") or str(bin_dir / "aigentsy-verify")
    ours_cli = [affidavit, "verify", "bundle", str(sample), "--public-key-base64", key_b64]
    peer_cli = [aigentsy, "bundle", str(sample), "--public-key", str(key_file)]
    line = ours_cli[1:]
    eager_commands = (
        "import sys, importlib\n"
        "from affidavit.cli import _group\n"
        "for table in (_group.SUBCOMMANDS, _group.VERIFY_COMMANDS, _group.LOG_COMMANDS,\n"
        "              _group.ADAPTER_COMMANDS):\n"
        "    for module, _ in table.values():\n"
        "        importlib.import_module(module)\n"
        "from affidavit.cli.main import main; main(sys.argv[1:])"
    )
    eager = (
        "import sys, pkgutil, importlib, affidavit.verify\n"
        "for m in pkgutil.walk_packages(affidavit.verify.__path__, 'affidavit.verify.'):\n"
        "    importlib.import_module(m.name)\n"
        "import affidavit.cli.verify.bundle, affidavit.cli._trust, click\n"
        "from affidavit.cli.main import main; main(sys.argv[1:])"
    )
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "affidavit verify bundle": ours_cli,
        "aigentsy-verify bundle": peer_cli,
        "same, every module imported first": [sys.executable, "-c", eager, *line],
        "same, every command module imported first": [sys.executable, "-c", eager_commands, *line],
    }
    state = _compile_bytecode()
    runs = max(21, args.runs * 5)
    cold = _cold(commands, runs)
    base = cold["aigentsy-verify bundle"]
    print()
    print(f"cold start, whole process, median of {runs} alternating runs (ms); {state}")
    print(
        table(["command", "ms", "vs peer"], [[k, v, f"{v / base:.2f}x"] for k, v in cold.items()])
    )


if __name__ == "__main__":
    main()
