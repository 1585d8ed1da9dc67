"""``affidavit transform apply|list`` as a real process, bytes in and out."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.schemas import assert_output_schema

_CLI = [sys.executable, "-c", "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"]


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*_CLI, *args], input=stdin, capture_output=True, timeout=60, check=False)


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
