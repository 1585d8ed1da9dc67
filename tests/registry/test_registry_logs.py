"""The registry logs in one format (issue 33, docs/postgresql.md "Operations"): a real
``registry serve`` process writes JSON lines on stderr, uvicorn's lines included, and a browser's
visit logs no favicon 404; ``--log-format text`` (``AFFIDAVIT_LOG_FORMAT=text``) is for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.processes import RegistryProcess

pytestmark = pytest.mark.network_local


def _visit(server: RegistryProcess) -> None:
    """What a browser opening the explorer asks, and a path that is not there."""
    for path, status in (("/", 200), ("/favicon.ico", 200), ("/v1/health", 200), ("/v1/nope", 404)):
        answer = httpx.get(server.url + path, timeout=10)
        assert answer.status_code == status, (path, answer.text[:200])


def _served(tmp_path: Path, env: dict[str, str] | None = None) -> list[str]:
    server = RegistryProcess(tmp_path / "data", env, access_log=True)
    server.start()
    try:
        _visit(server)
    finally:
        server.stop()  # SIGTERM: a graceful shutdown, logged
    return [line for line in server.stderr_text.decode("utf-8").splitlines() if line.strip()]


def test_every_stderr_line_is_one_json_object(tmp_path: Path) -> None:
    lines = _served(tmp_path)
    records: list[dict[str, Any]] = []
    for line in lines:
        record = json.loads(line)  # not JSON: the test fails naming the line
        assert isinstance(record, dict), line
        assert {"ts", "level", "logger"} <= set(record), line
        assert record["ts"].endswith("Z"), line
        records.append(record)
    loggers = {record["logger"] for record in records}
    assert {"uvicorn.error", "affidavit.registry", "affidavit.registry.access"} <= loggers
    messages = [str(record.get("message", "")) for record in records]
    assert any(m.startswith("registry on http://127.0.0.1:") for m in messages)
    assert "Application shutdown complete." in messages  # uvicorn's own line, as JSON
    access = {r["path"]: r["status"] for r in records if r["logger"] == "affidavit.registry.access"}
    assert access == {"/": 200, "/favicon.ico": 200, "/v1/health": 200, "/v1/nope": 404}


def test_text_for_people(tmp_path: Path) -> None:
    lines = _served(tmp_path, {"AFFIDAVIT_LOG_FORMAT": "text"})
    assert any(line.startswith("registry on http://127.0.0.1:") for line in lines), lines
    assert "Application shutdown complete." in lines
    assert not any(line.startswith('{"ts"') for line in lines), lines
