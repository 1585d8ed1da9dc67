"""Canonical encodings: Affidavit's jcs vs the rfc8785 package, measured in the same run.

Byte-identical to rfc8785.dumps; both are pure Python. Since the plain encoders
(docs/adr/0021-plain-encoders.md) jcs has no C-encoder path: it is no longer 2x rfc8785 on
every document (about 3x on a contract, 1.3-2x on the 4 KiB bundle-like document, 1-1.2x with
floats, measured in that ADR). Run it against an older tree by putting that tree first on
PYTHONPATH (as the ADR did, back to back).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ops_per_second, table
from affidavit.verify.json.canonical import jcs, py_compact
from affidavit.verify.json.strict import loads

CONTRACT = {
    "adapter_contract_version": "1.0.0",
    "adapter_id": "acme.eval_suite.v0",
    "adapter_version": "0.1.0",
    "input_schema_version": "1.0.0",
    "input_schema_hash": "b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0",
    "output_fields": ["all_tests_passed", "coverage_met", "regression_check_passed"],
    "allowed_policy_fields": ["all_tests_passed", "coverage_met", "regression_check_passed"],
    "validator_name": "starter_boolean_validator",
    "validator_version": "1.0.0",
    "contract_hash": "8be7185ecdce9cf43f8f1084cd37205eccf669fc47d73356c438cbf7b490b7af",
    "status": "active",
}


def bundle_like(target: int = 4096) -> dict[str, object]:
    """A ProofPack-shaped document of about ``target`` bytes (strings, ints, booleans, nesting)."""
    events = []
    i = 0
    doc: dict[str, object] = {"spec_version": "2.0.0", "deal_id": "deal_0001", "events": events}
    while len(json.dumps(doc)) < target:
        events.append(
            {
                "event_id": f"evt_{i:04d}",
                "event_type": "PROOF_READY",
                "deal_id": "deal_0001",
                "actor_id": "agent_alpha",
                "timestamp": "2026-11-22T04:00:00Z",
                "payload": {"step": i, "ok": True, "note": "é" * 3},
                "prev_hash": "0" * 64,
                "hash": "f" * 64,
            }
        )
        i += 1
    return doc


def with_floats(doc: dict[str, object]) -> dict[str, object]:
    """The same document with a float per event (forces the general encoder path)."""
    copy = json.loads(json.dumps(doc))
    for event in copy["events"]:
        event["payload"]["confidence"] = 0.875
        event["payload"]["score"] = 1.0
    return copy


def main() -> None:
    rows = []
    for name, doc in [
        (f"contract ({len(json.dumps(CONTRACT))} B)", CONTRACT),
        (f"bundle-like ({len(json.dumps(bundle_like()))} B)", bundle_like()),
        ("bundle-like + floats", with_floats(bundle_like())),
    ]:
        assert jcs(doc) == rfc8785.dumps(doc), name
        ours = ops_per_second(lambda d=doc: jcs(d))
        theirs = ops_per_second(lambda d=doc: rfc8785.dumps(d))
        rows.append((name, ours, theirs, f"{ours / theirs:.1f}x"))
    print(table(["document", "jcs docs/s", "rfc8785 docs/s", "ratio"], rows))
    print()
    raw = json.dumps(bundle_like()).encode()
    strict = ops_per_second(lambda: loads(raw))
    plain = ops_per_second(lambda: json.loads(raw))
    compact = ops_per_second(lambda: py_compact(CONTRACT))
    print(
        table(
            ["operation", "per second", "floor (json module)", "ratio to floor"],
            [
                ("strict loads, 4 KiB", strict, plain, f"{strict / plain:.2f}"),
                (
                    "py-compact contract",
                    compact,
                    ops_per_second(
                        lambda: json.dumps(CONTRACT, sort_keys=True, separators=(",", ":"))
                    ),
                    "-",
                ),
            ],
        )
    )


if __name__ == "__main__":
    main()
