"""Differential tests against the peer (aigentsy-verify 1.6.3, aigentsy 1.17.2) as an oracle.

1. On 2,000 generated contracts (valid and mutated), both hashes equal
   ``aigentsy_verify.adapter.recompute_contract_hash`` / ``recompute_input_schema_hash``.
2. Schema verdicts equal ``validate_adapter_contract_schema`` wherever the peer defines the case:
   it raises TypeError on unhashable or unorderable array items, and its Python ``$`` accepts a
   trailing newline that ECMA-262 (and we) refuse, and its pattern allows the leading zeros
   SemVer 2.0.0 §2 forbids; those inputs are excluded, and for them we assert our refusal.
3. On the sample files in vectors/contracts/, ``affidavit adapter lint`` (in-process) and
   ``aigentsy adapter lint`` (a subprocess) report the same ok, adapter_id and hashes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.contracts.contract import contract_hashes
from affidavit.verify.contracts.schema import SEMVER_FIELDS, is_semver, schema_issues
from aigentsy_verify.adapter import (
    recompute_contract_hash,
    recompute_input_schema_hash,
    validate_adapter_contract_schema,
)
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from tests.conftest import VECTORS
from tests.verify.contracts.test_contract_golden import CASES, DIVERGES_FROM_PEER
from tests.verify.contracts.test_contract_schema import any_contracts

# 2,000 examples must stay cheap enough for CI: no shrinking database, fixed seed.
DIFFERENTIAL = settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_SCHEMA_STRINGS = (
    "adapter_contract_version",
    "adapter_id",
    "adapter_version",
    "input_schema_version",
    "validator_name",
    "validator_version",
    "input_schema_hash",
    "contract_hash",
)


def _has_leading_zero_version(declaration: dict[str, Any]) -> bool:
    # SemVer 2.0.0 §2 forbids leading zeros; the peer's pattern [0-9]+ allows them.
    return any(
        isinstance(v, str) and re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", v) and not is_semver(v)
        for v in (declaration.get(name) for name in SEMVER_FIELDS)
    )


def _has_trailing_newline(declaration: dict[str, Any]) -> bool:
    values = [declaration.get(name) for name in _SCHEMA_STRINGS]
    for name in ("output_fields", "allowed_policy_fields"):
        items = declaration.get(name)
        if isinstance(items, list):
            values += items
    return any(isinstance(v, str) and v.endswith("\n") for v in values)


@DIFFERENTIAL
@given(any_contracts)
def test_hashes_and_schema_verdicts_match_the_peer(declaration: Any) -> None:
    ours_ok = schema_issues(declaration) == ()
    try:
        peer_ok, _ = validate_adapter_contract_schema(declaration)
    except TypeError:  # the peer cannot handle unhashable items: a case it does not define
        peer_ok = None
    if isinstance(declaration, dict) and _has_trailing_newline(declaration):
        assert not ours_ok  # ECMA-262 '$': a look-alike value with a newline never passes
    elif isinstance(declaration, dict) and _has_leading_zero_version(declaration):
        assert not ours_ok  # SemVer 2.0.0 §2: 01.0.0 would compare equal to 1.0.0
    elif peer_ok is not None:
        assert ours_ok is peer_ok, json.dumps(declaration, default=str)
    if not isinstance(declaration, dict):
        return
    try:
        expected = (recompute_contract_hash(declaration), recompute_input_schema_hash(declaration))
    except TypeError:  # the peer cannot sort mixed-type arrays: undefined there
        return
    hashes = contract_hashes(declaration)
    assert (hashes.contract_hash, hashes.input_schema_hash) == expected


def _peer_cli() -> Path:
    script = Path(sys.executable).parent / "aigentsy"
    if not script.exists():
        pytest.skip(f"peer CLI not installed at {script}")
    return script


SAMPLES = sorted(
    case_id
    for case_id in CASES
    if not case_id.startswith("reject-strict-")  # the peer's json.loads is not strict
    and case_id != "reject-not-object"  # the peer crashes on a non-object
    and case_id not in DIVERGES_FROM_PEER
)


@pytest.mark.parametrize("case_id", SAMPLES)
def test_lint_cli_matches_the_peer_cli(case_id: str) -> None:
    path = VECTORS / "contracts" / f"{case_id}.json"
    peer = subprocess.run(
        [str(_peer_cli()), "adapter", "lint", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    ours = CliRunner().invoke(affidavit, ["adapter", "lint", str(path), "--json"])
    peer_doc, our_doc = json.loads(peer.stdout), json.loads(ours.stdout)
    keys = ("ok", "adapter_id", "contract_hash", "input_schema_hash")
    assert {k: our_doc[k] for k in keys} == {k: peer_doc[k] for k in keys}
    assert ours.exit_code == peer.returncode
