"""affidavit.verify imports no network code and nothing from attest, registry or cli.

Every module of the package, in every room (``json``, ``crypto``, ``anchor``, ``contracts``,
``bundles``, ``lineage``), is imported in a fresh interpreter (so nothing another test loaded can
hide an import), and ``sys.modules`` is checked afterwards. This sees what importing does; the
imports inside functions, which run later, are read from the source by tests/test_layering.py.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import affidavit.verify

from tests.test_layering import NETWORK

FORBIDDEN = (
    *NETWORK,
    "affidavit.attest",
    "affidavit.registry",
    "affidavit.cli",
)

_PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))
print(json.dumps(bad))
"""


def _modules() -> list[str]:
    names = ["affidavit.verify"]
    names += [
        info.name
        for info in pkgutil.walk_packages(affidavit.verify.__path__, prefix="affidavit.verify.")
    ]
    return sorted(names)


_SOURCE = Path(__file__).resolve().parents[2] / "verify"


def _source_modules() -> list[str]:
    """Every module under verify/ in the source tree (what the installed package must hold)."""
    names = []
    for path in _SOURCE.rglob("*.py"):
        parts = path.relative_to(_SOURCE).with_suffix("").parts
        names.append(
            ".".join(("affidavit.verify", *parts[: -1 if parts[-1] == "__init__" else None]))
        )
    return sorted(names)


def test_verify_package_has_many_modules() -> None:
    assert {"affidavit.verify.bundles.verifier", "affidavit.verify.contracts.policy"} <= set(
        _modules()
    )


def test_every_room_and_module_is_probed() -> None:
    rooms = {name.split(".")[2] for name in _modules() if name.count(".") >= 3}
    assert {"json", "crypto", "anchor", "contracts", "bundles", "lineage"} <= rooms
    # the installed package holds every source module (else: make install-dev)
    assert _modules() == _source_modules()


def test_no_network_or_upward_imports() -> None:
    code = f"FORBIDDEN = {FORBIDDEN!r}\n{_PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, *_modules()],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == []


def test_probe_can_fail() -> None:
    code = f"FORBIDDEN = {FORBIDDEN!r}\n{_PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, "http.client"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "http.client" in json.loads(done.stdout)
