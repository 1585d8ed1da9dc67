"""Budgets for slow property tests: the full sweep in CI (``CI=true``, which .ci/run and hosted
CI set), a smaller one on a developer's machine, so ``make test`` stays quick there and CI still
runs everything (issue 23)."""

from __future__ import annotations

import os

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def budget(local: int, ci: int) -> int:
    """``ci`` under CI, else ``local``."""
    return ci if IN_CI else local
