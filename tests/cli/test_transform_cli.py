"""``affidavit transform apply|list`` as a real process, bytes in and out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.schemas import assert_output_schema

_CLI = [sys.executable, "-c", "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"]


def _run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*_CLI, *args], input=stdin, capture_output=True, timeout=60, check=False, env=env
    )


def test_apply_chain_bytes_in_bytes_out() -> None:
    src = b"  Hello \r\n\r\n\r\n\r\n\r\n world \xf0\x9f\x98\x80\r\n"
    done = _run(
        "transform",
        "apply",
        "newline_normalize",
        "line_trim",
        "whitespace_collapse_internal",
        stdin=src,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello\n\n\nworld \U0001f600\n".encode()
    assert done.stderr == b""


def test_apply_json_describes_source_and_content() -> None:
    # issue 22: every command takes --json; apply's document names the chain, and the source and
    # content as a receipt does (sha256, size), with the content's text.
    src = b"  a \r\nb  "
    done = _run("transform", "apply", "newline_normalize", "whitespace_trim", "--json", stdin=src)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert_output_schema("transform apply", document)
    content = b"a \nb"
    assert document == {
        "ok": True,
        "transformations": ["newline_normalize", "whitespace_trim"],
        "source": {"sha256": hashlib.sha256(src).hexdigest(), "size": len(src)},
        "content": {
            "sha256": hashlib.sha256(content).hexdigest(),
            "size": len(content),
            "text": content.decode(),
        },
    }
    refused = _run("transform", "apply", "whitespace_trim", "--json", stdin=b"\xff")
    assert (refused.returncode, refused.stdout) == (2, b"")


def test_apply_replaces_invalid_only_when_declared_first() -> None:
    done = _run("transform", "apply", "utf8_replace_invalid", "whitespace_trim", stdin=b" a\xff ")
    assert (done.returncode, done.stdout) == (0, "a\ufffd".encode())
    done = _run("transform", "apply", "whitespace_trim", stdin=b" a\xff ")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.startswith(b"error: transform.not_utf8: ")


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("strip_tool_chrome", b"transform.unimplemented"),
        ("cursor.composer_ordering", b"transform.unimplemented"),
        ("NotAName", b"transform.name_invalid"),
    ],
)
def test_apply_refuses(name: str, code: bytes) -> None:
    done = _run("transform", "apply", "line_trim", name, stdin=b"x")
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.startswith(b"error: " + code + b": ")
    assert b"Traceback" not in done.stderr


def test_list_text_and_json() -> None:
    text = _run("transform", "list")
    assert text.returncode == 0
    assert text.stdout.decode().splitlines()[:2] == [
        "utf8_replace_invalid\treference",
        "newline_normalize\treference",
    ]
    done = _run("transform", "list", "--json")
    assert done.returncode == 0
    document = json.loads(done.stdout)
    assert_output_schema("transform list", document)
    assert [t["name"] for t in document["transforms"]][:7] == [
        "utf8_replace_invalid",
        "newline_normalize",
        "whitespace_trim",
        "whitespace_collapse_internal",
        "line_trim",
        "line_join_spaces",
        "blank_line_drop",
    ]
    assert "strip_tool_chrome" in document["reserved_unimplemented"]


_PLUGIN = """
def composer_ordering(text):
    return "\\n".join(sorted(text.split("\\n")))

def strip_tool_chrome(text):
    return text.replace("<tool/>", "")
"""


def _plugin_env(tmp_path: Path, *entry_points: str) -> dict[str, str]:
    """An environment whose sys.path holds a fake installed plugin distribution."""
    (tmp_path / "affidavit_cli_plugin_e.py").write_text(_PLUGIN, encoding="utf-8")
    info = tmp_path / "affidavit_cli_plugin_e-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: affidavit-cli-plugin-e\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[affidavit.transforms]\n" + "\n".join(entry_points) + "\n", encoding="utf-8"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    return env


def test_plugins_listed_and_applied(tmp_path: Path) -> None:
    env = _plugin_env(
        tmp_path,
        "cursor.composer_ordering = affidavit_cli_plugin_e:composer_ordering",
        "strip_tool_chrome = affidavit_cli_plugin_e:strip_tool_chrome",
    )
    done = _run("transform", "list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert_output_schema("transform list", document)
    assert document["transforms"][7:] == [
        {"name": "cursor.composer_ordering", "kind": "plugin"},
        {"name": "strip_tool_chrome", "kind": "plugin"},
    ]
    assert "strip_tool_chrome" not in document["reserved_unimplemented"]
    done = _run(
        "transform",
        "apply",
        "strip_tool_chrome",
        "cursor.composer_ordering",
        "line_trim",
        stdin=b"b <tool/>\na\r",
        env=env,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"a\nb", b"")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("cursor.broken = affidavit_cli_plugin_e:no_such_function", b"transform.plugin_invalid"),
        ("line_trim = affidavit_cli_plugin_e:composer_ordering", b"transform.plugin_conflict"),
    ],
)
def test_broken_plugin_is_an_error(tmp_path: Path, line: str, code: bytes) -> None:
    env = _plugin_env(tmp_path, line)
    for args in (("list",), ("apply", "cursor.composer_ordering")):
        done = _run("transform", *args, stdin=b"x", env=env)
        assert done.returncode == 2
        assert done.stdout == b""
        assert done.stderr.startswith(b"error: " + code + b": ")
        assert b"Traceback" not in done.stderr
