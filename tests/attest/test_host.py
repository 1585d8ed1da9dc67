"""attest/host.py: the one clock and the one capped file reader."""

from __future__ import annotations

import os
import time
from datetime import UTC
from pathlib import Path

import pytest
from affidavit.attest.host import read_capped, read_key_bytes, utc_now
from affidavit.verify.crypto.trusted_keys import MAX_KEY_FILE_BYTES
from affidavit.verify.json.forms import UTC_TIMESTAMP, format_utc

from tests.conftest import raises_code


def test_utc_now_is_the_system_clock_in_utc() -> None:
    before = time.time()
    now = utc_now()
    assert now.tzinfo is UTC
    assert before - 1 <= now.timestamp() <= time.time() + 1
    assert UTC_TIMESTAMP.fullmatch(format_utc(now))


def test_read_capped(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_capped(path, 10) == b"x" * 10
    assert read_capped(str(path), 9) == b"x" * 10  # limit + 1 bytes: larger than the limit
    assert read_capped(path, 3) == b"xxxx"  # never more
    with raises_code("io.unreadable") as caught:
        read_capped(tmp_path / "missing", 10)
    assert str(caught.value).startswith(str(tmp_path / "missing"))
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    with raises_code("io.unreadable"):
        read_capped(tmp_path, 10)  # a folder


def test_read_capped_reads_at_most_one_byte_past_the_limit() -> None:
    assert read_capped("/dev/zero", 1000) == bytes(1001)  # an endless file ends the read


@pytest.mark.parametrize(("limit", "expected"), [(10_000, 5000), (100, 101), (0, 1)])
def test_read_capped_reads_a_pipe_past_its_size(limit: int, expected: int) -> None:
    # A pipe says it holds 0 bytes (st_size): it is still read to its end, or to limit + 1.
    if not os.path.isdir("/dev/fd"):
        pytest.skip("needs /dev/fd")
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"p" * 5000)
        os.close(write_end)
        assert read_capped(f"/dev/fd/{read_end}", limit) == b"p" * expected
    finally:
        os.close(read_end)


@pytest.mark.parametrize("limit", [0, 1])
def test_read_capped_empty_file(tmp_path: Path, limit: int) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert read_capped(tmp_path / "empty", limit) == b""


def test_read_key_bytes(tmp_path: Path) -> None:
    with raises_code("io.unreadable"):
        read_key_bytes(tmp_path / "missing.pub")
    with raises_code("io.unreadable"):
        read_key_bytes(tmp_path)  # a folder is not a key file
    big = tmp_path / "big.pub"
    big.write_bytes(b"k" * MAX_KEY_FILE_BYTES)
    assert read_key_bytes(big) == b"k" * MAX_KEY_FILE_BYTES
    big.write_bytes(b"k" * (MAX_KEY_FILE_BYTES + 1))
    with raises_code("key.unrecognized", match=f"^{big}: too large"):
        read_key_bytes(big)
