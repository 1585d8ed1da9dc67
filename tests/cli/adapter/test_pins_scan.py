"""cli/adapter/pins.py, scan_contract_files: the local files the pin gate checks (found, broken,
skipped)."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.cli.adapter.pins import MAX_CONTRACT_FILE_BYTES, scan_contract_files

from tests.attest.publishing.test_publish_support import make_contract, make_entry
from tests.conftest import raises_code


def test_scan_finds_declarations_and_skips_the_rest(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.json").write_text(json.dumps(make_contract()))
    (tmp_path / "c" / "entry.json").write_text(
        json.dumps(make_entry(None, make_contract())["entry"])
    )
    (tmp_path / "c" / "broken.json").write_text('{"a": 1, "a": 2}')
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "b.json").write_text(json.dumps(make_contract("x.y")))
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.json").write_text(json.dumps(make_contract("x.z")))
    scan = scan_contract_files([tmp_path], [])
    assert [Path(d.source).name for d in scan.declarations] == ["a.json"]
    assert scan.broken == ()
    assert len(scan.skipped) == 1
    assert "json.duplicate_key" in scan.skipped[0]
    with raises_code("io.unreadable"):
        scan_contract_files([tmp_path / "missing"], [])


def test_a_file_too_large_or_unreadable_is_broken_when_it_may_be_a_contract(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b'{"adapter_id": "a.b", "pad": "' + b" " * MAX_CONTRACT_FILE_BYTES + b'"}')
    lock = tmp_path / "package-lock.json"
    lock.write_bytes(b'{"pad": "' + b" " * MAX_CONTRACT_FILE_BYTES + b'"}')
    (tmp_path / "x.adapter_contract.json").mkdir()  # not a file: cannot be read
    scan = scan_contract_files([tmp_path], ["a.b"])
    broken = {Path(b.source).name: b for b in scan.broken}
    assert set(broken) == {"big.json", "x.adapter_contract.json"}
    assert broken["x.adapter_contract.json"].reason == "io.unreadable: Is a directory"
    assert broken["big.json"].reason == f"json.too_large: over {MAX_CONTRACT_FILE_BYTES} bytes"
    assert broken["big.json"].adapter_ids == frozenset({"a.b"})
    assert [s for s in scan.skipped if "package-lock.json" in s] == [
        f"{lock}: json.too_large: over {MAX_CONTRACT_FILE_BYTES} bytes"
    ]
