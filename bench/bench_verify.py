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

- the command as users run it (issue 34, docs/adr/0023-streamed-bulk-verification.md): ``affidavit
  verify bundle DIR`` over 1,000 and 10,000 bundle files (``--bulk``), ``--jobs 1`` and default
  jobs, against the peer in one Python process (each file read with ``json.load``, then
  ``verify_bundle`` and ``verify_adapter_replay``, as ``aigentsy-verify bundle`` runs them), each
  in a fresh wrapper process that reports its descendants' CPU seconds and peak RSS
  (``getrusage(RUSAGE_CHILDREN)``), rounds alternating. ``vs peer`` is in bundles per CPU second
  (steady on a loaded machine); wall-clock rates are printed beside them with the load average,
  since only wall time shows a second core at work. Then peak memory with ``--json`` (and
  ``--jsonl``), 1,000 vs 10,000.

Run: ``python bench/bench_verify.py [--bundles N] [--runs R] [--baseline REV [--rounds K]]
[--bulk 1000,10000 | --bulk 0] [--bulk-rounds K] [--bulk-only]``; with ``--baseline REV`` the
verify bundle DIR rows gain that revision's command (``--jobs 1``, ``--json``), same run.
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

from _install import baseline_tree
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
    shim = baseline_tree(revision, folder)
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


# Runs a command and prints one JSON line: its descendants' CPU seconds, peak RSS and wall time.
_MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "wall = time.perf_counter() - start\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'code': done.returncode, 'cpu': ru.ru_utime + ru.ru_stime,\n"
    "                  'rss_mb': ru.ru_maxrss / 1024, 'wall': wall,\n"
    "                  'err': done.stderr.decode()[-500:]}))\n"
)

# The peer over a folder in one Python process: what a user scripting aigentsy-verify would run.
_PEER_FOLDER = (
    "import json, os, sys\n"
    "from aigentsy_verify import verify_bundle\n"
    "from aigentsy_verify.adapter import verify_adapter_replay\n"
    "folder, key = sys.argv[1], sys.argv[2]\n"
    "bad = 0\n"
    "for name in sorted(os.listdir(folder)):\n"
    "    with open(os.path.join(folder, name)) as handle:\n"
    "        bundle = json.load(handle)\n"
    "    bad += not verify_bundle(bundle, key)['verified']\n"
    "    verify_adapter_replay(bundle)\n"
    "sys.exit(1 if bad else 0)\n"
)


# ``affidavit`` as its console script runs it (affidavit.cli.main:main), reporting at exit the CPU
# seconds of this process and of its worker processes apart: the workers' share, divided by
# their number, is what a second core takes off the wall clock on a machine that is not loaded.
_OURS = (
    "import atexit, json, os, resource, sys\n"
    "def _report():\n"
    "    me = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    workers = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    with open(os.environ['BENCH_VERIFY_RUSAGE'], 'w') as out:\n"
    "        json.dump({'main': me.ru_utime + me.ru_stime,\n"
    "                   'workers': workers.ru_utime + workers.ru_stime}, out)\n"
    "atexit.register(_report)\n"
    "from affidavit.cli.main import main\n"
    "main(sys.argv[1:])\n"
)


def _measure(command: list[str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as split:
        env = dict(os.environ, BENCH_VERIFY_RUSAGE=split.name)
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, *command],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        found: dict[str, Any] = json.loads(done.stdout)
        text = Path(split.name).read_text()
        found.update(json.loads(text) if text else {"main": found["cpu"], "workers": 0.0})
    if found["code"] != 0:
        raise SystemExit(f"{command[:4]} exited {found['code']}: {found['err']}")
    return found


def _bulk(sizes: list[int], rounds: int, baseline: str | None = None) -> None:
    """The command as users run it, against the peer, same run (issue 34's rows); with
    ``baseline``, the command of that revision too (``--jobs 1`` and ``--json``)."""
    # Here, not at the top: --library-child runs this file on a baseline tree that may predate it.
    from affidavit.cli._batch import default_jobs

    folder = Path(tempfile.mkdtemp(prefix="bench-verify-bulk-"))
    shim = None if baseline is None else baseline_tree(baseline, folder / "baseline")
    bundles, key_b64 = _bundles(folder, max(sizes))
    folders = {}
    for size in sizes:
        files = folder / f"n{size}"
        files.mkdir()
        for i, bundle in enumerate(bundles[:size]):
            (files / f"{i:06d}.json").write_text(json.dumps(bundle))
        folders[size] = str(files)
    del bundles

    def ours(size: int, *extra: str) -> list[str]:
        return [sys.executable, "-c", _OURS, "verify", "bundle", folders[size],
                "--public-key-base64", key_b64, *extra]  # fmt: skip

    commands: dict[tuple[int, str], list[str]] = {}
    for size in sizes:
        commands[size, "peer"] = [sys.executable, "-c", _PEER_FOLDER, folders[size], key_b64]
        commands[size, "--jobs 1"] = ours(size, "--jobs", "1")
        commands[size, "default jobs"] = ours(size)
        commands[size, "--json"] = ours(size, "--json")
        commands[size, "--jsonl"] = ours(size, "--jsonl")
        if shim is not None:  # that tree's affidavit first on the path (as --baseline does)
            where = ["env", f"PYTHONPATH={shim}"]
            commands[size, f"{baseline} --jobs 1"] = [*where, *ours(size, "--jobs", "1")]
            commands[size, f"{baseline} --json"] = [*where, *ours(size, "--json", "--jobs", "1")]
    for command in commands.values():  # warm the file cache and the bytecode once
        _measure(command)
    found: dict[tuple[int, str], list[dict[str, Any]]] = {name: [] for name in commands}
    loads = []
    for _ in range(rounds):
        for name, command in commands.items():  # alternate, so drift hits every row alike
            run = _measure(command)
            size, label = name
            alone = label in {"peer", "--jobs 1"} or (baseline is not None and baseline in label)
            jobs = 1 if alone else default_jobs(size, min_per_worker=500)
            run["jobs"] = jobs if jobs > 1 else 0  # one job runs in the main process
            found[name].append(run)
            loads.append(os.getloadavg()[0])

    def median(name: tuple[int, str], field: str) -> float:
        return statistics.median(run[field] for run in found[name])

    def critical(run: dict[str, Any]) -> float:
        """CPU seconds on the longest path: this process, plus the workers' share of one."""
        return float(run["main"] + run["workers"] / (_workers(run) or 1))

    rows: list[list[object]] = []
    for size in sizes:
        peer_cpu, peer_wall = median((size, "peer"), "cpu"), median((size, "peer"), "wall")
        labels = ["peer", "--jobs 1", "default jobs"]
        if baseline is not None:
            labels.append(f"{baseline} --jobs 1")
        for label in labels:
            cpu, wall = median((size, label), "cpu"), median((size, label), "wall")
            path = statistics.median(critical(run) for run in found[size, label])
            workers = _workers(found[size, label][0])
            rows.append([
                f"{size:,}", label if label != "peer" else "peer, one Python process", workers,
                size / cpu, f"{peer_cpu / cpu:.2f}x", f"{peer_cpu / path:.2f}x",
                size / wall, f"{peer_wall / wall:.2f}x", median((size, label), "rss_mb"),
            ])  # fmt: skip
    print()
    print(
        f"verify bundle DIR, whole processes, median of {rounds} alternating rounds; "
        f"{cores_note()}, load average {min(loads):.1f}-{max(loads):.1f} during the runs"
    )
    print(
        "vs peer (CPU): bundles per CPU second of every process of the run; (path): the CPU"
        " seconds of the longest path (main process + workers' CPU / workers), what the wall"
        " clock would show with a free core per worker; wall: as measured, on this loaded machine"
    )
    headers = ["bundles", "command", "workers", "bundles/CPU s", "vs peer (CPU)",
               "vs peer (path)", "bundles/s wall", "vs peer (wall)", "peak RSS MB"]  # fmt: skip
    print(table(headers, rows))
    small, large = min(sizes), max(sizes)
    memory: list[list[object]] = []
    extra = [] if baseline is None else [f"{baseline} --json"]
    for label in ("--json", "--jsonl", "default jobs", *extra, "peer"):
        low, high = median((small, label), "rss_mb"), median((large, label), "rss_mb")
        name = "text (default jobs)" if label == "default jobs" else label
        memory.append([name, low, high, f"{high / low:.2f}"])
    print()
    print(f"peak memory (max RSS of any process of the run, MB), {small:,} vs {large:,} bundles")
    print(table(["output", f"{small:,}", f"{large:,}", "ratio"], memory))


def _workers(run: dict[str, Any]) -> int:
    """The worker processes a run used (default jobs: every core for enough bundles)."""
    return int(run.get("jobs", 0))


def cores_note() -> str:
    """How many cores this process may use."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{count} cores"


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundles", type=int, default=1200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="also measure the library at this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="alternating child runs each")
    parser.add_argument("--library-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--bulk", default="1000,10000", help="bundle counts for verify bundle DIR (0: skip)"
    )
    parser.add_argument("--bulk-rounds", type=int, default=3)
    parser.add_argument("--bulk-only", action="store_true", help="only the verify bundle DIR rows")
    args = parser.parse_args()
    if args.library_child is not None:
        _library_child(args.library_child, args.runs)
        return
    sizes = [int(n) for n in args.bulk.split(",") if int(n) > 0]
    if args.bulk_only:
        _bulk(sizes, args.bulk_rounds, args.baseline)
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
    if sizes:
        _bulk(sizes, args.bulk_rounds, args.baseline)


if __name__ == "__main__":
    main()
