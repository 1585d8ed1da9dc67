"""``affidavit registry``: keys (stored hashed), process-mode failures, publish."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from affidavit.cli.main import affidavit
from affidavit.registry.auth import hash_token
from click.testing import CliRunner


def _run(*args: str, env: dict[str, str] | None = None) -> object:
    return CliRunner().invoke(affidavit, list(args), env=env or {"AFFIDAVIT_REGISTRY_URL": ""})


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    data = tmp_path / "data"
    created = _run(
        "registry",
        "keys",
        "create",
        "--scope",
        "publish",
        "--publisher",
        "acme",
        "--scope",
        "facts:read:team",
        "--label",
        "ci",
        "--data-dir",
        str(data),
        "--json",
    )
    assert created.exit_code == 0, created.output  # type: ignore[attr-defined]
    document = json.loads(created.output)  # type: ignore[attr-defined]
    token = document["api_key"]
    assert token.startswith("afk_")
    assert document["scopes"] == ["publish", "facts:read:team"]
    assert document["publishers"] == ["acme"]
    with sqlite3.connect(data / "registry.db") as db:
        rows = db.execute("SELECT token_sha256 FROM registry_api_keys").fetchall()
        everything = b"".join(
            bytes(str(r), "utf-8") for r in db.execute("SELECT * FROM registry_api_keys")
        )
    assert rows == [(hash_token(token),)]
    assert token.encode() not in everything  # only the digest is stored
    listed = json.loads(_run("registry", "keys", "list", "--data-dir", str(data), "--json").output)  # type: ignore[attr-defined]
    assert listed["keys"][0]["key_id"] == document["key_id"]
    assert "token" not in json.dumps(listed)
    revoked = _run("registry", "keys", "revoke", document["key_id"], "--data-dir", str(data))
    assert revoked.exit_code == 0  # type: ignore[attr-defined]
    again = _run("registry", "keys", "revoke", "0000000000000000", "--data-dir", str(data))
    assert again.exit_code == 2  # type: ignore[attr-defined]


def test_keys_create_takes_the_log_write_scope(tmp_path: Path) -> None:
    # issue 24: POST /v1/log/entries needs a key with log:write
    data = tmp_path / "data"
    made = _run("registry", "keys", "create", "--scope", "log:write", "--data-dir", str(data))
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    listed = json.loads(_run("registry", "keys", "list", "--data-dir", str(data), "--json").output)  # type: ignore[attr-defined]
    assert listed["keys"][0]["scopes"] == ["log:write"]


def test_keys_create_rejects_bad_scope(tmp_path: Path) -> None:
    result = _run("registry", "keys", "create", "--scope", "root", "--data-dir", str(tmp_path))
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "auth.bad_scope" in result.output  # type: ignore[attr-defined]
    newline = _run(
        "registry", "keys", "create", "--scope", "publish\n", "--data-dir", str(tmp_path)
    )
    assert "error: auth.bad_scope:" in newline.output  # type: ignore[attr-defined]


def test_process_mode_without_url_exits_nonzero(tmp_path: Path) -> None:
    contract = tmp_path / "c.json"
    contract.write_text("{}")
    for args in (("registry", "probe"), ("registry", "publish", str(contract))):
        result = _run(*args)
        assert result.exit_code == 2, args  # type: ignore[attr-defined]
        assert "error: registry.url_missing:" in result.output  # type: ignore[attr-defined]


def test_process_mode_unreachable_exits_nonzero() -> None:
    result = _run("registry", "probe", "--registry", "http://127.0.0.1:9")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "error: registry.unavailable:" in result.output  # type: ignore[attr-defined]


def test_publish_reads_strictly(tmp_path: Path) -> None:
    contract = tmp_path / "c.json"
    contract.write_bytes(b'{"a": 1, "a": 2}')
    result = _run("registry", "publish", str(contract), "--registry", "http://127.0.0.1:9")
    assert result.exit_code == 2
    assert "json.duplicate_key" in result.output


def test_publish_key_needs_a_publisher_binding(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    unbound = _run("registry", "keys", "create", "--scope", "publish", "--data-dir", data)
    assert unbound.exit_code == 2  # type: ignore[attr-defined]
    assert unbound.output.startswith("error: auth.bad_publisher: ")  # type: ignore[attr-defined]
    for bad in ("Acme", "acme.", ".acme", "ac me"):
        result = _run(
            "registry",
            "keys",
            "create",
            "--scope",
            "publish",
            "--publisher",
            bad,
            "--data-dir",
            data,
        )
        assert result.output.startswith("error: auth.bad_publisher: "), bad  # type: ignore[attr-defined]
    admin = _run("registry", "keys", "create", "--scope", "admin", "--data-dir", data, "--json")
    assert admin.exit_code == 0  # type: ignore[attr-defined]
    listed = json.loads(_run("registry", "keys", "list", "--data-dir", data, "--json").output)  # type: ignore[attr-defined]
    assert [k["scopes"] for k in listed["keys"]] == [["admin"]]
