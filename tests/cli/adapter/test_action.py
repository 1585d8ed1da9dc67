"""The GitHub Action (action.yml), run the way a runner runs a composite action (issue 37).

A small runner reads action.yml and runs each step's ``run`` with ``bash --noprofile --norc -eo
pipefail`` in the consumer's workspace, with what a runner sets: ``GITHUB_ACTION_PATH`` (a copy of
this checkout), ``GITHUB_WORKSPACE``, ``RUNNER_TEMP``, a ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY`` file per step, the inputs as ``INPUT_*`` variables, and ``${{ inputs.* }}``
and ``${{ steps.*.outputs.* }}`` substituted. The first two steps (find Python, install Affidavit
from the action's checkout into a fresh venv: a real ``pip install``) run once for the module;
each case runs the gate step against a consumer repository made here: pass, edited, deleted,
revoked, stale, deprecated, and bad inputs.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from affidavit.cli.main import affidavit
from click.testing import CliRunner

from tests.attest.publishing.test_publish_support import (
    demo_key,
    make_contract,
    write_json,
    write_key_files,
)
from tests.checkout import copy_checkout
from tests.conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
ID, VERSION = "acme.eval_suite.v0", "0.1.0"
# The guide's names (docs/guides/ci-gate.md), the same in every section.
MANIFEST, PUBLISHER_DOC, CONTRACT = (
    "adapter-contracts.manifest.json",
    "acme-publisher.json",
    "contracts/eval_suite.json",
)
GATE_INPUTS = {
    "contracts-dir": "contracts",
    "manifest": MANIFEST,
    "publisher-doc": PUBLISHER_DOC,
    "require-signed": "true",
    "max-age": "7d",
}


@dataclass(frozen=True)
class Run:
    """What the action's steps did."""

    exit_code: int
    log: str
    summary: str
    outputs: dict[str, str]
    step_outputs: dict[str, dict[str, str]]


def _input_env(inputs: Mapping[str, str]) -> dict[str, str]:
    # A runner exposes inputs as INPUT_<NAME> (upper case, '-' kept).
    return {f"INPUT_{name.upper()}": value for name, value in inputs.items()}


def run_action(
    env_inputs: Mapping[str, str],
    *,
    workspace: Path,
    action_path: Path,
    runner_temp: Path,
    steps_done: Mapping[str, Mapping[str, str]] | None = None,
    path: str | None = None,
) -> Run:
    """Run action.yml's steps; ``env_inputs`` are the ``INPUT_*`` variables. Steps whose id is in
    ``steps_done`` are not run again: their outputs are taken from there."""
    declared = ACTION["inputs"]
    inputs = {
        name: env_inputs.get(f"INPUT_{name.upper()}", spec.get("default", ""))
        for name, spec in declared.items()
    }
    steps: dict[str, dict[str, str]] = {k: dict(v) for k, v in (steps_done or {}).items()}

    def resolve(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            words = match.group(1).split(".")
            if words[0] == "inputs":
                return str(inputs[words[1]])
            if words[0] == "steps" and words[2] == "outputs":
                return steps.get(words[1], {}).get(words[3], "")
            raise AssertionError(f"the test runner does not know {match.group(0)}")

        return EXPRESSION.sub(value, text)

    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
        **env_inputs,
        "GITHUB_ACTION_PATH": str(action_path),
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ACTIONS": "true",
    }
    if path is not None:
        base["PATH"] = path
    log, summary = [], []
    code = 0
    for index, step in enumerate(ACTION["runs"]["steps"]):
        if step.get("id") in (steps_done or {}):
            continue
        assert step["shell"] == "bash"
        files = runner_temp / f"step-{index}"
        files.mkdir(parents=True, exist_ok=True)
        script = files / "run.sh"
        script.write_text(resolve(step["run"]))
        output, step_summary = files / "output", files / "summary.md"
        output.write_text("")
        step_summary.write_text("")
        env = {
            **base,
            **{k: resolve(str(v)) for k, v in step.get("env", {}).items()},
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(step_summary),
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        log.append(done.stdout + done.stderr)
        summary.append(step_summary.read_text())
        pairs = [line.split("=", 1) for line in output.read_text().splitlines() if "=" in line]
        if step.get("id"):
            steps[step["id"]] = dict(pairs)
        code = done.returncode
        if code != 0:
            break  # a failed step ends the job (the runner's default)
    outputs = {name: resolve(spec["value"]) for name, spec in ACTION["outputs"].items()}
    return Run(code, "".join(log), "".join(summary), outputs, steps)


def _cli(*args: str) -> None:
    result = CliRunner().invoke(affidavit, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _publish(publisher: Path, consumer: Path, *, status: str, generated_at: str) -> None:
    """The publisher attests the contract with ``status``, signs a manifest, and the consumer
    commits a copy of it (under the guide's name)."""
    key_path = next((publisher / "keys").glob("*.key"))
    source = write_json(publisher / f"{status}.contract.json", make_contract())
    entry = publisher / f"{status}.entry.json"
    _cli("adapter", "attest", str(source), "--sign-with", str(key_path), "--status", status,
         "--published-at", "2025-01-01T00:00:00Z", "--out", str(entry))  # fmt: skip
    _cli("adapter", "manifest", "build", str(entry), "--sign-with", str(key_path), "--out",
         str(consumer / MANIFEST), "--generated-at", generated_at)  # fmt: skip


def make_consumer(root: Path) -> Path:
    """A consumer repository laid out as the guide says: a contract, the publisher's document,
    a signed manifest and the pin."""
    publisher, consumer = root / "publisher", root / "consumer"
    _, doc = write_key_files(publisher / "keys", demo_key())
    consumer.mkdir(parents=True)
    (consumer / PUBLISHER_DOC).write_bytes(doc.read_bytes())
    write_json(consumer / CONTRACT, make_contract())
    _publish(publisher, consumer, status="active", generated_at=_now())
    cwd = Path.cwd()
    os.chdir(consumer)
    try:
        _cli("adapter", "pin", "--id", ID, "--version", VERSION, "--hash",
             make_contract()["contract_hash"], "--manifest", MANIFEST, "--publisher-doc",
             PUBLISHER_DOC)  # fmt: skip
    finally:
        os.chdir(cwd)
    return consumer


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The action's checkout and its first two steps, run once: Python found, Affidavit
    installed from $GITHUB_ACTION_PATH into a fresh venv under RUNNER_TEMP."""
    base = tmp_path_factory.mktemp("action")
    action_path = copy_checkout(base / "action")
    workspace = base / "empty-workspace"
    workspace.mkdir()
    done = run_action({}, workspace=workspace, action_path=action_path,
                      runner_temp=base / "runner-temp")  # fmt: skip
    # With no pin file the gate itself cannot run (exit 2): the install steps before it did.
    assert set(done.step_outputs) >= {"python", "install"}, done.log
    bin_dir = Path(done.step_outputs["install"]["bin"])
    assert (bin_dir / "affidavit").exists(), done.log
    return {"action_path": action_path, "steps": done.step_outputs, "bin": bin_dir}


def _gate(installed: dict[str, Any], consumer: Path, tmp: Path, **inputs: str) -> Run:
    return run_action(
        _input_env({**GATE_INPUTS, **inputs}),
        workspace=consumer,
        action_path=installed["action_path"],
        runner_temp=tmp / "runner-temp",
        steps_done={k: installed["steps"][k] for k in ("python", "install")},
    )


def _annotations(log: str, kind: str = "error") -> list[str]:
    return [line for line in log.splitlines() if line.startswith(f"::{kind} ")]


def test_installs_from_the_actions_own_checkout(installed: dict[str, Any]) -> None:
    install = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "install")
    assert "$GITHUB_ACTION_PATH" in install["run"]
    assert ACTION["inputs"]["affidavit-spec"]["default"] == ""
    shown = subprocess.run(
        [str(installed["bin"] / "python"), "-m", "pip", "show", "-f", "affidavit"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert "Name: affidavit" in shown
    assert "Editable project location" not in shown  # a real install, not the dev checkout


def test_pass(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 0, done.log
    assert not _annotations(done.log), done.log
    assert done.outputs == {
        "result": "ok",
        "exit-code": "0",
        "pins": "1",
        "holding": "1",
        "failing": "0",
        "revoked": "0",
        "deprecated": "0",
        "findings": "0",
    }
    assert "### affidavit pins check: OK (exit 0)" in done.summary
    assert f"| `{ID}@{VERSION}` | holds | active |" in done.summary


def test_edited(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    write_json(consumer / CONTRACT, {**make_contract(), "allowed_policy_fields": ["signal_a"]})
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 1, done.log
    errors = _annotations(done.log)
    assert any(
        line.startswith(f"::error file={CONTRACT},title=pin.contract_changed::{ID}@{VERSION}: ")
        for line in errors
    ), errors
    assert (done.outputs["result"], done.outputs["failing"]) == ("failed", "1")
    assert "### affidavit pins check: FAILED (exit 1)" in done.summary
    assert "| `pin.contract_changed` |" in done.summary
    assert "error: pin.check_failed:" in done.log


def test_deleted(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    (consumer / CONTRACT).unlink()
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 1, done.log
    line = _pin_line(consumer)
    assert _annotations(done.log) == [
        f"::error file=pinned_adapters.json,line={line},title=pin.contract_missing::"
        f"{ID}@{VERSION}: declaration missing: no contract file for this pin in contracts/ "
        "(deleted, moved or renamed?)"
    ]
    assert done.outputs["result"] == "failed"
    assert "| `pin.contract_missing` |" in done.summary


def test_revoked(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    _publish(tmp_path / "publisher", consumer, status="revoked", generated_at=_now())
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 3, done.log
    assert _annotations(done.log) == [
        f"::error file=pinned_adapters.json,line={_pin_line(consumer)},title=pin.check_revoked::"
        f"{ID}@{VERSION}: {ID}@{VERSION} is revoked"
    ]
    assert (done.outputs["result"], done.outputs["revoked"]) == ("revoked", "1")
    assert f"| `{ID}@{VERSION}` | REVOKED | revoked |" in done.summary


def test_stale(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    _publish(tmp_path / "publisher", consumer, status="active", generated_at="2025-01-01T00:00:00Z")
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 1, done.log
    (error,) = _annotations(done.log)
    assert error.startswith(f"::error file={MANIFEST},title=pin.manifest_stale::manifest freshness")
    # The age in its two largest non-zero units (freshness._human): "706 days 5 hours", or
    # "706 days 19 minutes" in the first hour of a UTC day, when the hours are 0.
    assert re.search(r"\d+ days( \d+ (hour|minute|second)s?)? ago: ", error), error
    assert "older than the maximum age of 7 days" in error
    assert f"| `{ID}@{VERSION}` | held (the manifest fails) | active |" in done.summary
    assert done.outputs["result"] == "failed"


def test_deprecated_is_a_visible_warning(installed: dict[str, Any], tmp_path: Path) -> None:
    consumer = make_consumer(tmp_path)
    _publish(tmp_path / "publisher", consumer, status="deprecated", generated_at=_now())
    done = _gate(installed, consumer, tmp_path)
    assert done.exit_code == 0, done.log
    assert not _annotations(done.log)
    (warning,) = _annotations(done.log, "warning")
    assert warning.startswith(
        f"::warning file={CONTRACT},title=deprecated contract::{ID}@{VERSION} is deprecated"
    )
    assert done.outputs["deprecated"] == "1"


def test_bad_inputs_are_exit_2_with_the_error_line(
    installed: dict[str, Any], tmp_path: Path
) -> None:
    consumer = make_consumer(tmp_path)
    done = _gate(installed, consumer, tmp_path, **{"publisher-doc": ""})
    assert done.exit_code == 2, done.log
    (error,) = _annotations(done.log)
    assert error.startswith(
        "::error title=affidavit pins check could not run::error: usage.invalid: "
        "--require-signed needs a trusted key"
    )
    assert done.outputs["result"] == "error"
    assert "could not run (exit 2)" in done.summary


def test_an_old_python_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("python3", "python"):
        script = fake / name
        script.write_text('#!/bin/sh\ncase "$*" in *print*) echo 3.10;; *) exit 1;; esac\n')
        script.chmod(0o755)
    done = run_action({}, workspace=tmp_path, action_path=ROOT, runner_temp=tmp_path / "t",
                      path=f"{fake}{os.pathsep}/usr/bin:/bin")  # fmt: skip
    assert done.exit_code == 2
    assert _annotations(done.log) == [
        "::error title=affidavit needs Python 3.11 or later::found Python 3.10 at "
        f"{fake}/python3; add actions/setup-python (python-version: '3.11') before this action"
    ]
    assert "install" not in done.step_outputs  # nothing was installed


def _pin_line(consumer: Path) -> int:
    lines = (consumer / "pinned_adapters.json").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if f'"adapter_id": "{ID}"' in line)
