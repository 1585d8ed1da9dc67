"""Test data for the registry: contracts and facts built from fixed values."""

from __future__ import annotations

from typing import Any

from affidavit.verify.contracts.contract import contract_hash, input_schema_hash
from affidavit.verify.json.canonical import jcs, sha256_hex


def contract(
    adapter_id: str = "acme.eval_suite.v0",
    version: str = "0.1.0",
    fields: tuple[str, ...] = ("signal_a", "signal_b"),
    **extra: Any,
) -> dict[str, Any]:
    """A lint-clean contract with recomputed hashes."""
    declaration: dict[str, Any] = {
        "adapter_contract_version": "1.0.0",
        "adapter_id": adapter_id,
        "adapter_version": version,
        "input_schema_version": "1.0.0",
        "output_fields": list(fields),
        "allowed_policy_fields": list(fields),
        "validator_name": "starter_boolean_validator",
        "validator_version": "1.0.0",
        **extra,
    }
    declaration["input_schema_hash"] = input_schema_hash(declaration)
    declaration["contract_hash"] = contract_hash(declaration)
    return declaration


def fact(
    entity: str, *, scope: str = "team", derived_from: list[str] | None = None, v: Any = "x"
) -> dict[str, Any]:
    """A fact with fixed values (ts, source, confidence)."""
    document: dict[str, Any] = {
        "entity": entity,
        "relation": "memory:role",
        "value": {"type": "text", "v": v},
        "source": "urn:test:source",
        "scope": scope,
        "confidence": 0.9,
        "ts": "2025-06-01T12:00:00Z",
    }
    if derived_from is not None:
        document["derived_from"] = derived_from
    return document


def fact_hash(document: dict[str, Any]) -> str:
    """FactHash recomputed independently of the server (docs/formats.md §5)."""
    keys = ("entity", "relation", "value", "scope", "source", "confidence", "ts")
    return sha256_hex(jcs({k: document[k] for k in keys}))
