"""The pre-commit hooks, for real: ``pre-commit try-repo`` on temporary repos (issue 37 §3).

``affidavit-pins`` is ``language: python``: pre-commit builds its own virtualenv and installs
Affidavit from the hook repository, here a one-commit copy of this checkout (tests/checkout.py),
with the venv's ``affidavit`` kept off PATH to show nothing else is used. ``affidavit-pins-system``
runs the ``affidavit`` on PATH, from a repo holding only ``.pre-commit-hooks.yaml`` (no build, no
network). The consumer repo holds a contract and a pin, first good, then tampered.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.attest.publishing.test_publish_support import make_contract, write_json
from tests.checkout import copy_checkout, git_env
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN))
pytestmark = pytest.mark.skipif(
    PRE_COMMIT is None
    or shutil.which("git") is None
    or shutil.which("affidavit", path=str(BIN)) is None,
    reason="needs git, pre-commit and the affidavit command in the venv",
)


def _env(home: Path, *, affidavit_on_path: bool = True) -> dict[str, str]:
    # HOME is the test's (no user git configuration); pip keeps the user's cache, so pre-commit's
    # build of the python hook reuses the wheels already downloaded.
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    env = {**git_env(home), "PIP_CACHE_DIR": cache}
    system = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != str(BIN))
    env.update(
        PATH=f"{BIN}{os.pathsep}{system}" if affidavit_on_path else system,
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
    )
    return env


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=60)


def test_hook_definitions() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"affidavit-pins", "affidavit-pins-system"}
    assert hooks["affidavit-pins"]["language"] == "python"  # pre-commit builds the tool
    assert hooks["affidavit-pins-system"]["language"] == "system"
    for hook in hooks.values():
        assert hook["entry"] == "affidavit adapter pins check"
        assert hook["pass_filenames"] is False
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert '"$BIN/affidavit" "${args[@]}" --json' in action["runs"]["steps"][-1]["run"]


def _hook_repo(tmp_path: Path, hook: str, env: dict[str, str]) -> Path:
    if hook == "affidavit-pins":  # the whole checkout: pre-commit pip-installs it
        return copy_checkout(tmp_path / "hooks", commit=True)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    _git(hooks, env, "init", "-q")
    _git(hooks, env, "add", ".pre-commit-hooks.yaml")
    _git(hooks, env, "commit", "-q", "-m", "hooks")
    return hooks


@pytest.mark.parametrize("hook", ["affidavit-pins", "affidavit-pins-system"])
def test_pre_commit_try_repo_good_then_bad_pin(tmp_path: Path, hook: str) -> None:
    env = _env(tmp_path, affidavit_on_path=hook == "affidavit-pins-system")
    if hook == "affidavit-pins":  # only pre-commit's own build can run it
        assert shutil.which("affidavit", path=env["PATH"]) is None
    hooks = _hook_repo(tmp_path, hook, env)

    project = tmp_path / "project"
    project.mkdir()
    _git(project, env, "init", "-q")
    contract = make_contract()
    write_json(project / "contracts" / "a.json", contract)
    pin = {k: contract[k] for k in ("adapter_id", "adapter_version", "contract_hash")}
    write_json(project / "pinned_adapters.json", {"pinned_adapters": [pin]})
    _git(project, env, "add", "-A")

    def try_repo() -> subprocess.CompletedProcess[str]:
        assert PRE_COMMIT is not None
        return subprocess.run(
            [PRE_COMMIT, "try-repo", str(hooks), hook, "--all-files", "--verbose"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,  # the python hook builds a virtualenv: tens of seconds on a busy host
            check=False,
        )

    good = try_repo()
    assert good.returncode == 0, good.stdout + good.stderr
    assert "result: OK (exit 0)" in good.stdout

    tampered = json.loads((project / "contracts" / "a.json").read_text())
    tampered["output_fields"].append("signal_d")
    write_json(project / "contracts" / "a.json", tampered)
    _git(project, env, "add", "-A")
    bad = try_repo()
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "error: pin.check_failed:" in bad.stdout
    assert "contract_hash mismatch" in bad.stdout

    if hook == "affidavit-pins":
        return  # try-repo builds the python hook afresh each run (its own temporary store)
    (project / "contracts" / "a.json").unlink()  # issue 37 §1: a deleted contract fails too
    _git(project, env, "add", "-A")
    deleted = try_repo()
    assert deleted.returncode == 1, deleted.stdout + deleted.stderr
    assert "declaration missing" in deleted.stdout
