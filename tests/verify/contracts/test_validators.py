"""The validator registry and the boolean family (seed 003 "Fail-closed defaults")."""

from __future__ import annotations

from typing import Any

import pytest
from affidavit.verify import errors
from affidavit.verify.contracts.validators import (
    BooleanValidator,
    ValidationResult,
    Validator,
    ValidatorRegistry,
    default_registry,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import raises_code
from tests.verify.contracts.test_contract_schema import FAST, json_values

CONTRACT: dict[str, Any] = {
    "output_fields": ["tests_passed", "coverage_met", "reviewer_ok"],
    "allowed_policy_fields": ["tests_passed", "reviewer_ok"],
    "validator_name": "starter_boolean_validator",
    "validator_version": "1.0.0",
}
GOOD = {"tests_passed": True, "coverage_met": False, "reviewer_ok": False}


def _boolean() -> Validator:
    validator = default_registry.get("starter_boolean_validator", "1.0.0")
    assert validator is not None
    return validator


def test_accepts_booleans_and_emits_only_allowed_fields() -> None:
    result = _boolean().validate({**GOOD, "extra": 5}, CONTRACT)
    assert result == ValidationResult("accepted", {"reviewer_ok": False, "tests_passed": True}, ())
    assert result.accepted
    assert result.validation_result == "passed"
    assert list(result.normalized_policy_inputs) == ["reviewer_ok", "tests_passed"]


@pytest.mark.parametrize("bad", [1, 0, "true", None, [True], {"v": True}, 1.0])
def test_a_non_boolean_rejects_everything(bad: Any) -> None:
    result = _boolean().validate({**GOOD, "coverage_met": bad}, CONTRACT)
    assert result.status == "rejected"
    assert result.normalized_policy_inputs == {}
    assert result.errors == ("coverage_met: not a boolean",)
    assert result.validation_result == "rejected"


def test_a_missing_field_rejects() -> None:
    result = _boolean().validate({"tests_passed": True}, CONTRACT)
    assert result.errors == ("coverage_met: missing", "reviewer_ok: missing")
    assert result.normalized_policy_inputs == {}


@pytest.mark.parametrize(
    "contract",
    [
        {**CONTRACT, "validator_name": "other_validator"},
        {**CONTRACT, "validator_version": "2.0.0"},
        {**CONTRACT, "output_fields": "tests_passed"},
        {**CONTRACT, "output_fields": []},
        {**CONTRACT, "allowed_policy_fields": None},
        ["not", "a", "mapping"],
    ],
)
def test_a_malformed_or_foreign_contract_rejects(contract: Any) -> None:
    result = _boolean().validate(GOOD, contract)
    assert result.status == "rejected"
    assert result.normalized_policy_inputs == {}


def test_an_allowed_field_not_in_output_never_leaks() -> None:
    contract = {**CONTRACT, "allowed_policy_fields": ["tests_passed", "secret"]}
    result = _boolean().validate({**GOOD, "secret": True}, contract)
    assert result.normalized_policy_inputs == {"tests_passed": True}


@FAST
@given(st.dictionaries(st.sampled_from([*CONTRACT["output_fields"], "x"]), json_values))
def test_never_raises_and_fails_closed(raw: dict[str, Any]) -> None:
    result = _boolean().validate(raw, CONTRACT)
    allowed = set(CONTRACT["allowed_policy_fields"])
    assert set(result.normalized_policy_inputs) <= allowed
    if result.status == "rejected":
        assert result.normalized_policy_inputs == {}
        assert result.errors
    else:
        assert all(type(raw[f]) is bool for f in CONTRACT["output_fields"])
        assert result.to_json()["normalized_policy_inputs"] == {f: raw[f] for f in sorted(allowed)}


def test_registry_lookup_by_name_and_version() -> None:
    assert ("starter_boolean_validator", "1.0.0") in default_registry.known()
    assert default_registry.get("starter_boolean_validator", "9.9.9") is None
    assert default_registry.get("no_such_validator_anywhere", "1.0.0") is None
    assert isinstance(_boolean(), BooleanValidator)


def test_a_sealed_registry_knows_only_its_families() -> None:
    registry = ValidatorRegistry({})
    assert registry.get("starter_boolean_validator", "1.0.0") is None
    assert registry.known() == ()


def test_no_entry_point_is_read_unless_the_caller_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    # A verdict must not depend on what happens to be installed (issue 22): the library's
    # registries (the default registry, BundleVerifier, lint_contract) know the built-ins only.
    import importlib.metadata

    from affidavit.verify.contracts import validators

    def scan(**_: Any) -> list[Any]:
        raise AssertionError("entry points were read")

    monkeypatch.setattr(importlib.metadata, "entry_points", scan)
    for registry in (ValidatorRegistry(), validators.default_registry):
        assert registry.get("plugin_validator", "1.0.0") is None
        assert registry.known() == (("starter_boolean_validator", "1.0.0"),)
    assert default_registry.get("plugin_validator", "1.0.0") is None
    assert default_registry.known() == (("starter_boolean_validator", "1.0.0"),)


def test_a_broken_family_is_a_load_error() -> None:
    def broken() -> list[Validator]:
        raise RuntimeError("boom")

    def impostor() -> list[Validator]:
        return [BooleanValidator("other_name", "1.0.0")]

    registry = ValidatorRegistry({"x_validator": broken, "y_validator": impostor})
    with raises_code("validator.load_failed"):
        registry.get("x_validator", "1.0.0")
    with raises_code("validator.load_failed"):
        registry.get("y_validator", "1.0.0")


class _BrokenPlugins:
    """Plug-ins offering ``plugin_validator`` whose family does not load (the
    :class:`~affidavit.verify.contracts.validators.ValidatorPlugins` a caller passes)."""

    def names(self) -> list[str]:
        return ["plugin_validator"]

    def family(self, name: str) -> None:
        raise errors.ContractError("validator.load_failed", f"{name}: could not be loaded")


def test_lint_turns_a_load_failure_into_a_warning() -> None:
    from affidavit.verify.contracts import contract

    from tests.verify.contracts.test_contract_golden import BASE, sealed

    declaration = sealed({**BASE, "validator_name": "plugin_validator"})
    registry = ValidatorRegistry(plugins=_BrokenPlugins())
    report = contract.lint_contract(declaration, validators=registry)
    assert report.ok
    assert [w.code for w in report.warnings] == ["validator.unknown"]
    assert "could not be loaded" in report.warnings[0].message
