"""``make mutation``: mutation testing of the modules that decide a verdict (issue 36), with
mutmut 3. Never part of ``make test``; docs/testing.md keeps the scores and the survivors.

Usage: ``python tools/mutation.py [MODULE ...]``, MODULE as ``verify/crypto/merkle.py``; without
one, every module of the scope (pyproject.toml ``[tool.affidavit.mutation]``: each module with
the tests that judge it). Prints the score per module (killed of all mutants, and each survivor
by name) and writes it to ``build/mutation/scores.json``.

The explorer's JavaScript (``registry/explorer/*.js``, the ``mutate`` list of
``tools/stryker/stryker.config.json``) is mutated by StrykerJS instead, pinned in
``tools/stryker/package-lock.json`` (``npm ci`` there, once; it brings the Node.js that Stryker
10 needs) and judged by node's test runner on ``tests/registry/explorer_js``; its score per file
is printed in the same table and written to ``build/stryker/scores.json``. A MODULE ending in
``.js`` selects it.

mutmut names a mutant after its file's path and puts the mutated copy first on ``sys.path``,
while the tests import the packages as ``affidavit.*`` from folders named ``verify/``,
``registry/``, ... So the run happens in a staging tree, ``build/mutation/``, that lays each
package out as ``src/affidavit/<package>`` (a link to the checkout's folder): mutmut strips
``src.``, so its names are the import names, and ``affidavit`` (a namespace package) finds the
mutated copy before the installed one. ``tests``, ``vectors`` and ``../shared`` are linked there
too, and the staging ``pyproject.toml`` is the checkout's with ``[tool.mutmut]`` narrowed to the
modules asked for. Results are kept between runs in ``build/mutation/mutants/`` (mutmut's cache).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STAGE = ROOT / "build" / "mutation"
KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # tests failed, or timed out, or mypy caught it
SURVIVED = 0
STRYKER = ROOT / "tools" / "stryker"
STRYKER_OUT = ROOT / "build" / "stryker"
# Stryker's statuses: a mutant a test failed on (or that timed out) is killed; one that survived
# or that no test reached is not; ignored ones (`// Stryker disable`, with its reason) and ones
# that do not run at all (a syntax or runtime error) are left out of the score, as Stryker does.
STRYKER_KILLED = {"Killed", "Timeout"}
STRYKER_NOT_KILLED = {"Survived", "NoCoverage"}


def _scope() -> dict[str, list[str]]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text())
    scope: dict[str, list[str]] = document["tool"]["affidavit"]["mutation"]["scope"]
    return scope


def _toml(value: object) -> str:
    return json.dumps(value)  # a JSON string, number or array of strings is TOML too


def _staged_pyproject(modules: list[str], tests: list[str]) -> str:
    """The checkout's pyproject.toml, its [tool.mutmut] narrowed to ``modules`` and ``tests``."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.mutmut]")
    end = text.find("\n[", start + 1)
    table = text[start:] if end < 0 else text[start : end + 1]
    config = tomllib.loads(table)["tool"]["mutmut"]
    packages = sorted({m.split("/")[0] for m in modules})
    config["source_paths"] = [f"src/affidavit/{package}" for package in packages]
    config["only_mutate"] = [f"src/affidavit/{m}" for m in modules]
    config["pytest_add_cli_args_test_selection"] = tests
    lines = ["[tool.mutmut]"]
    for key, value in config.items():
        lines.append(f"{key} = {_toml(value)}")
    return text.replace(table, "\n".join(lines) + "\n")


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() or link.exists():
        if link.is_symlink() and link.resolve() == target.resolve():
            return
        link.unlink() if link.is_symlink() else shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def _stage(modules: list[str], tests: list[str]) -> None:
    for package in sorted({m.split("/")[0] for m in modules}):
        _link(STAGE / "src" / "affidavit" / package, ROOT / package)
    _link(STAGE / "tests", ROOT / "tests")
    _link(STAGE / "vectors", ROOT / "vectors")
    _link(STAGE / "specs", ROOT / "specs")
    # tests/conftest.py finds the peers' vectors at ROOT.parent/shared: the run's ROOT is
    # build/mutation/mutants, so ../shared is build/mutation/shared
    if (ROOT.parent / "shared").is_dir():
        _link(STAGE / "shared", ROOT.parent / "shared")
    staged = _staged_pyproject(modules, tests)
    path = STAGE / "pyproject.toml"
    if not path.exists() or path.read_text() != staged:
        path.write_text(staged)
        # a changed selection: mutmut's copies of the sources are made again from the checkout
        shutil.rmtree(STAGE / "mutants", ignore_errors=True)


def _scores(modules: list[str]) -> dict[str, dict[str, Any]]:
    scores: dict[str, dict[str, Any]] = {}
    for module in modules:
        meta = STAGE / "mutants" / "src" / "affidavit" / f"{module}.meta"
        codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
        killed = sorted(k for k, c in codes.items() if c in KILLED)
        survived = sorted(k for k, c in codes.items() if c == SURVIVED)
        other = sorted(f"{k} ({c})" for k, c in codes.items() if c not in KILLED | {SURVIVED})
        scores[module] = {
            "mutants": len(codes),
            "killed": len(killed),
            "score": round(100 * len(killed) / len(codes), 1) if codes else None,
            "survived": survived,
            "other": other,  # no tests, suspicious, not checked: none of them counts as killed
        }
    return scores


def _js_scope() -> list[str]:
    config = json.loads((STRYKER / "stryker.config.json").read_text())
    files: list[str] = config["mutate"]
    return files


def _label(name: str, mutant: dict[str, Any]) -> str:
    start = mutant["location"]["start"]
    what = f"{mutant['mutatorName']} {mutant.get('replacement', '')!r}"
    return f"{name}:{start['line']}:{start['column']} {what}"


def _stryker(files: list[str]) -> tuple[int, dict[str, dict[str, Any]]]:
    """StrykerJS on ``files``: (its exit code, the score per file)."""
    env = {
        **os.environ,
        "PATH": f"{STRYKER / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
    }
    installed = STRYKER / "node_modules" / ".package-lock.json"
    lock = STRYKER / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=STRYKER, check=False)
        if done.returncode:
            return done.returncode, {}
    STRYKER_OUT.mkdir(parents=True, exist_ok=True)
    log = STRYKER_OUT / "run.log"
    print(f"stryker: {len(files)} file(s); progress in {log}")
    with log.open("wb") as out:
        done = subprocess.run(
            [str(STRYKER / "node_modules" / ".bin" / "stryker"), "run",
             str(STRYKER / "stryker.config.json"), "--mutate", ",".join(files)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, check=False,
        )  # fmt: skip
    if done.returncode:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        return done.returncode, {}
    report = json.loads((STRYKER_OUT / "mutation.json").read_text())
    scores: dict[str, dict[str, Any]] = {}
    for name in files:
        mutants = report["files"].get(name, {"mutants": []})["mutants"]
        counted = [m for m in mutants if m["status"] in STRYKER_KILLED | STRYKER_NOT_KILLED]
        killed = [m for m in counted if m["status"] in STRYKER_KILLED]

        scores[name] = {
            "mutants": len(counted),
            "killed": len(killed),
            "timeouts": sum(m["status"] == "Timeout" for m in counted),
            "ignored": sum(m["status"] == "Ignored" for m in mutants),
            "score": round(100 * len(killed) / len(counted), 1) if counted else None,
            "survived": [_label(name, m) for m in counted if m["status"] == "Survived"],
            "other": [
                _label(name, m) + " (no test reached it)"
                for m in counted
                if m["status"] == "NoCoverage"
            ],
        }
    (STRYKER_OUT / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
    return 0, scores


def main(argv: list[str]) -> int:
    scope = _scope()
    js_scope = _js_scope()
    modules = argv or [*scope, *js_scope]
    unknown = [m for m in modules if m not in scope and m not in js_scope]
    if unknown:
        print(
            f"error: not in [tool.affidavit.mutation] scope: {', '.join(unknown)}", file=sys.stderr
        )
        return 2
    scripts = [m for m in modules if m in js_scope]
    modules = [m for m in modules if m in scope]
    scores: dict[str, dict[str, Any]] = {}
    if modules:
        code = _mutmut(modules, scope)
        if code:
            return code
        scores.update(_scores(modules))
        (STAGE / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
    if scripts:
        code, js_scores = _stryker(scripts)
        if code:
            return code
        scores.update(js_scores)
    _print(scores)
    return 0


def _mutmut(modules: list[str], scope: dict[str, list[str]]) -> int:
    tests = sorted({t for m in modules for t in scope[m]})
    _stage(modules, tests)
    mutmut = Path(sys.executable).parent / "mutmut"
    children = os.environ.get("MUTATION_CHILDREN", "1")  # the machine is shared: one by default
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    log = STAGE / "run.log"  # mutmut's progress (a spinner per step) goes here, not the terminal
    print(f"mutmut: {len(modules)} module(s), {len(tests)} test path(s); progress in {log}")
    with log.open("wb") as out:
        done = subprocess.run(
            [str(mutmut), "run", "--max-children", children],
            cwd=STAGE,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        return done.returncode
    return 0


def _print(scores: dict[str, dict[str, Any]]) -> None:
    total = sum(s["mutants"] for s in scores.values())
    killed = sum(s["killed"] for s in scores.values())
    print(f"\n{'module':<40} {'killed':>7} {'mutants':>8} {'score':>7}")
    for module, s in scores.items():
        print(f"{module:<40} {s['killed']:>7} {s['mutants']:>8} {s['score']:>6}%")
        for name in s["survived"]:
            print(f"    survived: {name}")
        for name in s["other"]:
            print(f"    not killed (no test reached it, or suspicious): {name}")
    if total:
        print(f"{'all':<40} {killed:>7} {total:>8} {100 * killed / total:>6.1f}%")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
