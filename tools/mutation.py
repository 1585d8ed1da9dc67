"""``make mutation``: mutation testing of the modules that decide a verdict (issue 36), with
mutmut 3. Never part of ``make test``; docs/testing.md keeps the scores and the survivors.

Usage: ``python tools/mutation.py [MODULE ...]``, MODULE as ``verify/crypto/merkle.py``; without
one, every module of the scope (pyproject.toml ``[tool.affidavit.mutation]``: each module with
the tests that judge it). Prints the score per module (killed of all mutants, and each survivor
by name) and writes it to ``build/mutation/scores.json``.

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


def main(argv: list[str]) -> int:
    scope = _scope()
    modules = argv or list(scope)
    unknown = [m for m in modules if m not in scope]
    if unknown:
        print(
            f"error: not in [tool.affidavit.mutation] scope: {', '.join(unknown)}", file=sys.stderr
        )
        return 2
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
    scores = _scores(modules)
    (STAGE / "scores.json").write_text(json.dumps(scores, indent=2) + "\n")
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
