"""Stamping: bundle contents, one head per batch, and interop with the pinned peer verifier."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, evaluate_adapter, example_contract, stamp_bundles
from affidavit.verify import errors
from affidavit.verify.bundles.events import event_hash

from tests.conftest import raises_code
from tests.verify.bundles.test_bundle_support import LOG_KEY, OUTPUTS, POLICY, WHEN, stamp, verifier


def _peer_verify(bundle: dict[str, Any], tmp_path: Path) -> str:
    exe = shutil.which("aigentsy-verify") or str(
        Path(__file__).resolve().parents[2] / ".venv/bin/aigentsy-verify"
    )
    if not Path(exe).exists():
        pytest.skip("aigentsy-verify (pinned peer, dev extra) is not installed")
    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps({"public_key_base64": LOG_KEY.public_key.b64}))
    bundle_file = tmp_path / f"{bundle['deal_id']}.json"
    bundle_file.write_text(json.dumps(bundle))
    done = subprocess.run(
        [exe, "bundle", str(bundle_file), "--public-key", str(key_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("actor", [False, True], ids=["2.0.0", "3.0.0"])
def test_peer_verifies_every_stamped_bundle_at_level_full(actor: bool, tmp_path: Path) -> None:
    for bundle in stamp(OUTPUTS, actor=actor).values():
        out = _peer_verify(bundle, tmp_path)
        assert "verified:         true" in out
        assert "level:            full" in out
        assert "FAIL" not in out
        assert "SKIPPED" not in out
        assert "adapter_replay:   PASS" in out
        if actor:
            assert "actor_signatures: PASS" in out


def test_bundle_layout() -> None:
    bundle = stamp({"d": OUTPUTS["accepted"]})["d"]
    assert list(bundle) == [
        "spec_version",
        "deal_id",
        "proofs",
        "events",
        "merkle_inclusion",
        "bundle_hash",
        "signed_tree_head",
        "exported_at",
    ]
    types = [e["event_type"] for e in bundle["events"]]
    assert types == ["DEAL_CREATED", "PROOF_READY", "AUTO_GO_APPROVED", "OUTCOME_RECORDED"]
    assert all(e["hash"] == event_hash(e) for e in bundle["events"])
    assert bundle["proofs"][0]["evidence"]["adapter_output"] == OUTPUTS["accepted"]
    decision = bundle["events"][2]["payload"]
    assert decision["policy_hash"] == POLICY.policy_hash
    assert decision["policy_snapshot"]["rule_index"] == 0
    assert bundle["signed_tree_head"]["root_hash"] == bundle["merkle_inclusion"]["merkle_root"]


def test_batch_shares_one_head(tmp_path: Path) -> None:
    bundles = list(stamp(OUTPUTS).values())
    heads = {json.dumps(b["signed_tree_head"], sort_keys=True) for b in bundles}
    assert len(heads) == 1
    assert sorted(b["merkle_inclusion"]["leaf_index"] for b in bundles) == [0, 1, 2, 3]


def test_deterministic() -> None:
    assert stamp(OUTPUTS) == stamp(OUTPUTS)


def test_second_batch_extends_the_log(tmp_path: Path) -> None:
    contract = example_contract()
    with TransparencyLog.create(tmp_path / "log.db", LOG_KEY, "t") as log:
        first = stamp_bundles(
            log, [StampItem("a", contract, OUTPUTS["accepted"])], POLICY, when=WHEN
        )
        later = WHEN + datetime.timedelta(minutes=1)
        second = stamp_bundles(
            log, [StampItem("b", contract, OUTPUTS["review"])], POLICY, when=later
        )
    assert second[0]["merkle_inclusion"]["leaf_index"] == 1
    check = verifier()
    assert [check.verify(b).verdict for b in first + second] == ["verified", "verified"]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"contract_hash": "0" * 64}, "contract.hash_mismatch"),
        ({"input_schema_hash": "0" * 64}, "contract.input_schema_hash_mismatch"),
        ({"adapter_id": "NOT DNS"}, "contract.schema_invalid"),
        ({"status": "retired"}, "contract.lifecycle_invalid"),
        ({"replaced_by": "acme.eval_suite.v0@0.1.0"}, "contract.lifecycle_self_reference"),
    ],
)
def test_invalid_contract_is_refused(change: dict[str, Any], error: str) -> None:
    """stamp runs the same checks as ``adapter lint`` (lifecycle fields included)."""
    with raises_code(error):
        evaluate_adapter({**example_contract(), **change}, OUTPUTS["accepted"])


def test_unknown_validator_routes_to_unknown_adapter() -> None:
    from affidavit.verify.contracts.contract import contract_hash, input_schema_hash

    declaration = {**example_contract(), "validator_name": "custom_scorer"}
    declaration["input_schema_hash"] = input_schema_hash(declaration)
    declaration["contract_hash"] = contract_hash(declaration)
    evaluation = evaluate_adapter(declaration, OUTPUTS["accepted"])
    assert (evaluation["validation_result"], evaluation["normalized_policy_inputs"]) == (
        "unknown_adapter",
        {},
    )


def test_bad_arguments(tmp_path: Path) -> None:
    contract = example_contract()
    with TransparencyLog.create(tmp_path / "log.db", LOG_KEY, "t") as log:
        with pytest.raises(errors.UsageError):
            stamp_bundles(log, [], POLICY, when=WHEN)
        with pytest.raises(errors.UsageError):
            stamp_bundles(
                log, [StampItem("a", contract, {})], POLICY, when=WHEN.replace(tzinfo=None)
            )
        item = StampItem("a", contract, {})
        with pytest.raises(errors.UsageError):
            stamp_bundles(log, [item, item], POLICY, when=WHEN)
        assert log.size == 0  # nothing appended on refusal
