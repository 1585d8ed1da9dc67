"""``affidavit registry migrate|export|import``: exit codes and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.cli.main import affidavit
from click.testing import CliRunner


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(affidavit, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_migrate_export_import_on_the_command_line(tmp_path: Path) -> None:
    data, moved = tmp_path / "data", tmp_path / "moved"
    code, out, _ = _run("registry", "migrate", "--data-dir", str(data), "--json")
    assert code == 0
    assert json.loads(out)["schema"]["log"]["before"] == 0
    # A store with a log: the keys command opens it the way the service does.
    code, _, _ = _run(
        "registry", "keys", "create", "--scope", "facts:write", "--data-dir", str(data)
    )
    assert code == 0
    code, _, err = _run("registry", "export", str(tmp_path / "dump"), "--data-dir", str(data))
    assert code == 2  # no registry key yet to sign the dump with
    assert err.startswith("error: usage.invalid: ")
    keys = data / "keys"
    code, _, _ = _run("keys", "generate", "--dir", str(keys), "--publisher-id", "affidavit-local")
    assert code == 2  # (--key-id is required)
    generate = ("--publisher-id", "affidavit-local", "--key-id", "registry-1")
    assert _run("keys", "generate", "--dir", str(keys), *generate)[0] == 0
    code, out, err = _run("registry", "export", str(tmp_path / "dump"), "--data-dir", str(data))
    assert (code, err) == (0, ""), err
    assert out.startswith("exported ")
    code, _, err = _run("registry", "export", str(tmp_path / "dump"), "--data-dir", str(data))
    assert code == 2
    assert err.startswith("error: usage.invalid: ")
    trusted = ("--log-key", str(keys / "registry-1.pub"))  # moved has no key folder of its own
    code, out, err = _run(
        "registry", "import", str(tmp_path / "dump"), "--data-dir", str(moved), *trusted
    )
    assert (code, err) == (0, ""), err
    assert "(unchanged)" in out
    (tmp_path / "dump" / "log_heads.jsonl").write_text("tampered\n")
    code, _, err = _run(
        "registry", "import", str(tmp_path / "dump"), "--data-dir", str(tmp_path / "x"), *trusted
    )
    assert code == 1
    assert err.startswith("error: registry.dump_file_mismatch: ")
    code, _, err = _run(
        "registry", "migrate", "--database-url", "mysql://nope", "--data-dir", str(data)
    )
    assert code == 2
    assert err.startswith("error: usage.invalid: ")
