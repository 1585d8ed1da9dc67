"""lint_contract: hashes recomputed and compared, lifecycle and '_' keys outside the hashes,
warnings, memoization that never conflates distinct JSON values, and raise_for_errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from affidavit.verify.contracts.contract import (
    LIFECYCLE_FIELDS,
    clear_caches,
    contract_hash,
    contract_hashes,
    input_schema_hash,
    lint_contract,
)
from aigentsy_verify.adapter import recompute_contract_hash
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.verify.contracts.test_contract_golden import BASE, VALID, sealed
from tests.verify.contracts.test_contract_schema import FAST, valid_contracts

CHECK_CONTRACT_HASH = "8be7185ecdce9cf43f8f1084cd37205eccf669fc47d73356c438cbf7b490b7af"
CHECK_INPUT_SCHEMA_HASH = "b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0"


def test_check_value_from_formats_md() -> None:
    report = lint_contract(VALID)
    assert report.ok
    assert report.contract_hash == CHECK_CONTRACT_HASH
    assert report.input_schema_hash == CHECK_INPUT_SCHEMA_HASH
    assert report.adapter_id == "acme.eval_suite.v0"
    report.raise_for_errors()  # ok: returns


@pytest.mark.parametrize("field", [*LIFECYCLE_FIELDS, "_comment", "_x", "extra_key"])
def test_fields_outside_both_hashes(field: str) -> None:
    changed = {**VALID, field: "acme.other.v0@9.9.9"}
    hashes = contract_hashes(changed)
    assert hashes.contract_hash == CHECK_CONTRACT_HASH
    assert hashes.input_schema_hash == CHECK_INPUT_SCHEMA_HASH


@pytest.mark.parametrize(
    ("field", "value", "input_schema_changes"),
    [
        ("adapter_contract_version", "1.0.1", False),
        ("adapter_id", "acme.other", False),
        ("adapter_version", "0.1.1", False),
        ("input_schema_version", "1.0.1", True),
        ("output_fields", ["signal_a", "signal_b", "signal_c", "signal_d"], True),
        ("allowed_policy_fields", ["signal_a"], False),
        ("validator_name", "other_validator", True),
        ("validator_version", "1.0.1", True),
    ],
)
def test_every_hashed_field_changes_the_hash(
    field: str, value: Any, input_schema_changes: bool
) -> None:
    changed = {**VALID, field: value}
    report = lint_contract(changed)
    assert "contract.hash_mismatch" in report.error_codes
    assert report.contract_hash == recompute_contract_hash(changed)
    assert ("contract.input_schema_hash_mismatch" in report.error_codes) is input_schema_changes
    with raises_code(report.error_codes[0]) as caught:
        report.raise_for_errors()
    assert caught.value.exit_code == 1


def test_neither_hash_covers_the_other() -> None:
    assert contract_hash({**BASE, "input_schema_hash": "x"}) == CHECK_CONTRACT_HASH
    assert input_schema_hash({**BASE, "contract_hash": "x"}) == CHECK_INPUT_SCHEMA_HASH


def test_missing_values_hash_as_empty() -> None:
    assert contract_hash({}) == contract_hash(
        {"adapter_contract_version": "1.0.0", "adapter_id": "", "output_fields": []}
    )
    assert contract_hash({}) == recompute_contract_hash({})


@pytest.mark.parametrize(("a", "b"), [(1, 1.0), (1, True), (0, False), ("1", 1)])
def test_memo_never_conflates_python_equal_values(a: Any, b: Any) -> None:
    clear_caches()
    left = contract_hashes({**BASE, "adapter_id": a})
    right = contract_hashes({**BASE, "adapter_id": b})
    assert left != right
    assert right.contract_hash == recompute_contract_hash({**BASE, "adapter_id": b})
    # The lint memo is keyed on canonical bytes: same-looking values keep their own reports.
    lint_a = lint_contract({**VALID, "adapter_version": a})
    lint_b = lint_contract({**VALID, "adapter_version": b})
    assert lint_a.contract_hash != lint_b.contract_hash


@settings(FAST, max_examples=100)
@given(valid_contracts(), st.booleans())
def test_cached_and_uncached_reports_agree(declaration: dict[str, Any], first: bool) -> None:
    if first:
        clear_caches()
    before = copy.deepcopy(declaration)
    assert lint_contract(declaration) == lint_contract(declaration, cache=False)
    assert lint_contract(declaration).ok
    assert declaration == before  # lint never mutates its input


def test_cache_is_bounded() -> None:
    from affidavit.verify.contracts import contract

    clear_caches()
    for i in range(contract._CACHE_LIMIT + 10):
        lint_contract({**VALID, "adapter_version": f"0.0.{i}"})
    assert len(contract._LINT_CACHE) <= contract._CACHE_LIMIT
    assert len(contract._HASH_CACHE) <= contract._CACHE_LIMIT


def test_warnings_do_not_fail_and_have_codes() -> None:
    report = lint_contract(
        sealed({**BASE, "adapter_contract_version": "2.0.0", "validator_name": "acme_v"})
        | {"replaced_by": "acme.eval_suite.v0@0.2.0"}
    )
    assert report.ok
    assert [w.code for w in report.warnings] == [
        "validator.unknown",
        "contract.unknown_contract_version",
        "contract.superseded",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "retired"),
        ("supersedes", "acme.eval_suite.v0"),
        ("replaced_by", 3),
        ("min_verifier_version", "1.6"),
        ("published_at", "yesterday"),
        ("published_at", "2025-13-45T00:00:00Z"),
        ("distribution_channel", "pypi"),
    ],
)
def test_malformed_lifecycle_fields_are_errors(field: str, value: Any) -> None:
    report = lint_contract({**VALID, field: value})
    assert report.error_codes == ("contract.lifecycle_invalid",)
    assert report.errors[0].field == field
    assert report.contract_hash == CHECK_CONTRACT_HASH


def test_non_object_declaration() -> None:
    report = lint_contract(["not", "an", "object"])
    assert report.error_codes == ("contract.not_object",)
    assert report.contract_hash == ""
    with raises_code("contract.not_object"):
        report.raise_for_errors()


def test_to_json_keeps_the_peer_keys_and_declared_hashes() -> None:
    tampered = {**VALID, "contract_hash": "f" * 64}
    document = lint_contract(tampered).to_json()
    assert list(document)[:6] == [
        "ok",
        "errors",
        "warnings",
        "adapter_id",
        "contract_hash",
        "input_schema_hash",
    ]
    assert document["contract_hash"] == "f" * 64  # as declared, like the peer
    assert document["recomputed_contract_hash"] == CHECK_CONTRACT_HASH
    assert document["error_details"][0]["code"] == "contract.hash_mismatch"
