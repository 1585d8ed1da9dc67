"""Golden ProofPack vectors (vectors/bundles/): generated here, byte-compared, verdicts checked.

Regenerate with ``UPDATE_GOLDENS=1``. Every key is TEST-ONLY (derived from a fixed label, see
``tests/verify/bundles/test_bundle_support.py``) and the time is fixed, so the files are
reproducible.
Tampered vectors are named after the attack they pin and give the step and code that must catch it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.verify.bundles.hashing import proof_hash
from affidavit.verify.bundles.verifier import BundleVerifier

from tests.conftest import VECTORS, assert_golden
from tests.verify.bundles.test_bundle_support import (
    LOG_KEY,
    OTHER_KEY,
    OUTPUTS,
    contract,
    edit,
    reseal,
    stamp,
    verifier,
)

FOLDER = VECTORS / "bundles"
Change = Callable[[dict[str, Any]], None]


def _evaluation(b: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = b["proofs"][0]["evidence"]["adapter_evaluation"]
    return value


def _rebind(change: Change) -> Change:
    def apply(b: dict[str, Any]) -> None:
        change(b)
        b["events"][1]["payload"]["proof_hashes"] = [proof_hash(p) for p in b["proofs"]]

    return apply


def _flip_decision(b: dict[str, Any]) -> None:
    b["events"][-1]["payload"]["decision"] = "auto_accept"


def _build() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(manifest entry, bundle) pairs, deterministic."""
    v2, v3 = stamp(OUTPUTS), stamp(OUTPUTS, actor=True)
    revoked = stamp({"revoked": OUTPUTS["accepted"]}, declaration=contract(status="revoked"))
    foreign = stamp({"foreign": OUTPUTS["accepted"]}, key=OTHER_KEY)["foreign"]
    ok = {"verdict": "verified"}
    cases: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []
    for deal in ("accepted", "review", "rejected", "invalid_output"):
        cases.append((f"stamped-{deal}-2.0.0", v2[deal], ok, "docs/formats.md §4; seed 003"))
        cases.append((f"stamped-{deal}-3.0.0", v3[deal], ok, "docs/formats.md §4 spec 3.0.0"))
    cases.append(("stamped-revoked-contract", revoked["revoked"], ok, "seed 003 lifecycle table"))

    def fail(step: str, code: str) -> dict[str, Any]:
        return {"verdict": "failed", "step": step, "code": code}

    tampered: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
        (
            "tamper-payload-without-rehash",
            edit(v2["rejected"], _flip_decision),
            fail("bundle_hash", "bundle.hash_mismatch"),
            "docs/formats.md §4 bundle_hash",
        ),
        (
            "attack-rewritten-events-replayed-proof",
            reseal(edit(v2["rejected"], _flip_decision)),
            fail("cross_reference", "bundle.leaf_unbound"),
            "docs/formats.md §4 cross-reference",
        ),
        (
            "attack-proof-swapped-bundle-hash-repaired",
            reseal(edit(v2["rejected"], lambda b: b.update(proofs=v2["accepted"]["proofs"]))),
            fail("proof_binding", "bundle.proof_unbound"),
            "seed 003 artifact binding",
        ),
        (
            "attack-untrusted-log-key",
            foreign,
            fail("sth_signature", "treehead.signature_bad"),
            "docs/formats.md §4: an untrusted head is never verified",
        ),
        (
            "attack-forged-raw-output-reanchored",
            reseal(
                edit(
                    v2["review"],
                    _rebind(
                        lambda b: b["proofs"][0]["evidence"].update(
                            adapter_output=OUTPUTS["accepted"]
                        )
                    ),
                ),
                anchor=True,
            ),
            fail("adapter_replay", "adapter.validator_result_inconsistent"),
            "docs/formats.md §4 adapter replay (validator re-run)",
        ),
        (
            "attack-contract-edited-reanchored",
            reseal(
                edit(
                    v2["accepted"],
                    _rebind(
                        lambda b: _evaluation(b)["adapter_contract"].update(adapter_version="9.0.0")
                    ),
                ),
                anchor=True,
            ),
            fail("adapter_replay", "adapter.contract_hash_mismatch"),
            "docs/formats.md §2, §4",
        ),
        (
            "attack-snapshot-inputs-forged-reanchored",
            reseal(
                edit(
                    v2["review"],
                    lambda b: b["events"][2]["payload"]["policy_snapshot"].update(
                        matched_rule=v2["accepted"]["events"][2]["payload"]["policy_snapshot"][
                            "matched_rule"
                        ],
                        rule_index=0,
                    ),
                ),
                anchor=True,
            ),
            fail("adapter_replay", "adapter.matched_rule_does_not_fire"),
            "docs/formats.md §4 policy_snapshot replay",
        ),
        (
            "attack-actor-key-revoked-before-signing",
            edit(
                v3["accepted"],
                lambda b: b["key_directory"]["actor-key-1"].update(
                    revoked_at="2026-01-01T00:00:00Z"
                ),
            ),
            fail("actor_signatures", "event.key_not_valid"),
            "docs/formats.md §4 key_directory window",
        ),
    ]
    pairs = []
    for name, bundle, expected, clause in cases + tampered:
        entry = {
            "id": name,
            "input": f"{name}.json",
            "trusted_public_key_base64": LOG_KEY.public_key.b64,
            "expected": expected,
            "spec_clause": clause,
        }
        pairs.append((entry, bundle))
    return pairs


_PAIRS = _build()


def _dump(document: Any) -> bytes:
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def test_manifest_golden() -> None:
    manifest = {
        "description": "ProofPack bundles stamped with TEST-ONLY keys at a fixed time, and "
        "tampered copies naming the step and error code that must reject them.",
        "generator": "tests/verify/bundles/test_bundle_vectors.py (UPDATE_GOLDENS=1)",
        "vectors": [entry for entry, _ in _PAIRS],
    }
    assert_golden(FOLDER / "manifest.json", _dump(manifest))


@pytest.mark.parametrize(("entry", "bundle"), _PAIRS, ids=[e["id"] for e, _ in _PAIRS])
def test_bundle_golden_and_verdict(entry: dict[str, Any], bundle: dict[str, Any]) -> None:
    path = FOLDER / entry["input"]
    assert_golden(path, _dump(bundle))
    result = verifier().verify_bytes(path.read_bytes())
    expected = entry["expected"]
    assert result.verdict == expected["verdict"], result.to_json()
    if "step" in expected:
        step = result.failed_step
        assert step is not None
        assert (step.name, step.code) == (expected["step"], expected["code"])
    assert BundleVerifier().verify_bytes(path.read_bytes()).verdict != "verified"
