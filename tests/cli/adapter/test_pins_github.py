"""cli/adapter/pins_github.py: workflow-command escaping and which paths an annotation names
(docs.github.com, "Workflow commands for GitHub Actions"). The Action end to end:
tests/cli/adapter/test_action.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from affidavit.cli.adapter import pins_github


def _report(file: str | None, message: str = "m") -> dict[str, object]:
    return {
        "ok": False,
        "pin_file": "pinned_adapters.json",
        "pins": [],
        "findings": [{"code": "pin.contract_changed", "pin": None, "file": file,
                      "message": message}],
    }  # fmt: skip


def test_data_and_properties_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = pins_github._Paths(str(tmp_path), "pinned_adapters.json")
    report = _report("contracts/a,b:c.json", "100% sure\nsecond line")
    commands, _, _ = pins_github.render(report, 1, "", paths)
    assert commands == [
        "::error file=contracts/a%2Cb%3Ac.json,title=pin.contract_changed::"
        "100%25 sure%0Asecond line"
    ]


@pytest.mark.parametrize(
    "file", ["https://registry.example/specs/m.json", "/elsewhere/m.json", "../outside.json", None]
)
def test_no_file_property_for_a_url_or_a_path_outside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str | None
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    paths = pins_github._Paths(str(workspace), "pinned_adapters.json")
    commands, _, _ = pins_github.render(_report(file), 1, "", paths)
    assert commands == ["::error title=pin.contract_changed::m"]


def test_an_absolute_path_inside_the_workspace_is_made_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    paths = pins_github._Paths(str(tmp_path), "pinned_adapters.json")
    commands, _, _ = pins_github.render(_report(str(tmp_path / "c" / "a.json")), 1, "", paths)
    assert commands == ["::error file=c/a.json,title=pin.contract_changed::m"]


def test_main_without_a_report_is_one_error_and_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.json").write_text("")
    (tmp_path / "stderr.txt").write_text("error: io.unreadable: pinned_adapters.json: gone\n")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    sink = io.StringIO()
    code = pins_github.main(["--report", str(tmp_path / "report.json"), "--stderr",
                             str(tmp_path / "stderr.txt"), "--exit-code", "2"], sink)  # fmt: skip
    assert code == 2
    assert sink.getvalue() == (
        "::error title=affidavit pins check could not run::"
        "error: io.unreadable: pinned_adapters.json: gone\n"
    )
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    assert (outputs["result"], outputs["exit-code"], outputs["pins"]) == ("error", "2", "0")
    assert "could not run (exit 2)" in (tmp_path / "summary.md").read_text()
    json.dumps(outputs)
