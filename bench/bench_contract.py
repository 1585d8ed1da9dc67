"""AdapterContract hashing and checking per second, against the peer and jsonschema, same run.

Targets: >= 100k contract hashes/s; >= 20k/s including the schema check.
Rows: both hashes (memoized and not) vs aigentsy_verify's recompute functions; the compiled schema
check vs the peer's hand-written one and jsonschema's Draft7Validator (pre-built); full lint
(schema + both hashes compared + lifecycle + validator lookup), memoized and not.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ops_per_second, table
from affidavit.specs import read_spec
from affidavit.verify.contracts.contract import (
    clear_caches,
    contract_hash,
    contract_hashes,
    input_schema_hash,
    lint_contract,
)
from affidavit.verify.contracts.schema import schema_issues
from affidavit.verify.json.strict import loads
from aigentsy_verify.adapter import (
    recompute_contract_hash,
    recompute_input_schema_hash,
    validate_adapter_contract_schema,
)

BASE = {
    "adapter_contract_version": "1.0.0",
    "adapter_id": "acme.eval_suite.v0",
    "adapter_version": "0.1.0",
    "input_schema_version": "1.0.0",
    "output_fields": ["all_tests_passed", "coverage_met", "regression_check_passed"],
    "allowed_policy_fields": ["all_tests_passed", "coverage_met", "regression_check_passed"],
    "validator_name": "starter_boolean_validator",
    "validator_version": "1.0.0",
}
CONTRACT = {
    **BASE,
    "input_schema_hash": input_schema_hash(BASE),
    "contract_hash": contract_hash(BASE),
    "status": "active",
}


def main() -> None:
    """Print the table."""
    import jsonschema  # the oracle (a dev dependency), for comparison

    draft7 = jsonschema.Draft7Validator(loads(read_spec("adapter-contract.schema.json")))
    assert lint_contract(CONTRACT).ok
    assert not list(draft7.iter_errors(CONTRACT))

    def uncached_hashes() -> object:
        return (contract_hash(CONTRACT), input_schema_hash(CONTRACT))

    def peer_hashes() -> object:
        return (recompute_contract_hash(CONTRACT), recompute_input_schema_hash(CONTRACT))

    def uncached_lint() -> object:
        return lint_contract(CONTRACT, cache=False)

    def cached_lint() -> object:
        return lint_contract(CONTRACT)

    peer = ops_per_second(peer_hashes)
    rows: list[tuple[str, float, str]] = [
        ("peer recompute_contract_hash + input_schema", peer, "1.00x peer")
    ]
    for name, fn in [
        ("both hashes, memoized (contract_hashes)", lambda: contract_hashes(CONTRACT)),
        ("both hashes, not memoized", uncached_hashes),
    ]:
        rate = ops_per_second(fn)
        rows.append((name, rate, f"{rate / peer:.2f}x peer"))
    draft = ops_per_second(lambda: list(draft7.iter_errors(CONTRACT)))
    rows.append(("schema check, jsonschema Draft7Validator (pre-built)", draft, "1.0x"))
    for name, fn in [
        ("schema check, compiled (schema_issues)", lambda: schema_issues(CONTRACT)),
        (
            "schema check, peer validate_adapter_contract_schema",
            lambda: validate_adapter_contract_schema(CONTRACT),
        ),
        (
            "schema check, jsonschema Draft7Validator (pre-built)",
            lambda: list(draft7.iter_errors(CONTRACT)),
        ),
        ("lint (schema + hashes + lifecycle), memoized", cached_lint),
        ("lint (schema + hashes + lifecycle), not memoized", uncached_lint),
    ]:
        rate = ops_per_second(fn)
        rows.append((name, rate, f"{rate / draft:.1f}x Draft7Validator"))
    clear_caches()
    print(table(["operation (528-byte contract)", "per second", "ratio"], rows))
    print("targets: hashing >= 100,000/s; hashing + schema check >= 20,000/s")


if __name__ == "__main__":
    main()
