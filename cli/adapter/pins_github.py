"""The CI gate's report as GitHub Actions reads it (action.yml; issue 37 §5).

``python -m affidavit.cli.adapter.pins_github --report R --stderr E --exit-code N`` reads what
``affidavit adapter pins check --json`` printed (stdout ``R``, stderr ``E``), prints one workflow
command per finding (``::error``) and per deprecated, superseded or inspection-only pin
(``::warning``; docs.github.com, "Workflow commands for GitHub Actions", escapes included), appends
a Markdown table to ``$GITHUB_STEP_SUMMARY`` and the step's outputs (``result``, ``exit-code`` and
the counts) to ``$GITHUB_OUTPUT``, and exits with the gate's code. A gate that could not run gives
one ``::error`` with its error line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

__all__ = ["main", "render"]

RESULTS: Final = {0: "ok", 1: "failed", 3: "revoked"}
_NOT_ACTIVE: Final = ("deprecated", "superseded")
_COUNTS: Final = ("pins", "holding", "failing", "revoked", "deprecated", "findings")


def _data(text: str) -> str:
    # Workflow command data: %, CR and LF are escaped (docs.github.com, "Workflow commands").
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    # Property values also escape ':' and ','.
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(
    kind: str, message: str, *, title: str, file: str | None = None, line: int | None = None
) -> str:
    props = []
    if file:
        props.append(f"file={_property(file)}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={_property(title)}")
    return f"::{kind} {','.join(props)}::{_data(message)}"


class _Paths:
    """Turns the gate's paths into repository-relative ones (annotations need them)."""

    def __init__(self, workspace: str | None, pin_file: str | None) -> None:
        self.workspace = Path(workspace).resolve() if workspace else Path.cwd().resolve()
        self.pin_file = pin_file

    def relative(self, name: str | None) -> str | None:
        """``name`` relative to the workspace; None for a URL or a path outside it."""
        if not name or "://" in name:
            return None
        path = Path(name)
        absolute = path.resolve() if path.is_absolute() else (Path.cwd() / path).resolve()
        try:
            return absolute.relative_to(self.workspace).as_posix()
        except ValueError:
            return None

    def pin_line(self, file: str | None, label: str | None) -> int | None:
        """The line of the pin ``label`` (``id@version``) in the pin file, when ``file`` is it."""
        if not label or not file or file != self.pin_file:
            return None
        adapter_id, _, version = label.rpartition("@")
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        for number, text in enumerate(lines, start=1):
            if f'"{adapter_id}"' not in text or "adapter_id" not in text:
                continue
            nearby = lines[max(0, number - 6) : number + 6]
            if any("adapter_version" in s and f'"{version}"' in s for s in nearby):
                return number
        return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _verdict_word(pin: Mapping[str, Any], ok: bool) -> str:
    if pin.get("problems"):
        return "FAILS"
    if pin.get("revoked_refused"):
        return "REVOKED"
    return "holds" if ok else "held (the manifest fails)"


def render(
    report: Mapping[str, Any] | None, exit_code: int, error_line: str, paths: _Paths
) -> tuple[list[str], str, dict[str, str]]:
    """The workflow commands, the summary's Markdown and the outputs for one gate run."""
    if report is None:
        line = error_line or f"affidavit adapter pins check exited {exit_code} without a report"
        commands = [_command("error", line, title="affidavit pins check could not run")]
        summary = f"### affidavit pins check: could not run (exit {exit_code})\n\n`{line}`\n"
        outputs = {"result": "error", "exit-code": str(exit_code), **dict.fromkeys(_COUNTS, "0")}
        return commands, summary, outputs
    pins: list[Mapping[str, Any]] = list(report.get("pins", []))
    findings: list[Mapping[str, Any]] = list(report.get("findings", []))
    ok = bool(report.get("ok"))
    commands = []
    for finding in findings:
        file = paths.relative(finding.get("file"))
        number = paths.pin_line(finding.get("file"), finding.get("pin"))
        where = f"{finding['pin']}: " if finding.get("pin") else ""
        commands.append(
            _command(
                "error",
                where + str(finding.get("message", "")),
                file=file,
                line=number,
                title=str(finding.get("code") or "affidavit"),
            )
        )
    warned = 0
    for pin in pins:
        label = f"{pin['adapter_id']}@{pin['adapter_version']}"
        lifecycle = pin.get("lifecycle")
        inspection = lifecycle == "revoked" and not pin.get("revoked_refused")
        if lifecycle not in _NOT_ACTIVE and not inspection:
            continue
        warned += 1
        contracts = [s for s in pin.get("sources", []) if s not in ("manifest", "registry")]
        source = contracts[0] if contracts else paths.pin_file
        text = (
            f"{label} is revoked, passing as an inspection-only pin: never for new work"
            if inspection
            else f"{label} is {lifecycle}: move to its replacement (its manifest entry's "
            "replaced_by) before it is revoked"
        )
        commands.append(
            _command(
                "warning",
                text,
                file=paths.relative(source),
                line=paths.pin_line(source, label),
                title=f"{lifecycle} contract",
            )
        )
    result = RESULTS.get(exit_code, "error")
    failing = sum(1 for p in pins if p.get("problems"))
    refused = sum(1 for p in pins if p.get("revoked_refused") and not p.get("problems"))
    outputs = {
        "result": result,
        "exit-code": str(exit_code),
        "pins": str(len(pins)),
        "holding": str(sum(1 for p in pins if p.get("holds"))),
        "failing": str(failing),
        "revoked": str(refused),
        "deprecated": str(warned),
        "findings": str(len(findings)),
    }
    head = "OK" if exit_code == 0 else "FAILED"
    rows = [
        f"### affidavit pins check: {head} (exit {exit_code})",
        "",
        f"`{report.get('pin_file', '')}`: {len(pins)} pins, {outputs['holding']} hold, "
        f"{failing} fail, {refused} revoked, {warned} deprecated or superseded.",
        "",
        "| pin | verdict | lifecycle | contract_hash |",
        "|---|---|---|---|",
    ]
    for pin in pins:
        label = f"{pin['adapter_id']}@{pin['adapter_version']}"
        rows.append(
            f"| `{_cell(label)}` | {_verdict_word(pin, ok)} | {pin.get('lifecycle', '')} | "
            f"`{str(pin.get('contract_hash', ''))[:16]}` |"
        )
    if findings:
        rows += ["", "| code | pin | file | problem |", "|---|---|---|---|"]
        rows += [
            f"| `{f.get('code')}` | {_cell(str(f.get('pin') or ''))} | "
            f"{_cell(str(f.get('file') or ''))} | {_cell(str(f.get('message', '')))} |"
            for f in findings
        ]
    if error_line:
        rows += ["", f"`{_cell(error_line)}`"]
    return commands, "\n".join(rows) + "\n", outputs


def _append(path: str | None, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as sink:
            sink.write(text)


def _read_report(path: Path) -> Mapping[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Render one gate run for GitHub Actions; return the gate's exit code."""
    parser = argparse.ArgumentParser(prog="python -m affidavit.cli.adapter.pins_github")
    parser.add_argument("--report", required=True, help="the gate's --json stdout")
    parser.add_argument("--stderr", required=True, help="the gate's stderr")
    parser.add_argument("--exit-code", required=True, type=int)
    args = parser.parse_args(argv)
    exit_code: int = args.exit_code
    sink = out or sys.stdout
    report = _read_report(Path(args.report))
    try:
        errors_text = Path(args.stderr).read_text(encoding="utf-8", errors="replace")
    except OSError:
        errors_text = ""
    error_lines = [s for s in errors_text.splitlines() if s.startswith("error: ")]
    paths = _Paths(os.environ.get("GITHUB_WORKSPACE"), report.get("pin_file") if report else None)
    commands, summary, outputs = render(
        report, args.exit_code, error_lines[-1] if error_lines else "", paths
    )
    for command in commands:
        print(command, file=sink)
    if report is not None:
        print(
            f"result: {'OK' if args.exit_code == 0 else 'FAILED'} (exit {args.exit_code})",
            file=sink,
        )
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), summary)
    _append(os.environ.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in outputs.items()))
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
