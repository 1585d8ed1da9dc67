"""The reference check the compiled schema (verify/contracts/schema.py) must match: the shipped
``specs/adapter-contract.schema.json`` through jsonschema's Draft 7 validator, its errors mapped to
Affidavit's codes by keyword and path, plus the subset rule JSON Schema cannot express. jsonschema
is a dev dependency: an oracle, never imported by library code.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from affidavit.verify.contracts.schema import ARRAY_FIELDS, HASH_FIELDS, SEMVER_FIELDS

__all__ = ["reference_issue_codes", "reference_validator"]


_CODE_BY_FIELD: Final = {
    **dict.fromkeys(SEMVER_FIELDS, "contract.bad_semver"),
    "adapter_id": "contract.bad_adapter_id",
    "validator_name": "contract.bad_validator_name",
    **dict.fromkeys(HASH_FIELDS, "contract.bad_hash_format"),
}


@functools.cache
def reference_validator() -> Any:
    import jsonschema
    from affidavit.specs import read_spec
    from affidavit.verify.json.strict import loads

    schema = loads(read_spec("adapter-contract.schema.json"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def reference_issue_codes(declaration: Any) -> frozenset[str]:
    """The issue codes jsonschema finds with the shipped schema, plus the subset rule.

    Slow (imports jsonschema on first call): the oracle of the tests and benchmarks.
    """
    codes: set[str] = set()
    for error in reference_validator().iter_errors(declaration):
        path = list(error.absolute_path)
        codes.add(_reference_code(error.validator, path))
    if isinstance(declaration, dict):
        output = declaration.get("output_fields")
        allowed = declaration.get("allowed_policy_fields")
        if isinstance(output, list) and isinstance(allowed, list):
            strings = {x for x in allowed if isinstance(x, str)} - {
                x for x in output if isinstance(x, str)
            }
            if strings:
                codes.add("contract.policy_fields_not_subset")
    return frozenset(codes)


def _reference_code(keyword: str, path: list[Any]) -> str:
    if not path:
        return "contract.missing_field" if keyword == "required" else "contract.not_object"
    field = path[0]
    if field in ARRAY_FIELDS:
        if len(path) > 1:
            return "contract.bad_field_name"
        return {
            "type": "contract.fields_not_array",
            "minItems": "contract.output_fields_empty",
            "uniqueItems": "contract.duplicate_field",
        }.get(keyword, f"unmapped:{keyword}")
    return _CODE_BY_FIELD.get(str(field), f"unmapped:{field}")
