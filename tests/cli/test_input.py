"""read_input: a path or stdin, capped, with the one-line error codes every command shares."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from affidavit.cli._common import read_input
from affidavit.verify import errors


def test_reads_a_file_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(b"[1]")
    assert read_input(str(path)) == b"[1]"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"[2]")))
    assert read_input("-") == b"[2]"


@pytest.mark.parametrize(
    ("kind", "code"),
    [("missing", "io.unreadable"), ("folder", "io.unreadable"), ("too-big", "json.too_large")],
)
def test_failures_have_their_codes(tmp_path: Path, kind: str, code: str) -> None:
    big = tmp_path / "big"
    big.write_bytes(b" " * 11)
    path = {"missing": tmp_path / "absent", "folder": tmp_path, "too-big": big}[kind]
    with pytest.raises(errors.AffidavitError) as caught:
        read_input(str(path), max_bytes=10)
    assert caught.value.code == code
    assert caught.value.message.startswith(str(path))
