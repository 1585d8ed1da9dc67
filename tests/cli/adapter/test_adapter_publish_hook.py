"""The ``affidavit-pins`` pre-commit hook, for real: ``pre-commit try-repo`` on temporary repos.

The hook repository is a temporary git repo holding a copy of ``.pre-commit-hooks.yaml`` (so the
project's own .git is never written). ``language: system`` runs ``affidavit`` from PATH: no
network. The consumer repo holds a contract and a pin, first good, then tampered.
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
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN))
pytestmark = pytest.mark.skipif(
    PRE_COMMIT is None
    or shutil.which("git") is None
    or shutil.which("affidavit", path=str(BIN)) is None,
    reason="needs git, pre-commit and the affidavit command in the venv",
)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=60)


def test_hook_definition() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "affidavit-pins")
    assert hook["language"] == "system"
    assert hook["entry"] == "affidavit adapter pins check"
    assert hook["pass_filenames"] is False
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert '"$BIN/affidavit" "${args[@]}" --json' in action["runs"]["steps"][-1]["run"]


def test_pre_commit_try_repo_good_then_bad_pin(tmp_path: Path) -> None:
    env = _env(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    _git(hooks, env, "init", "-q")
    _git(hooks, env, "add", ".pre-commit-hooks.yaml")
    _git(hooks, env, "commit", "-q", "-m", "hooks")

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
            [PRE_COMMIT, "try-repo", str(hooks), "affidavit-pins", "--all-files", "--verbose"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
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
