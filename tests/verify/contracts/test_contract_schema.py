"""The compiled schema checks agree with jsonschema on the shipped draft-07 schema.

Hypothesis generates valid contracts and mutates them into invalid ones; for each, the set of
issue codes from ``schema_issues`` must equal the codes jsonschema reports (mapped by keyword and
path) plus the subset rule. The strategies here are shared with test_contract_peer.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from affidavit.specs import read_spec
from affidavit.verify.contracts.contract import contract_hashes
from affidavit.verify.contracts.schema import (
    REQUIRED_FIELDS,
    is_adapter_id,
    schema_issues,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.verify.contracts.schema_reference import reference_issue_codes

FAST = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---------------------------------------------------------------------------------------------
# Strategies

_LOWER = "abcdefghijklmnopqrstuvwxyz"
snake = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from(_LOWER),
    st.text(alphabet=_LOWER + "0123456789_", max_size=12),
)
semver = st.builds(lambda a, b, c: f"{a}.{b}.{c}", *(st.integers(min_value=0, max_value=300),) * 3)
adapter_id = st.builds(
    lambda head, rest: ".".join([head, *rest]),
    snake,
    st.lists(
        st.text(alphabet=_LOWER + "0123456789_", min_size=1, max_size=8), min_size=1, max_size=3
    ),
)
hex64 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
# Near misses: each is one character away from something the schema accepts.
near_miss = st.sampled_from(
    [
        "",
        "1.0",
        "1.0.0.0",
        "v1.0.0",
        "1.0.0\n",
        "01.2.x",
        "01.0.0",  # SemVer 2.0.0 §2: no leading zeros
        "1.00.0",
        "1.0.007",
        "0.0.0",
        "10.20.30",
        "Acme.eval",
        "acme",
        "acme.",
        "acme..x",
        "acme.eval\n",
        "Signal",
        "signal-a",
        "_signal",
        "signal a",
        "0" * 63,
        "A" * 64,
        "g" * 64,
        "0" * 64 + "\n",
        "0" * 65,
    ]
)


@st.composite
def valid_contracts(draw: st.DrawFn, *, seal: bool = True) -> dict[str, Any]:
    """A schema-valid AdapterContract, optionally with lifecycle, '_' and extra keys."""
    output = draw(st.lists(snake, min_size=1, max_size=6, unique=True))
    allowed = draw(st.lists(st.sampled_from(output), unique=True, max_size=len(output)))
    declaration: dict[str, Any] = {
        "adapter_contract_version": draw(st.sampled_from(["1.0.0", "1.0.0", "2.0.0"])),
        "adapter_id": draw(adapter_id),
        "adapter_version": draw(semver),
        "input_schema_version": draw(semver),
        "output_fields": output,
        "allowed_policy_fields": allowed,
        "validator_name": draw(st.sampled_from(["starter_boolean_validator"]) | snake),
        "validator_version": draw(semver),
    }
    if seal:
        hashes = contract_hashes(declaration)
        declaration["input_schema_hash"] = hashes.input_schema_hash
        declaration["contract_hash"] = hashes.contract_hash
    else:
        declaration["input_schema_hash"] = draw(hex64)
        declaration["contract_hash"] = draw(hex64)
    if draw(st.booleans()):
        declaration["_comment"] = draw(st.text(max_size=20))
    if draw(st.booleans()):
        declaration["status"] = draw(st.sampled_from(["active", "deprecated", "revoked"]))
    return declaration


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _mutate(draw: st.DrawFn, declaration: dict[str, Any]) -> Any:
    kind = draw(
        st.sampled_from(
            ["drop", "junk", "near_miss", "dup", "empty", "leak", "bad_item", "not_object"]
        )
    )
    key = draw(st.sampled_from(REQUIRED_FIELDS))
    output = _as_list(declaration.get("output_fields"))
    if kind == "drop":
        declaration.pop(key, None)
    elif kind == "junk":
        declaration[key] = draw(json_values)
    elif kind == "near_miss":
        declaration[key] = draw(near_miss)
    elif kind == "dup":
        declaration["output_fields"] = [*output, *output[:1]] or ["a", "a"]
    elif kind == "empty":
        declaration["output_fields"] = []
    elif kind == "leak":
        allowed = _as_list(declaration.get("allowed_policy_fields"))
        declaration["allowed_policy_fields"] = [*allowed, "zz_leak"]
    elif kind == "bad_item":
        field = draw(st.sampled_from(["output_fields", "allowed_policy_fields"]))
        declaration[field] = [*_as_list(declaration.get(field)), draw(near_miss | json_scalars)]
    else:
        return draw(st.one_of(st.lists(json_scalars, max_size=2), json_scalars))
    return declaration


@st.composite
def invalid_contracts(draw: st.DrawFn) -> Any:
    """A valid contract with one to three mutations (usually, not always, invalid)."""
    declaration: Any = draw(valid_contracts(seal=False))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if not isinstance(declaration, dict):
            break
        declaration = _mutate(draw, declaration)
    return declaration


any_contracts = st.one_of(valid_contracts(), invalid_contracts())


# ---------------------------------------------------------------------------------------------
# Agreement with jsonschema


def _codes(declaration: Any) -> frozenset[str]:
    return frozenset(issue.code for issue in schema_issues(declaration))


def _comparable(declaration: Any, ours: frozenset[str], reference: frozenset[str]) -> None:
    # uniqueItems in JSON Schema also counts repeated non-strings, which we report only as
    # bad_field_name (already an error): drop that one code when such items are present.
    if isinstance(declaration, dict):
        for name in ("output_fields", "allowed_policy_fields"):
            items = declaration.get(name)
            if isinstance(items, list) and any(not isinstance(i, str) for i in items):
                ours -= {"contract.duplicate_field"}
                reference -= {"contract.duplicate_field"}
    assert ours == reference, (json.dumps(declaration, default=str), ours, reference)


@FAST
@given(valid_contracts(seal=False))
def test_valid_contracts_pass_both(declaration: dict[str, Any]) -> None:
    assert schema_issues(declaration) == ()
    assert reference_issue_codes(declaration) == frozenset()


@settings(FAST, max_examples=600)
@given(invalid_contracts())
def test_invalid_contracts_get_the_same_codes(declaration: Any) -> None:
    _comparable(declaration, _codes(declaration), reference_issue_codes(declaration))


def test_the_schema_is_draft07_with_id_and_open_properties() -> None:
    schema = json.loads(read_spec("adapter-contract.schema.json"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"].endswith("adapter-contract.schema.json")
    assert schema["additionalProperties"] is True
    assert tuple(schema["required"]) == REQUIRED_FIELDS


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        ({"adapter_contract_version": "1.0"}, "contract.bad_semver"),
        ({"adapter_id": "acme"}, "contract.bad_adapter_id"),
        ({"adapter_id": 7}, "contract.bad_adapter_id"),
        ({"output_fields": {"a": 1}}, "contract.fields_not_array"),
        ({"output_fields": [], "allowed_policy_fields": []}, "contract.output_fields_empty"),
        ({"allowed_policy_fields": ["a", "a"]}, "contract.duplicate_field"),
        ({"allowed_policy_fields": [True]}, "contract.bad_field_name"),
        ({"validator_name": "x-y"}, "contract.bad_validator_name"),
        ({"contract_hash": None}, "contract.bad_hash_format"),
        ({"allowed_policy_fields": ["b"]}, "contract.policy_fields_not_subset"),
    ],
)
def test_each_rule_has_its_own_code(patch: dict[str, Any], code: str) -> None:
    declaration = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": "acme.x",
        "adapter_version": "1.0.0",
        "input_schema_version": "1.0.0",
        "input_schema_hash": "0" * 64,
        "output_fields": ["a"],
        "allowed_policy_fields": ["a"],
        "validator_name": "v",
        "validator_version": "1.0.0",
        "contract_hash": "0" * 64,
    }
    assert schema_issues(declaration) == ()
    declaration.update(patch)
    assert _codes(declaration) == {code}
    assert reference_issue_codes(declaration) == {code}


def test_trailing_newline_is_refused_like_ecma262() -> None:
    assert is_adapter_id("acme.x")
    assert not is_adapter_id("acme.x\n")


def test_verify_path_does_not_import_jsonschema() -> None:
    import subprocess
    import sys

    code = (
        "import sys, affidavit.verify.contracts.contract as c, affidavit.cli.adapter.authoring;"
        "c.lint_contract({});"
        "print('jsonschema' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "False"


@pytest.mark.parametrize("items", [["", ""], ["Bad", "Bad"], ["a b", "ok", "a b"]])
def test_a_name_listed_twice_is_a_duplicate_whether_or_not_it_is_snake_case(
    items: list[str],
) -> None:
    # JSON Schema's uniqueItems (draft-07 §6.4.5) holds for every item, valid or not: a bad
    # name listed twice is both codes, as the reference validator says.
    declaration = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": "acme.x",
        "adapter_version": "1.0.0",
        "input_schema_version": "1.0.0",
        "input_schema_hash": "0" * 64,
        "output_fields": items,
        "allowed_policy_fields": [],
        "validator_name": "v",
        "validator_version": "1.0.0",
        "contract_hash": "0" * 64,
    }
    assert {"contract.bad_field_name", "contract.duplicate_field"} <= _codes(declaration)
    assert _codes(declaration) == reference_issue_codes(declaration)
