"""``verify bundle`` flags: the peer's --public-key/--strict, actor-key trust, profiles, output."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import public_key_pem
from affidavit.cli.main import affidavit
from click.testing import CliRunner

from tests.schemas import assert_output_schema
from tests.verify.bundles.test_bundle_support import (
    ACTOR_ID,
    ACTOR_KEY,
    LOG_KEY,
    OTHER_KEY,
    OUTPUTS,
    reseal,
    stamp,
)
from tests.verify.bundles.test_bundle_swarm import _stamp as stamp_swarm


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("flags")
    v2 = stamp({"accepted": OUTPUTS["accepted"]})["accepted"]
    v3 = stamp({"accepted": OUTPUTS["accepted"]}, actor=True)["accepted"]
    appended = copy.deepcopy(v2)
    appended["events"].append(
        dict(appended["events"][-1], event_id="evt_late", event_type="PAYOUT_REQUESTED")
    )
    layered = dict(copy.deepcopy(v2), policy_layer={"referral_chain": ["a", "b"]})
    docs: dict[str, Any] = {
        "v2": v2,
        "v3": v3,
        "appended": reseal(appended),
        "swarm": stamp_swarm(),
        "layered": layered,
    }
    out = {name: folder / f"{name}.json" for name in docs}
    for name, document in docs.items():
        out[name].write_text(json.dumps(document))
    out["key.json"] = folder / "log_public_key.json"
    out["key.json"].write_text(json.dumps({"public_key_base64": LOG_KEY.public_key.b64}))
    out["key.pem"] = folder / "log.pem"
    out["key.pem"].write_bytes(public_key_pem(LOG_KEY.public_key))
    out["key.b64"] = folder / "log.pub"
    out["key.b64"].write_text(LOG_KEY.public_key.b64 + "\n")
    actors = folder / "actors"
    actors.mkdir()
    (actors / "agent.pub").write_text(ACTOR_KEY.public_key.b64 + "\n")
    out["actors"] = actors
    bound = folder / "bound"
    bound.mkdir()
    (bound / "agent.json").write_text(
        json.dumps({"public_key_base64": ACTOR_KEY.public_key.b64, "actor_id": "someone-else"})
    )
    out["bound"] = bound
    out["pinned"] = folder / "pinned.json"
    out["pinned"].write_text(
        json.dumps(
            {
                "keys_by_key_id": {
                    "pin-1": {
                        "actor_id": ACTOR_ID,
                        "public_key_base64": ACTOR_KEY.public_key.b64,
                        "issued_at": "2026-01-01T00:00:00Z",
                        "revoked_at": None,
                        "status": "active",
                    }
                }
            }
        )
    )
    return out


def _run(*args: Any) -> Any:
    return CliRunner().invoke(
        affidavit, ["verify", "bundle", *map(str, args)], catch_exceptions=False
    )


def _json(*args: Any) -> tuple[int, dict[str, Any]]:
    result = _run(*args, "--json")
    document: dict[str, Any] = json.loads(result.output)
    assert_output_schema("verify bundle", document)
    return result.exit_code, document["results"][0]


@pytest.mark.parametrize("key", ["key.json", "key.pem", "key.b64"])
def test_public_key_file_in_every_form(files: dict[str, Path], key: str) -> None:
    result = _run(files["v2"], "--public-key", files[key], "--strict")
    assert result.exit_code == 0, result.output


def test_public_key_of_another_log_fails(files: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"public_key_base64": OTHER_KEY.public_key.b64}))
    code, result = _json(files["v2"], "--public-key", other, "--strict")
    assert (code, result["code"]) == (1, "treehead.signature_bad")


def test_strict_changes_nothing(files: dict[str, Path]) -> None:
    without = _run(files["v2"])
    strict = _run(files["v2"], "--strict")
    assert (without.exit_code, strict.exit_code) == (1, 1)
    assert without.output == strict.output


def test_events_after_finality_fail_on_the_cli(files: dict[str, Path]) -> None:
    code, result = _json(files["appended"], "--public-key", files["key.json"])
    assert (code, result["verdict"], result["code"]) == (
        1,
        "failed",
        "bundle.events_after_finality",
    )


def test_self_asserted_is_shown_not_ok(files: dict[str, Path]) -> None:
    code, result = _json(files["v3"], "--public-key", files["key.json"])
    steps = {s["name"]: s for s in result["steps"]}
    assert code == 0
    assert steps["actor_signatures"]["status"] == "self_asserted"
    assert any(w.startswith("bundle.actor_keys_self_asserted") for w in result["warnings"])
    text = _run(files["v3"], "--public-key", files["key.json"]).output
    assert "actor_signatures" in text
    assert "self_asserted" in text


@pytest.mark.parametrize(
    ("bundle", "trust", "code", "error"),
    [
        ("v3", None, 1, "bundle.actor_signatures_untrusted"),
        ("v3", "actors", 0, None),
        ("v3", "pinned", 0, None),
        ("v3", "bound", 1, "bundle.actor_signatures_untrusted"),  # bound to another actor
        ("v2", "actors", 1, "bundle.actor_signatures_missing"),
    ],
)
def test_require_actor_signatures(
    files: dict[str, Path], bundle: str, trust: str | None, code: int, error: str | None
) -> None:
    extra = ["--trusted-actor-keys", files[trust]] if trust else []
    exit_code, result = _json(
        files[bundle], "--public-key", files["key.json"], "--require-actor-signatures", *extra
    )
    assert (exit_code, result.get("code")) == (code, error)
    step = next(s for s in result["steps"] if s["name"] == "actor_signatures")
    assert step["status"] == ("ok" if code == 0 else "failed")


def test_trusted_actor_keys_without_require_make_the_step_ok(files: dict[str, Path]) -> None:
    _, result = _json(
        files["v3"], "--public-key", files["key.json"], "--trusted-actor-keys", files["actors"]
    )
    step = next(s for s in result["steps"] if s["name"] == "actor_signatures")
    assert (step["status"], step["details"]["trust"]) == ("ok", "caller_trusted")


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ('{"keys_by_key_id": {}}', "usage.invalid"),
        ('{"k": {"actor_id": "a", "public_key_base64": "AAAA", "issued_at": '
         '"2026-01-01T00:00:00Z"}}', "key.wrong_length"),
        ('{"k": {"actor_id": "a", "issued_at": "yesterday"}}', "usage.invalid"),
        ("{", "json.syntax"),
    ],
)  # fmt: skip
def test_a_bad_pinned_directory_is_one_line_exit_2(
    files: dict[str, Path], tmp_path: Path, content: str, code: str
) -> None:
    pinned = tmp_path / "pinned.json"
    pinned.write_text(content)
    result = _run(files["v3"], "--trusted-actor-keys", pinned)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {code}: ")
    assert len(result.stderr.splitlines()) == 1


def test_swarm_strict_profile(files: dict[str, Path]) -> None:
    code, result = _json(files["swarm"], "--public-key", files["key.json"], "--profile",
                         "swarm-strict")  # fmt: skip
    assert (code, result["profile"]) == (0, "swarm-strict")
    assert {s["name"] for s in result["steps"]} >= {"swarm_coverage", "swarm_snapshot"}
    code, result = _json(files["v3"], "--public-key", files["key.json"], "--profile",
                         "swarm-strict")  # fmt: skip
    assert (code, result["code"]) == (1, "bundle.swarm_designation_missing")
    text = _run(files["swarm"], "--public-key", files["key.json"], "--profile", "swarm-strict")
    assert "profile: swarm-strict" in text.output


def test_policy_layer_in_text_and_json(files: dict[str, Path]) -> None:
    code, result = _json(files["layered"], "--public-key", files["key.json"])
    assert code == 0
    assert result["policy_layer"]["referral_chain"] == ["a", "b"]
    text = _run(files["layered"], "--public-key", files["key.json"]).output
    assert "referral_chain: a -> b" in text
    assert "outside bundle_hash" in text


def test_worker_processes_get_the_actor_trust(files: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(3):
        (folder / f"b{n}.json").write_text(files["v3"].read_text())
    exe = str(Path(sys.executable).parent / "affidavit")
    args = [exe, "verify", "bundle", str(folder), "--jobs",
            "2", "--public-key", str(files["key.json"]), "--require-actor-signatures"]  # fmt: skip
    refused = subprocess.run(args, capture_output=True, check=False, timeout=60)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert b"3 bundle(s): 3 failed" in refused.stdout
    trusted = subprocess.run(
        [*args, "--trusted-actor-keys", str(files["actors"])],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
