"""The stamped bundles the bundle tests start from (tests/verify/bundles/test_bundle_support.py):
one accepted outcome, without and with per-actor signatures. A test file that needs another
``plain`` (test_stricter_than_peer.py: four leaves) defines its own, which wins."""

from __future__ import annotations

from typing import Any

import pytest

from tests.verify.bundles.test_bundle_support import OUTPUTS, stamp


@pytest.fixture(scope="module")
def plain() -> dict[str, Any]:
    return stamp({"accepted": OUTPUTS["accepted"]})["accepted"]


@pytest.fixture(scope="module")
def signed() -> dict[str, Any]:
    return stamp({"accepted": OUTPUTS["accepted"]}, actor=True)["accepted"]
