"""affidavit.verify opens no file and reads no clock (style.md rule 8, issue 22 "verify/ is pure").

Bytes, trust and time are the caller's arguments. Three checks keep it so:

- a scan of the source of every module of verify/ for what reads the world (files and folders,
  the clock, the environment, installed plugins) or keeps process state (``global``), with the
  few exceptions named and explained in :data:`ALLOWED`;
- tests/verify/conftest.py refuses file and wall-clock reads while verify's code is on the stack,
  in every test under tests/verify (the scan cannot see a read through a helper);
- here, the key paths (every vector bundle, anchor receipt, lineage store and contract) run with
  ``datetime.now`` and friends refused too, which the conftest cannot patch for the whole suite.
"""

from __future__ import annotations

import ast
import datetime
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify.anchor.receipt import verify_anchor_receipt
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.contracts.contract import lint_contract
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.errors import ParseError
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.audit import audit
from affidavit.verify.lineage.walk import JsonlFactSource, walk

from tests.conftest import VECTORS
from tests.verify.conftest import ImpureRead, guarded

VERIFY = Path(__file__).resolve().parents[2] / "verify"

# What reads the world, by the dotted name a call or an attribute is written with.
FORBIDDEN_CALLS = frozenset({
    "open", "io.open", "os.open", "os.fdopen", "Path", "PurePath", "os.walk", "os.listdir",
    "os.scandir", "os.stat", "os.lstat", "os.path.exists", "os.path.isfile", "os.path.isdir",
    "os.path.islink", "os.path.realpath", "os.path.getsize", "os.path.getmtime", "glob.glob",
    "time.time", "time.time_ns", "time.monotonic", "time.perf_counter", "time.localtime",
    "datetime.now", "datetime.utcnow", "datetime.today", "date.today", "datetime.datetime.now",
    "datetime.datetime.utcnow", "datetime.date.today", "os.getenv", "os.environ",
    "os.environ.get", "entry_points", "metadata.entry_points", "importlib.metadata.entry_points",
})  # fmt: skip
FORBIDDEN_METHODS = frozenset({"read_bytes", "read_text", "write_bytes", "write_text", "iterdir"})
FORBIDDEN_IMPORTS = frozenset({"pathlib", "glob", "tempfile", "shutil", "mmap", "os.path"})

# (module, name): why it is allowed.
ALLOWED = {
    ("verify/lineage/walk.py", "time.monotonic"): (
        "the default timer of WalkLimits.max_seconds, a work budget the caller sets; never a time "
        "of day, and read only when the caller bounds the time (the default is unbounded)"
    ),
}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def impure_uses(source: str) -> Iterator[tuple[int, str]]:
    """``(line, what)`` of every read of the world or global statement in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Global):
            yield node.lineno, "global " + ", ".join(node.names)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            modules = names if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module in FORBIDDEN_IMPORTS or module.split(".")[0] in FORBIDDEN_IMPORTS:
                    yield node.lineno, f"import {module}"
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in FORBIDDEN_CALLS:
                yield node.lineno, name
            elif isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS:
                yield node.lineno, "." + node.func.attr
        elif isinstance(node, ast.Attribute | ast.Name) and not isinstance(node.ctx, ast.Store):
            name = _dotted(node)
            # a clock passed as a value (a default argument, a callback) reads it all the same
            if name in {"time.time", "time.monotonic", "time.perf_counter", "os.environ"}:
                yield node.lineno, name


def test_no_module_of_verify_reads_files_clock_environment_or_plugins() -> None:
    found = []
    for path in sorted(VERIFY.rglob("*.py")):
        module = path.relative_to(VERIFY.parent).as_posix()
        for line, what in impure_uses(path.read_text(encoding="utf-8")):
            if (module, what) not in ALLOWED:
                found.append(f"{module}:{line}: {what}")
    assert found == []


def test_every_allowed_exception_is_still_there() -> None:
    for module, what in ALLOWED:
        source = (VERIFY.parent / module).read_text(encoding="utf-8")
        assert what in {w for _, w in impure_uses(source)}, (module, what)  # else: drop it


@pytest.mark.parametrize(
    "snippet",
    [
        "data = open('f', 'rb').read()",
        "import pathlib\n",
        "from pathlib import Path\n",
        "x = Path('f')",
        "text = folder.read_text()",
        "import os\nfor _ in os.walk('.'): pass",
        "import time\nnow = time.time()",
        "import time\ndef f(clock=time.monotonic): pass",
        "from datetime import datetime\nnow = datetime.now()",
        "import datetime\nnow = datetime.datetime.now()",
        "import os\nhome = os.environ['HOME']",
        "from importlib import metadata\npoints = metadata.entry_points(group='g')",
        "def f():\n    global STATE\n    STATE = 1",
    ],
)
def test_the_scan_can_fail(snippet: str) -> None:
    assert list(impure_uses(snippet)), snippet


def test_the_guard_can_fail() -> None:
    # What tests/verify/conftest.py wraps around open, os and time for every test here: a call
    # from a module of affidavit.verify is refused, the same call from a test is not.
    namespace: dict[str, Any] = {"__name__": "affidavit.verify.fake", "open": open, "time": time}
    with pytest.raises(ImpureRead):
        exec("open(__file__)", {**namespace, "__file__": __file__})
    with pytest.raises(ImpureRead):
        exec("time.time()", namespace)
    with open(__file__, "rb") as handle:  # the test's own read is allowed
        assert handle.read(3) == b'"""'
    assert time.time() > 0


# -- the key paths, with datetime's clock refused too -------------------------------------------


class _NoClock(datetime.datetime):
    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> _NoClock:
        raise ImpureRead("affidavit.verify read datetime.now")

    @classmethod
    def utcnow(cls) -> _NoClock:
        raise ImpureRead("affidavit.verify read datetime.utcnow")

    @classmethod
    def today(cls) -> _NoClock:
        raise ImpureRead("affidavit.verify read datetime.today")


class _NoToday(datetime.date):
    @classmethod
    def today(cls) -> _NoToday:
        raise ImpureRead("affidavit.verify read date.today")


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``datetime.now``/``utcnow``/``today`` and ``date.today`` refused (verify imports datetime
    inside the functions that need it, so it gets these); ``time.monotonic`` too.

    cryptography's Rust code looks ``datetime.datetime`` up once per process: it is made to look
    before the patch, so it keeps the real class (and later tests are not affected)."""
    from cryptography.x509 import verification

    verification.PolicyBuilder().time(datetime.datetime.now(datetime.UTC))
    monkeypatch.setattr(datetime, "datetime", _NoClock)
    monkeypatch.setattr(datetime, "date", _NoToday)
    monkeypatch.setattr(time, "monotonic", guarded("time.monotonic", time.monotonic))


def test_the_clock_guard_can_fail(no_clock: None) -> None:
    from datetime import UTC, date, datetime  # as verify imports it, inside a function

    for read in (lambda: datetime.now(UTC), datetime.utcnow, datetime.today, date.today):
        with pytest.raises(ImpureRead):
            read()
    assert datetime.fromisoformat("2026-01-02T03:04:05+00:00").year == 2026  # parsing is fine


def _manifest(folder: str) -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = json.loads((VECTORS / folder / "manifest.json").read_text())[
        "vectors"
    ]
    return vectors


def test_key_paths_read_no_clock(no_clock: None) -> None:
    bundles = _manifest("bundles")
    inputs = {v["input"]: (VECTORS / "bundles" / v["input"]).read_bytes() for v in bundles}
    verdicts = set()
    for vector in bundles:
        key = Ed25519PublicKey.from_b64(vector["trusted_public_key_base64"])
        result = BundleVerifier([key]).verify(loads(inputs[vector["input"]]), source="b")
        verdicts.add(result.verdict)
    assert {"verified", "failed"} <= verdicts  # the paths ran to the end, both ways
    anchors = [
        (
            json.loads((VECTORS / "anchor" / v["input"]).read_text()),
            [(VECTORS / "anchor" / p).read_bytes() for p in v["tsa_certs"]],
            [(VECTORS / "anchor" / p).read_bytes() for p in v["ca_certs"]],
        )
        for v in _manifest("anchor")
    ]
    anchored = [verify_anchor_receipt(r, tsa_certs=t, ca_certs=c).verified for r, t, c in anchors]
    assert sorted(set(anchored)) == [False, True]
    for name in ("facts.jsonl", "signed.jsonl", "cycle.jsonl"):
        data = (VECTORS / "lineage" / name).read_bytes()
        assert audit(JsonlFactSource(data, name)).facts > 0
    walks = [v for v in _manifest("lineage") if "root" in v]
    for vector in walks:  # unbounded, as the command line walks: no timer either
        data = (VECTORS / "lineage" / vector["input"]).read_bytes()
        assert walk(JsonlFactSource(data, vector["input"]), vector["root"]).nodes
    linted = set()
    for path in sorted((VECTORS / "contracts").glob("*.json")):
        try:
            document = loads(path.read_bytes())
        except ParseError:
            continue  # the vectors of the strict parser
        if isinstance(document, dict) and "output_fields" in document:
            linted.add(lint_contract(document, cache=False).ok)
    assert linted == {False, True}
