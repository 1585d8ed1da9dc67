"""``affidavit keys generate`` in-process."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from affidavit.attest.keyring import load_signing_key
from affidavit.cli.main import affidavit
from click.testing import CliRunner


def test_keys_generate_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        affidavit,
        [
            "keys",
            "generate",
            "--dir",
            str(tmp_path),
            "--publisher-id",
            "demo",
            "--key-id",
            "demo-1",
            "--manifest-url",
            "https://demo.example/m.json",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    key_path = Path(report["private_key_path"])
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o600
    key = load_signing_key(key_path)
    assert key.public_key.b64 == report["public_key_base64"]
    assert key.publisher_id == "demo"
    document = json.loads((tmp_path / "demo-publisher.json").read_text())
    assert document["manifest_url"] == "https://demo.example/m.json"


def test_keys_generate_text_then_refuses_overwrite(tmp_path: Path) -> None:
    args = ["keys", "generate", "--dir", str(tmp_path), "--publisher-id", "p", "--key-id", "k"]
    first = CliRunner().invoke(affidavit, args)
    assert first.exit_code == 0, first.output
    assert "0600" in first.stdout
    before = (tmp_path / "k.key").read_bytes()
    second = CliRunner().invoke(affidavit, args)
    assert second.exit_code == 2
    assert second.stderr.startswith("error: io.exists: ")
    assert (tmp_path / "k.key").read_bytes() == before


def test_keys_generate_bad_id_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        affidavit,
        ["keys", "generate", "--dir", str(tmp_path), "--publisher-id", "../x", "--key-id", "k"],
    )
    assert result.exit_code == 2
    assert "error: usage.invalid" in result.stderr
    assert list(tmp_path.iterdir()) == []
