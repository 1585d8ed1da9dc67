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
  function-level imports (every module of affidavit.verify and the verify commands imported
  first, as top-level imports would); and what the lazy command group saves
  (docs/adr/0022-click-alone.md: every command module the group's tables name imported first).
- ``--baseline REV``: the library rate of this tree and of the verifier at REV (``git archive``,
  run from that tree as bench_write does), same bundles, in child processes that alternate, each
  measuring the peer beside it, in bundles per CPU second of the child (steadier than wall time
  on a shared machine; docs/adr/0021-plain-encoders.md measured the plain encoders this way).

Run: ``python bench/bench_verify.py [--bundles N] [--runs R] [--baseline REV [--rounds K]]``.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import importlib
import json
import os
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


def _rate(fn: Any, items: list[Any], runs: int, clock: Any = time.perf_counter) -> float:
    rates = []
    for _ in range(runs):
        start = clock()
        for item in items:
            fn(item)
        rates.append(len(items) / (clock() - start))
    return statistics.median(rates)


ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("verify", "attest", "cli", "registry", "witness", "specs")


def _baseline_path(revision: str, folder: Path) -> str:
    """A PYTHONPATH that imports ``affidavit`` from ``revision`` (``git archive``; the project has
    no ``affidavit/`` folder of its own, so ``affidavit/<package>`` links point into the tree)."""
    tree = folder / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, *PACKAGES], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shim = folder / "shim" / "affidavit"
    shim.mkdir(parents=True)
    for package in PACKAGES:
        (shim / package).symlink_to(tree / package)
    return str(shim.parent)


def _library_child(path: Path, runs: int) -> None:
    """Child of ``--baseline``: the library rate of whichever ``affidavit`` is on the path, and
    the peer's in the same process; one JSON line."""
    import affidavit.verify  # the tree under test: whichever PYTHONPATH put first
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from aigentsy_verify import verify_bundle as peer_verify
    from aigentsy_verify.adapter import verify_adapter_replay as peer_replay

    data = json.loads(path.read_text())
    bundles, key_b64 = data["bundles"], data["key"]
    ours = BundleVerifier([Ed25519PublicKey.from_b64(key_b64)])
    assert all(ours.verify(b).verified for b in bundles[:50])

    def peer(bundle: dict[str, Any]) -> None:
        peer_verify(bundle, key_b64)
        peer_replay(bundle)

    where = str(Path(affidavit.verify.__file__).resolve().parent.parent)
    cpu = time.process_time  # this process's CPU time: steadier than wall time on a shared machine
    rate = {"ours": _rate(ours.verify, bundles, runs, cpu), "peer": _rate(peer, bundles, runs, cpu)}
    print(json.dumps({**rate, "from": where}))


def _against_baseline(
    bundles: list[dict[str, Any]], key_b64: str, revision: str, runs: int, rounds: int
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-verify-baseline-"))
    shim = _baseline_path(revision, folder)
    data = folder / "bundles.json"
    data.write_text(json.dumps({"bundles": bundles, "key": key_b64}))
    script = [sys.executable, __file__, "--library-child", str(data), "--runs", str(runs)]
    trees = {"this tree": None, f"baseline {revision}": shim}
    found: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, path in trees.items():  # alternate, so drift hits both alike
            env = dict(os.environ)
            if path is not None:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, (path, env.get("PYTHONPATH"))))
            done = subprocess.run(script, env=env, capture_output=True, text=True, check=True)
            found[name].append(json.loads(done.stdout.splitlines()[-1]))
    rows: list[list[object]] = []
    ours = {}
    for name, rates in found.items():
        ours[name] = statistics.median(r["ours"] for r in rates)
        peer = statistics.median(r["peer"] for r in rates)
        ratio = statistics.median(r["ours"] / r["peer"] for r in rates)
        rows.append([f"affidavit, {name}", ours[name], peer, f"{ratio:.2f}x"])
    now, before = ours["this tree"], ours[f"baseline {revision}"]
    print()
    print(
        f"library against {revision}, {len(bundles)} bundles, child processes alternating, "
        f"median of {rounds} rounds of median-of-{runs}, bundles per CPU second"
    )
    print(table(["verifier", "bundles/s", "peer bundles/s (same child)", "vs peer"], rows))
    print(f"this tree / baseline: {now / before:.3f}")
    for name, rates in found.items():
        print(f"{name}: affidavit from {rates[0]['from']}")


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
    parser.add_argument("--baseline", help="also measure the library at this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="alternating child runs each")
    parser.add_argument("--library-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.library_child is not None:
        _library_child(args.library_child, args.runs)
        return
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

    rows: list[list[object]] = []
    peer_rate = _rate(peer, bundles, args.runs)
    for name, fn in (
        ("affidavit BundleVerifier.verify (shared verifier)", ours.verify),
        ("affidavit, new verifier per bundle (head re-verified)", fresh),
        ("aigentsy_verify verify_bundle + adapter replay", peer),
        ("aigentsy_verify verify_bundle only", peer_core),
    ):
        rate = peer_rate if fn is peer else _rate(fn, bundles, args.runs)
        rows.append([name, rate, f"{rate / peer_rate:.2f}x"])
    print(f"library, {len(bundles)} bundles from one log, one core, median of {args.runs}")
    print(table(["verifier", "bundles/s", "vs peer"], rows))
    if args.baseline:
        _against_baseline(bundles, key_b64, args.baseline, args.runs, args.rounds)

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
