"""Budgets for slow property tests: the full sweep in CI (``CI=true``, which .ci/run and hosted
CI set), a smaller one on a developer's machine, so ``make test`` stays quick there and CI still
runs everything (issue 23).

Hypothesis tests are budgeted by their number of examples, never by the wall clock: the suite's
profile (loaded by tests/conftest.py before any test module is imported) has no per-example
deadline and no "too slow" health check, both of which a busy shared machine trips at random
(issue 36). A failure prints the ``@reproduce_failure`` blob, so it replays.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
PROFILE = "affidavit"


def budget(local: int, ci: int) -> int:
    """``ci`` under CI, else ``local``."""
    return ci if IN_CI else local


def load_hypothesis_profile() -> None:
    """Register and load the suite's Hypothesis profile (idempotent).

    A test's own ``@settings(max_examples=...)`` keeps everything it does not name from this
    profile (Hypothesis takes unnamed values from the loaded profile)."""
    settings.register_profile(
        PROFILE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=True,
    )
    settings.load_profile(PROFILE)
