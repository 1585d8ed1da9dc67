"""``affidavit stamp`` and ``affidavit stamp batch`` in-process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import example_contract
from affidavit.cli.main import affidavit
from affidavit.verify.bundles.actor_trust import ActorTrust, TrustedActorKey
from affidavit.verify.bundles.verifier import BundleVerifier
from click.testing import CliRunner

from tests.verify.bundles.test_bundle_support import ACTOR_KEY, LOG_KEY, OUTPUTS, POLICY, verifier


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name, key in (("log.key", LOG_KEY), ("actor.key", ACTOR_KEY)):
        path = tmp_path / name
        path.write_bytes(private_key_pem(key))
        os.chmod(path, 0o600)
    with TransparencyLog.create(tmp_path / "log.db", LOG_KEY, "cli-log"):
        pass
    (tmp_path / "contract.json").write_text(json.dumps(example_contract()))
    (tmp_path / "policy.json").write_text(json.dumps(POLICY.to_json()))
    for name, raw in OUTPUTS.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    return tmp_path


def _base(d: Path) -> list[str]:
    return ["--contract", str(d / "contract.json"), "--policy", str(d / "policy.json"),
            "--log", str(d / "log.db"), "--key", str(d / "log.key"),
            "--time", "2026-03-01T12:00:00Z"]  # fmt: skip


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(affidavit, args, catch_exceptions=False)


def test_stamp_one(workdir: Path) -> None:
    out = workdir / "b.json"
    args = ["stamp", *_base(workdir), "--adapter-output", str(workdir / "accepted.json"),
            "--deal-id", "deal-1", "--out", str(out), "--json"]  # fmt: skip
    result = _run(args)
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["bundles"][0]
    assert (row["deal_id"], row["decision"], row["spec_version"]) == (
        "deal-1",
        "auto_accept",
        "2.0.0",
    )
    assert verifier().verify_bytes(out.read_bytes()).verdict == "verified"
    again = _run(args)
    assert again.exit_code == 2
    assert "io.exists" in again.output
    with TransparencyLog.open(workdir / "log.db") as log:
        assert log.size == 1  # the refused run appended nothing


def test_stamp_with_actor_key_is_3_0_0(workdir: Path) -> None:
    out = workdir / "b3.json"
    actor = ["--actor-key", str(workdir / "actor.key"), "--actor-id", "agent-9"]
    result = _run(["stamp", *_base(workdir), "--adapter-output", str(workdir / "review.json"),
                   "--deal-id", "deal-3", "--out", str(out), *actor])  # fmt: skip
    assert result.exit_code == 0, result.output
    bundle = json.loads(out.read_text())
    assert bundle["spec_version"] == "3.0.0"
    assert bundle["events"][0]["actor_id"] == "agent-9"
    # Signed under a key only the bundle carries: self-asserted (docs/adr/0008) ...
    step = verifier().verify(bundle).step("actor_signatures")
    assert step is not None
    assert step.status == "self_asserted"
    # ... and ok once the caller trusts the actor key.
    trust = ActorTrust([TrustedActorKey(ACTOR_KEY.public_key.raw, "agent-9")])
    trusted = BundleVerifier([LOG_KEY.public_key], actor_trust=trust).verify(bundle)
    assert (trusted.verdict, trusted.step("actor_signatures").status) == ("verified", "ok")  # type: ignore[union-attr]


def test_stamp_swarm_designation_verifies_swarm_strict(workdir: Path) -> None:
    out = workdir / "swarm.json"
    actor = ["--actor-key", str(workdir / "actor.key"), "--actor-id", "agent-9"]
    swarm = ["--swarm-designate", "PROOF_READY", "--swarm-designate", "OUTCOME_RECORDED",
             "--swarm-snapshot"]  # fmt: skip
    result = _run(["stamp", *_base(workdir), "--adapter-output", str(workdir / "accepted.json"),
                   "--deal-id", "deal-s", "--out", str(out), *actor, *swarm])  # fmt: skip
    assert result.exit_code == 0, result.output
    bundle = json.loads(out.read_text())
    assert bundle["events"][1]["event_type"] == "SWARM_POLICY_SET"
    assert bundle["events"][1]["payload"]["swarm_policy"]["required_signed_event_types"] == [
        "PROOF_READY",
        "OUTCOME_RECORDED",
    ]
    checked = BundleVerifier([LOG_KEY.public_key], profile="swarm-strict").verify(bundle)
    statuses = {s.name: s.status for s in checked.steps}
    assert checked.verdict == "verified"
    assert (statuses["swarm_coverage"], statuses["swarm_snapshot"]) == ("self_asserted", "ok")


def test_stamp_swarm_designation_needs_an_actor_key(workdir: Path) -> None:
    result = _run(["stamp", *_base(workdir), "--adapter-output", str(workdir / "accepted.json"),
                   "--deal-id", "d", "--out", str(workdir / "o.json"),
                   "--swarm-designate", "PROOF_READY"])  # fmt: skip
    assert result.exit_code == 2
    assert "usage.invalid" in result.output


def test_stamp_batch(workdir: Path) -> None:
    files = [str(workdir / f"{n}.json") for n in ("accepted", "review", "rejected")]
    result = _run(["stamp", "batch", *_base(workdir), "--out-dir", str(workdir / "out"),
                   "--deal-prefix", "x-", *files])  # fmt: skip
    assert result.exit_code == 0, result.output
    written = sorted((workdir / "out").glob("*.bundle.json"))
    assert len(written) == 3
    bundles = [json.loads(p.read_text()) for p in written]
    assert {b["deal_id"] for b in bundles} == {"x-accepted", "x-review", "x-rejected"}
    assert len({b["signed_tree_head"]["signature"] for b in bundles}) == 1


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ([], "usage.missing_argument"),
        (["--adapter-output", "{missing}", "--deal-id", "d", "--out", "{out}"], "io.unreadable"),
        (["--adapter-output", "{bad_policy}", "--deal-id", "d", "--out", "{out}"], "policy"),
    ],
)
def test_stamp_errors_exit_2(workdir: Path, extra: list[str], code: str) -> None:
    (workdir / "bad_policy.json").write_text("{}")
    args = [a.format(missing=workdir / "nope.json", out=workdir / "o.json",
                     bad_policy=workdir / "accepted.json") for a in extra]  # fmt: skip
    base = _base(workdir)
    if code == "policy":
        base[3] = str(workdir / "bad_policy.json")
        code = "policy.malformed"
    result = _run(["stamp", *base, *args])
    assert result.exit_code == 2, result.output
    assert code in result.output


def test_stamp_marks_its_required_options(workdir: Path) -> None:
    # issue 22: required options are marked; stamp's cannot be click-required (stamp batch takes
    # them from stamp or itself), so help says so and a missing one is usage.missing_argument
    helped = _run(["stamp", "--help"]).stdout
    for flag in ("--contract", "--policy", "--log"):
        line = next(line for line in helped.splitlines() if line.startswith(f"  {flag} "))
        assert "[required]" in line, line
    # issue 33: what only one deal needs says so (stamp batch needs none of them)
    for flag in ("--adapter-output", "--deal-id", "--out"):
        line = next(line for line in helped.splitlines() if line.startswith(f"  {flag} "))
        assert "[required for one deal]" in line, line
    # issue 24: --key only for a log DB (with --log URL the registry signs)
    key_help = helped[helped.index("  --key ") :].split("\n  -")[0]
    assert "[required with a log DB]" in " ".join(key_help.split()), key_help
    assert "[required]" not in next(line for line in helped.splitlines() if "--actor-id" in line)
    batch = _run(["stamp", "batch", "--help"]).stdout
    assert "[required]" in next(line for line in batch.splitlines() if "  --contract " in line)
    missing = _run(["stamp", "--contract", str(workdir / "contract.json")])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: usage.missing_argument: missing option(s): --adapter")
    assert "`" not in helped


def test_stamp_refuses_a_log_rolled_back_behind_its_signed_state(workdir: Path) -> None:
    """A log.db restored from before the key's last signed head would fork the log (ADR 0005)."""
    early = (workdir / "log.db").read_bytes()
    for n in (1, 2):
        args = ["stamp", *_base(workdir), "--adapter-output", str(workdir / "accepted.json"),
                "--deal-id", f"deal-{n}", "--out", str(workdir / f"b{n}.json")]  # fmt: skip
        assert _run(args).exit_code == 0
    for suffix in ("-wal", "-shm"):
        (workdir / f"log.db{suffix}").unlink(missing_ok=True)
    (workdir / "log.db").write_bytes(early)  # the store no longer extends the signed head
    args = ["stamp", *_base(workdir), "--adapter-output", str(workdir / "accepted.json"),
            "--deal-id", "deal-3", "--out", str(workdir / "b3.json")]  # fmt: skip
    result = CliRunner().invoke(affidavit, args)
    assert result.exit_code == 2
    assert "log.state_mismatch" in result.output
    assert not (workdir / "b3.json").exists()
