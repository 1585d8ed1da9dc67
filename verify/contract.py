"""AdapterContract hashes (formats.md §2; seed 003 "Versioning, distribution, and replay").

>>> from affidavit.verify.contract import contract_hash, input_schema_hash
>>> declaration = {
...     "adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0",
...     "input_schema_version": "1.0.0", "validator_name": "starter_boolean_validator",
...     "validator_version": "1.0.0", "output_fields": ["signal_a", "signal_b", "signal_c"],
...     "allowed_policy_fields": ["signal_a", "signal_b", "signal_c"],
... }
>>> contract_hash(declaration)
'8be7185ecdce9cf43f8f1084cd37205eccf669fc47d73356c438cbf7b490b7af'
>>> input_schema_hash(declaration)
'b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0'

Both hashes are ``H(py-compact(...))`` over a fixed key set; a missing string counts as ``""``
and a missing array as ``[]``. Neither covers the other, lifecycle fields, or ``_``-keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from affidavit.verify.canonical import py_compact, sha256_hex

__all__ = [
    "CONTRACT_HASH_FIELDS",
    "INPUT_SCHEMA_HASH_FIELDS",
    "LIFECYCLE_FIELDS",
    "contract_hash",
    "contract_hash_body",
    "input_schema_hash",
    "input_schema_hash_body",
]

# formats.md §2: the exact key sets each hash covers.
CONTRACT_HASH_FIELDS: Final = (
    "adapter_contract_version",
    "adapter_id",
    "adapter_version",
    "input_schema_version",
    "output_fields",
    "allowed_policy_fields",
    "validator_name",
    "validator_version",
)
INPUT_SCHEMA_HASH_FIELDS: Final = (
    "input_schema_version",
    "output_fields",
    "validator_name",
    "validator_version",
)
# seed 003: discovery-only fields, explicitly outside both hashes.
LIFECYCLE_FIELDS: Final = (
    "status",
    "supersedes",
    "replaced_by",
    "published_at",
    "min_verifier_version",
    "distribution_channel",
)
DEFAULT_CONTRACT_VERSION: Final = "1.0.0"


def _sorted_list(value: Any) -> list[Any]:
    # As the peer does: a missing or empty (falsy) array is [], anything iterable is sorted.
    if not value:
        return []
    items = list(value) if isinstance(value, list | tuple | str) else [value]
    try:
        return sorted(items)
    except TypeError:  # mixed types cannot come from a schema-valid contract; stay deterministic
        return sorted(items, key=_sort_key)


def _sort_key(item: Any) -> tuple[str, str]:
    # Arrays that pass the schema hold strings only; mixed junk still sorts deterministically.
    return (
        (type(item).__name__, item) if isinstance(item, str) else (type(item).__name__, repr(item))
    )


def _text(declaration: Mapping[str, Any], key: str, default: str = "") -> Any:
    # Missing counts as "" (formats.md §2); a present value, even null, is hashed as it is.
    return declaration.get(key, default)


def input_schema_hash_body(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``input_schema_hash`` covers."""
    return {
        "input_schema_version": _text(declaration, "input_schema_version"),
        "output_fields": _sorted_list(declaration.get("output_fields")),
        "validator_name": _text(declaration, "validator_name"),
        "validator_version": _text(declaration, "validator_version"),
    }


def contract_hash_body(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``contract_hash`` covers."""
    return {
        "adapter_contract_version": _text(
            declaration, "adapter_contract_version", DEFAULT_CONTRACT_VERSION
        ),
        "adapter_id": _text(declaration, "adapter_id"),
        "adapter_version": _text(declaration, "adapter_version"),
        "input_schema_version": _text(declaration, "input_schema_version"),
        "output_fields": _sorted_list(declaration.get("output_fields")),
        "allowed_policy_fields": _sorted_list(declaration.get("allowed_policy_fields")),
        "validator_name": _text(declaration, "validator_name"),
        "validator_version": _text(declaration, "validator_version"),
    }


def input_schema_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``input_schema_hash`` from a declaration (formats.md §2)."""
    return sha256_hex(py_compact(input_schema_hash_body(declaration)))


def contract_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``contract_hash`` from a declaration (formats.md §2)."""
    return sha256_hex(py_compact(contract_hash_body(declaration)))
