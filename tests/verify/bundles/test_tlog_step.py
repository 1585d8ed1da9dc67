"""Step 15, ``tlog_proof`` (verify/bundles/tlog_step.py): a bundle's witnessed tlog-proof."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.verify.bundles.verifier import BundleVerifier
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.tlog.policy import Policy, parse_policy
from affidavit.verify.tlog.proof import format_proof, parse_proof

from tests.verify.bundles.test_bundle_support import LOG_KEY, OTHER_KEY
from tests.verify.tlog.proof_fixtures import stamped_with_proofs


@pytest.fixture(scope="module")
def stamped(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Policy]:
    _, bundles, policy = stamped_with_proofs(tmp_path_factory.mktemp("tlog-step"))
    return bundles, parse_policy(policy)


@pytest.fixture(scope="module")
def half_cosigned(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    _, bundles, _ = stamped_with_proofs(tmp_path_factory.mktemp("tlog-half"), pq=False)
    return bundles


def _verify(bundle: Any, policy: Policy | None, *, keys: bool = True) -> Any:
    trusted = [LOG_KEY.public_key] if keys else []
    return BundleVerifier(trusted, tlog_policy=policy).verify(bundle)


def _step(result: Any) -> Any:
    step = result.step("tlog_proof")
    assert step is not None
    return step


def test_a_witnessed_bundle_verifies_under_the_policy(stamped: Any) -> None:
    bundles, policy = stamped
    for bundle in bundles:
        result = _verify(bundle, policy)
        assert result.verdict == "verified", result.to_json()
        step = _step(result)
        assert step.status == "ok"
        assert step.details["witnesses"] == ["ed", "pq"]
        assert step.details["quorum"] == "both"
        assert step.details["leaf_hash"] == bundle["merkle_inclusion"]["leaf_hash"]
        assert result.steps[-1].name == "tlog_proof"  # step 15, last


def _with(bundle: dict[str, Any], **changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(bundle)
    for name, value in changes.items():
        if value is None:
            changed.pop(name, None)
        else:
            changed[name] = value
    return changed


def _edited_proof(bundle: dict[str, Any], **fields: Any) -> dict[str, Any]:
    proof = parse_proof(bundle["tlog_proof"])
    values = {"index": proof.index, "path": proof.path, "checkpoint": proof.checkpoint}
    values.update(fields)
    edited = type(proof)(values["index"], values["path"], values["checkpoint"], proof.extra)
    return _with(bundle, tlog_proof=format_proof(edited))


def _flip_first(path: tuple[bytes, ...]) -> tuple[bytes, ...]:
    return (bytes([path[0][0] ^ 1]) + path[0][1:], *path[1:])


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("missing", "bundle.tlog_proof_missing"),
        ("not-a-string", "tlog.proof_malformed"),
        ("malformed", "tlog.proof_malformed"),
        ("other-bundles-proof", "bundle.tlog_proof_mismatch"),
        ("proof-hash-edited", "tlog.entry_mismatch"),
        ("checkpoint-size-edited", "checkpoint.signature_bad"),
    ],
)
def test_the_step_fails_closed(stamped: Any, case: str, code: str) -> None:
    bundles, policy = stamped
    bundle = bundles[0]
    proof = parse_proof(bundle["tlog_proof"])
    changed = {
        "missing": lambda: _with(bundle, tlog_proof=None),
        "not-a-string": lambda: _with(bundle, tlog_proof=["c2sp.org/tlog-proof@v1"]),
        "malformed": lambda: _with(bundle, tlog_proof="c2sp.org/tlog-proof@v1\n"),
        "other-bundles-proof": lambda: _with(bundle, tlog_proof=bundles[1]["tlog_proof"]),
        "proof-hash-edited": lambda: _edited_proof(bundle, path=_flip_first(proof.path)),
        "checkpoint-size-edited": lambda: _edited_proof(
            bundle, checkpoint=proof.checkpoint.replace("\n2\n", "\n3\n", 1)
        ),
    }[case]()
    result = _verify(changed, policy)
    assert result.verdict == "failed"
    assert result.code == code
    assert _step(result).code == code
    # the proof is outside bundle_hash: only this step sees the change
    assert [s.name for s in result.steps if s.status == "failed"] == ["tlog_proof"]


def test_quorum_not_met_is_never_verified(stamped: Any, half_cosigned: Any) -> None:
    _, policy = stamped
    result = _verify(half_cosigned[0], policy)
    assert (result.verdict, result.code) == ("failed", "tlog.quorum_not_met")
    assert _step(result).details["verified_witnesses"] == ["ed"]
    # a policy that needs only the Ed25519 witness accepts the same bundle
    ed_only = parse_policy(str(_policy_text(policy)).replace("quorum both", "quorum ed"))
    assert _verify(half_cosigned[0], ed_only).verdict == "verified"


def _policy_text(policy: Policy) -> str:
    lines = [f"log {log.vkey}" for log in policy.logs]
    lines += [f"witness {w.name} {w.vkey}" for w in policy.witnesses]
    lines += [f"group {g.name} {g.spelled} {' '.join(g.members)}" for g in policy.groups]
    return "\n".join([*lines, f"quorum {policy.quorum}"]) + "\n"


def test_the_log_must_be_the_policys(stamped: Any) -> None:
    bundles, policy = stamped
    log_line = f"log {policy.logs[0].vkey}\n"
    without_log = parse_policy(_policy_text(policy).replace(log_line, ""))
    result = _verify(bundles[0], without_log)
    assert (result.verdict, result.code) == ("failed", "tlog.log_untrusted")
    other_key = f"log {verifier_key_string(policy.logs[0].origin, OTHER_KEY.public_key)}\n"
    another_key = parse_policy(_policy_text(policy).replace(log_line, other_key))
    result = _verify(bundles[0], another_key)
    assert (result.verdict, result.code) == ("failed", "checkpoint.no_trusted_signature")


def test_without_a_policy_the_verdict_is_unchanged(stamped: Any) -> None:
    bundles, _ = stamped
    bare = _with(bundles[0], tlog_proof=None)
    plain = _verify(bare, None)
    assert plain.verdict == "verified"
    assert plain.step("tlog_proof") is None  # no tlog_proof, no new step: output unchanged
    carried = _verify(bundles[0], None)
    assert carried.verdict == "verified"
    assert _step(carried).status == "not_checked"
    assert [s.to_json() for s in carried.steps[:-1]] == [s.to_json() for s in plain.steps]
    # a broken proof without a policy changes nothing either
    broken = _verify(_with(bundles[0], tlog_proof="garbage"), None)
    assert broken.verdict == "verified"


def test_a_policy_does_not_replace_the_tree_head_key(stamped: Any) -> None:
    bundles, policy = stamped
    result = _verify(bundles[0], policy, keys=False)
    assert result.verdict == "unanchored"
    assert _step(result).status == "ok"


def test_a_broken_chain_leaves_the_step_unchecked(stamped: Any) -> None:
    bundles, policy = stamped
    broken = copy.deepcopy(bundles[0])
    broken["events"][1]["payload"]["edited"] = True
    result = _verify(broken, policy)
    assert result.verdict == "failed"
    assert _step(result).status == "not_checked"
    unbound = copy.deepcopy(bundles[0])
    unbound["merkle_inclusion"]["leaf_hash"] = "00" * 32
    result = _verify(unbound, policy)
    assert result.verdict == "failed"
    assert _step(result).status == "not_checked"


# -- cold start (docs/adr/0003): without --policy the tlog modules are never imported -------------
# (click, and with it inspect, parse every command line: docs/adr/0022-click-alone.md)

_PROBE = (
    "import sys; from affidavit.cli.main import main\n"
    "try:\n    main(sys.argv[1:])\nfinally:\n"
    "    heavy = ('dataclasses', 'pathlib', 'cryptography',\n"
    "             'affidavit.verify.tlog.policy', 'affidavit.verify.tlog.proof')\n"
    "    sys.stderr.write('LOADED:' + ' '.join(m for m in heavy if m in sys.modules))"
)


def test_verify_bundle_without_policy_stays_light(stamped: Any, tmp_path: Path) -> None:
    bundles, _ = stamped
    path = tmp_path / "carried.json"
    path.write_text(json.dumps(bundles[0]))
    args = ["verify", "bundle", str(path), "--public-key-base64", LOG_KEY.public_key.b64]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, check=False, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.rsplit("LOADED:", 1)[1] == ""


def test_reports_match_the_result_schema(stamped: Any, half_cosigned: Any) -> None:
    from affidavit.verify.results import Report

    from tests.schemas import assert_verify_report

    bundles, policy = stamped
    results = (
        _verify(bundles[0], policy),
        _verify(half_cosigned[0], policy),
        _verify(_with(bundles[0], tlog_proof=None), policy),
        _verify(bundles[0], None),
    )
    document = Report("bundle", results).to_json()
    assert_verify_report(document)
    assert [r["verdict"] for r in document["results"]] == [
        "verified",
        "failed",
        "failed",
        "verified",
    ]
