"""A throwaway copy of this checkout, as a consumer's CI sees the project (issue 37).

The GitHub Action runs from its own checkout (``$GITHUB_ACTION_PATH``) and pre-commit clones the
hook repository; tests do the same against a copy of the tracked files as they are in the working
tree (uncommitted edits included), so the project's own .git and build folders are never written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT

__all__ = ["copy_checkout", "git_env"]


def git_env(home: Path) -> dict[str, str]:
    """An environment for git and pre-commit that reads no user or system configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        HOME=str(home),
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def copy_checkout(dest: Path, *, commit: bool = False) -> Path:
    """Copy every file git would track (uncommitted and new ones included) to ``dest``; with
    ``commit``, make it a one-commit git repository (what ``pre-commit try-repo`` needs)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if commit:
        env = git_env(dest.parent)
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "checkout"]):
            subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True,
                           timeout=120)  # fmt: skip
    return dest
