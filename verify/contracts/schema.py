"""AdapterContract schema checks: compiled, and equal to the jsonschema reference (in the tests).

>>> from affidavit.verify.contracts.schema import schema_issues
>>> [issue.code for issue in schema_issues({"adapter_id": "Not-DNS"})][:2]
['contract.missing_field', 'contract.missing_field']
>>> schema_issues([])[0].code
'contract.not_object'

``schema_issues`` implements ``specs/adapter-contract.schema.json`` (docs/formats.md §2) without
importing jsonschema (docs/adr/0003), plus the one rule JSON Schema cannot express: allowed ⊆
output. Regexes are applied with ``fullmatch``, so a trailing newline never passes (the schema's
``not: {pattern: "\\n"}``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from affidavit.verify.json.forms import is_hex64

__all__ = [
    "ADAPTER_ID_PATTERN",
    "ARRAY_FIELDS",
    "HASH_FIELDS",
    "MAX_ADAPTER_ID",
    "MAX_FIELD_NAME",
    "MAX_SEMVER",
    "REQUIRED_FIELDS",
    "SEMVER_FIELDS",
    "SEMVER_PATTERN",
    "Issue",
    "is_adapter_id",
    "is_field_name",
    "is_semver",
    "schema_issues",
]

# docs/formats.md §2: required fields, in the order the schema lists them.
REQUIRED_FIELDS: Final = (
    "adapter_contract_version",
    "adapter_id",
    "adapter_version",
    "input_schema_version",
    "input_schema_hash",
    "output_fields",
    "allowed_policy_fields",
    "validator_name",
    "validator_version",
    "contract_hash",
)
SEMVER_FIELDS: Final = (
    "adapter_contract_version",
    "adapter_version",
    "input_schema_version",
    "validator_version",
)
HASH_FIELDS: Final = ("input_schema_hash", "contract_hash")
ARRAY_FIELDS: Final = ("output_fields", "allowed_policy_fields")

# docs/formats.md §2 patterns. SemVer 2.0.0 §2: X.Y.Z, non-negative integers without leading
# zeroes (else 1.0.0, 01.0.0 and 001.0.0 would be three versions that compare equal).
SEMVER_PATTERN: Final = r"(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)"
# docs/formats.md §2, docs/adr/0017: bounded so both stores can index them. An adapter_id is a
# DNS name (RFC 1035 §2.3.4), a version three 20-digit numbers (2^64 fits).
MAX_ADAPTER_ID: Final = 253
MAX_SEMVER: Final = 64
MAX_FIELD_NAME: Final = 128
ADAPTER_ID_PATTERN: Final = r"[a-z][a-z0-9_]*(?:\.[a-z0-9_][a-z0-9_]*)+"
_SEMVER: Final = re.compile(SEMVER_PATTERN)
_DIGITS_DOTTED: Final = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")  # only to word the message
_ADAPTER_ID: Final = re.compile(ADAPTER_ID_PATTERN)
_SNAKE: Final = re.compile(r"[a-z][a-z0-9_]*")


class Issue(NamedTuple):
    """One finding of a check: a stable ``code`` (specs/error-codes.json), a message, the field."""

    code: str
    message: str
    field: str = ""

    def to_json(self) -> dict[str, str]:
        """``{code, message, field}``."""
        return {"code": self.code, "message": self.message, "field": self.field}


def _bounded_match(value: Any, pattern: re.Pattern[str], limit: int) -> bool:
    return isinstance(value, str) and len(value) <= limit and pattern.fullmatch(value) is not None


def is_semver(value: Any) -> bool:
    """``MAJOR.MINOR.PATCH`` digits only, no leading zeros, at most 64 characters (docs/formats.md
    §2; SemVer 2.0.0 §2)."""
    return _bounded_match(value, _SEMVER, MAX_SEMVER)


def _semver_message(name: str, value: Any) -> str:
    if isinstance(value, str) and len(value) > MAX_SEMVER:
        return f"{name} is longer than {MAX_SEMVER} characters"
    if isinstance(value, str) and _DIGITS_DOTTED.fullmatch(value):
        return f"{name} is not MAJOR.MINOR.PATCH (SemVer 2.0.0 §2: no leading zeros)"
    return f"{name} is not MAJOR.MINOR.PATCH"


def is_adapter_id(value: Any) -> bool:
    """Reverse-DNS adapter id, e.g. ``acme.eval_suite.v0``, at most 253 characters
    (docs/formats.md §2)."""
    return _bounded_match(value, _ADAPTER_ID, MAX_ADAPTER_ID)


def _adapter_id_message(declaration: Mapping[str, Any]) -> str:
    value = declaration["adapter_id"]
    if isinstance(value, str) and len(value) > MAX_ADAPTER_ID:
        return f"adapter_id is longer than {MAX_ADAPTER_ID} characters"
    return "adapter_id is not reverse-DNS"


def is_field_name(value: Any) -> bool:
    """snake_case name ``^[a-z][a-z0-9_]*$``, at most 128 characters (field and validator
    names)."""
    return _bounded_match(value, _SNAKE, MAX_FIELD_NAME)


def schema_issues(declaration: Any) -> tuple[Issue, ...]:
    """Every issue of ``declaration`` against the AdapterContract schema plus allowed ⊆ output
    (empty when it conforms); never raises on any JSON value."""
    if not isinstance(declaration, Mapping):
        return (Issue("contract.not_object", "declaration is not a JSON object"),)
    issues: list[Issue] = [
        Issue("contract.missing_field", f"missing required field: {name}", name)
        for name in REQUIRED_FIELDS
        if name not in declaration
    ]
    issues.extend(
        Issue("contract.bad_semver", _semver_message(name, declaration[name]), name)
        for name in SEMVER_FIELDS
        if name in declaration and not is_semver(declaration[name])
    )
    if "adapter_id" in declaration and not is_adapter_id(declaration["adapter_id"]):
        issues.append(
            Issue("contract.bad_adapter_id", _adapter_id_message(declaration), "adapter_id")
        )
    for name in ARRAY_FIELDS:
        if name in declaration:
            issues.extend(_array_issues(name, declaration[name]))
    if "validator_name" in declaration and not is_field_name(declaration["validator_name"]):
        issues.append(
            Issue(
                "contract.bad_validator_name", "validator_name is not snake_case", "validator_name"
            )
        )
    issues.extend(
        Issue("contract.bad_hash_format", f"{name} is not 64 lowercase hex", name)
        for name in HASH_FIELDS
        if name in declaration and not is_hex64(declaration[name])
    )
    issues.extend(_subset_issues(declaration))
    return tuple(issues)


def _array_issues(name: str, value: Any) -> list[Issue]:
    if not isinstance(value, list):
        return [Issue("contract.fields_not_array", f"{name} is not an array", name)]
    issues: list[Issue] = []
    if name == "output_fields" and not value:
        issues.append(Issue("contract.output_fields_empty", "output_fields is empty", name))
    issues.extend(
        Issue("contract.bad_field_name", f"{name} entry {item!r} is not snake_case", name)
        for item in value
        if not is_field_name(item)
    )
    # draft-07 §6.4.5 uniqueItems holds for every item, a bad name too (the schema's rule).
    counts = Counter(item for item in value if isinstance(item, str))
    duplicates = [item for item, count in counts.items() if count > 1]
    if duplicates:
        issues.append(
            Issue(
                "contract.duplicate_field",
                f"{name} lists {', '.join(sorted(duplicates))} more than once",
                name,
            )
        )
    return issues


def _subset_issues(declaration: Mapping[str, Any]) -> list[Issue]:
    # docs/formats.md §2: allowed_policy_fields ⊆ output_fields (not expressible in JSON Schema).
    output = declaration.get("output_fields")
    allowed = declaration.get("allowed_policy_fields")
    if not isinstance(output, list) or not isinstance(allowed, list):
        return []
    declared = {item for item in output if isinstance(item, str)}
    leaked = sorted({item for item in allowed if isinstance(item, str) and item not in declared})
    if not leaked:
        return []
    return [
        Issue(
            "contract.policy_fields_not_subset",
            f"allowed_policy_fields not in output_fields: {', '.join(leaked)}",
            "allowed_policy_fields",
        )
    ]
