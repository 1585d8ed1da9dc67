"""``affidavit log rotate-key`` / ``log keys`` and windowed trusted keys in ``verify bundle``, in
process: exact codes and exit statuses (docs/adr/0011)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import SigningKey, derive_test_key, private_key_pem
from affidavit.attest.log.state import read_state, state_path
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, stamp_bundles
from affidavit.cli.log.group import keys as keys_command
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.treehead import sth_message, verify_sth
from click.testing import CliRunner, Result

from tests.verify.bundles.test_bundle_support import OUTPUTS, POLICY, contract

OLD = derive_test_key("affidavit cli rotation old key")  # TEST-ONLY
NEW = derive_test_key("affidavit cli rotation new key")  # TEST-ONLY
OTHER = derive_test_key("affidavit cli rotation other key")  # TEST-ONLY
LOG_ID = "cli.rotation/log"
T = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # in the past of the test clock (rotation: not future)
T_TEXT = "2026-01-01T00:00:00Z"


def _z(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _key_file(folder: Path, name: str, key: SigningKey) -> Path:
    path = folder / f"{name}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(key))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


def _ok(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _error(result: Result, code: str, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    assert result.stderr.startswith(f"error: {code}: "), result.stderr
    assert "Traceback" not in result.output
    return result.stderr


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A log under old.key with three leaves and a head dated an hour before T."""
    old = _key_file(tmp_path, "old", OLD)
    _key_file(tmp_path, "new", NEW)
    _key_file(tmp_path, "other", OTHER)
    db = tmp_path / "log.db"
    _ok(_run("log", "init", str(db), "--key", str(old), "--log-id", LOG_ID, "--json"))
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        assert _run("log", "append", str(db), str(tmp_path / name)).exit_code == 0
    before = _z(T - dt.timedelta(hours=1))
    _ok(_run("log", "head", str(db), "--timestamp", before, "--json"))
    return db


def _rotate(db: Path, *args: str) -> Result:
    new = db.parent / "new.key"
    return _run("log", "rotate-key", str(db), "--new-key", str(new), *args)


def test_rotate_key_records_signs_and_hands_over(log: Path, tmp_path: Path) -> None:
    old_sth = json.loads(TransparencyLog.open(log).heads()[-1].document)
    document = _ok(_rotate(log, "--at", "2026-01-01T01:00:00+01:00", "--json"))  # T, as a time
    assert {k: document[k] for k in ("ok", "log_id", "previous_key_id", "key_id")} == {
        "ok": True,
        "log_id": LOG_ID,
        "previous_key_id": "old",
        "key_id": "new",
    }
    assert (document["valid_from"], document["tree_size"]) == (T_TEXT, 3)
    assert document["public_key_base64"] == NEW.public_key.b64
    assert document["key_path"] == str((tmp_path / "new.key").resolve())
    assert [(k["key_id"], k["valid_from"], k["valid_until"]) for k in document["keys"]] == [
        ("old", None, T_TEXT),
        ("new", T_TEXT, None),
    ]
    # The new key's state file starts from the handed-over tree (docs/adr/0005 continued).
    state = read_state(state_path((tmp_path / "new.key").resolve(), LOG_ID), NEW.public_key, LOG_ID)
    assert state is not None
    assert state.tree_size == 3
    # `log head` with the recorded key path now signs with the new key (now is after T).
    head = _ok(_run("log", "head", str(log), "--json"))["signed_tree_head"]
    assert head["key_id"] == "new"
    verify_sth(head, NEW.public_key)
    verify_sth(old_sth, OLD.public_key)  # the head before T still verifies with the old key
    assert _run("log", "vkey", str(log)).stdout.split("+")[0] == LOG_ID


def test_rotate_key_text_output(log: Path) -> None:
    result = _rotate(log, "--at", T_TEXT)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"rotated log {LOG_ID!r}: key 'old' valid until {T_TEXT}, key 'new' from {T_TEXT} "
        "(tree size 3)\n"
    )


def test_heads_outside_the_signers_window_are_refused(log: Path, tmp_path: Path) -> None:
    assert _rotate(log, "--at", T_TEXT).exit_code == 0
    before, after = _z(T - dt.timedelta(seconds=1)), _z(T + dt.timedelta(seconds=1))
    _error(_run("log", "head", str(log), "--timestamp", before), "log.key_outside_window")
    _error(
        _run("log", "head", str(log), "--checkpoint", "--timestamp", before),
        "log.key_outside_window",
    )
    old = str(tmp_path / "old.key")
    _error(
        _run("log", "head", str(log), "--key", old, "--timestamp", after), "log.key_outside_window"
    )
    _error(
        _run("log", "head", str(log), "--key", old, "--timestamp", T_TEXT),
        "log.key_outside_window",
    )
    backdated = _ok(_run("log", "head", str(log), "--key", old, "--timestamp", before, "--json"))
    assert backdated["signed_tree_head"]["key_id"] == "old"
    stranger = str(tmp_path / "other.key")
    _error(_run("log", "head", str(log), "--key", stranger), "log.key_mismatch")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--at", "2026-01-01T00:00:00"], "log.bad_timestamp"),  # no offset
        (["--at", "2026-01-01 00:00:00Z"], "log.bad_timestamp"),
        (["--at", "2026-02-30T00:00:00Z"], "log.bad_timestamp"),
        (["--at", "2025-12-31T23:00:00Z"], "log.rotation_invalid"),  # the head's own time
        (["--at", "2025-12-31T23:30:00+01:00"], "log.rotation_invalid"),  # 22:30Z: before it
        (["--at", "2999-01-01T00:00:00Z"], "log.rotation_invalid"),  # the future
        (["--at", T_TEXT, "--key", "other.key"], "log.key_mismatch"),  # not the log's key
    ],
)
def test_bad_rotations_exit_2_with_exact_codes(
    log: Path, tmp_path: Path, args: list[str], code: str
) -> None:
    args = [str(tmp_path / a) if a.endswith(".key") else a for a in args]
    _error(_rotate(log, *args), code)
    listed = CliRunner().invoke(keys_command, [str(log), "--json"])
    assert len(json.loads(listed.stdout)["keys"]) == 1  # nothing recorded


def test_second_rotation_overlapping_or_reusing_is_refused(log: Path, tmp_path: Path) -> None:
    assert _rotate(log, "--at", T_TEXT).exit_code == 0
    other = str(tmp_path / "other.key")
    rotate = ["log", "rotate-key", str(log), "--new-key"]
    # The same instant again, written with an offset: a string compare would see a later time.
    _error(_run(*rotate, other, "--at", "2026-01-01T01:00:00+01:00"), "log.rotation_invalid")
    _error(_run(*rotate, str(tmp_path / "old.key"), "--at", "2026-06-01T00:00:00Z"),
           "log.rotation_invalid")  # fmt: skip  # back to an old key: a key gets one window
    # Only the current key may hand over: the old key cannot rotate the log again.
    _error(
        _run(*rotate, other, "--key", str(tmp_path / "old.key"), "--at", "2026-06-01T00:00:00Z"),
        "log.key_mismatch",
    )
    assert _run(*rotate, other, "--at", "2026-06-01T00:00:00Z").exit_code == 0


def test_log_keys_lists_windows(log: Path) -> None:
    assert _rotate(log, "--at", T_TEXT).exit_code == 0
    text = CliRunner().invoke(keys_command, [str(log)])
    assert text.exit_code == 0
    assert text.stdout.splitlines() == [
        f"old\t{OLD.public_key.b64}\t[-inf, {T_TEXT})",
        f"new\t{NEW.public_key.b64}\t[{T_TEXT}, +inf)",
    ]


# -- verify bundle --trusted-keys with windows ---------------------------------------------------


def _stamp(db: Path, key: SigningKey, when: dt.datetime, deal: str) -> dict[str, Any]:
    with TransparencyLog.open(db, key) as opened:
        item = StampItem(deal, contract(), OUTPUTS["accepted"])
        (bundle,) = stamp_bundles(opened, [item], POLICY, when=when)
    return bundle


def _trust(folder: Path, entries: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir()
    for name, document in entries.items():
        (folder / f"{name}.json").write_text(json.dumps(document))
    return folder


def _verify(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["verify", *args])


def test_verify_bundle_honours_the_windows_of_a_rotated_log(log: Path, tmp_path: Path) -> None:
    before = _stamp(log, OLD, T - dt.timedelta(minutes=30), "before")
    assert _rotate(log, "--at", T_TEXT).exit_code == 0
    after = _stamp(log, NEW, T + dt.timedelta(minutes=30), "after")
    # The old key signing a head dated after T: the log refuses it, a rogue signer may not.
    forged = json.loads(json.dumps(after))
    sth = forged["signed_tree_head"]
    message = sth_message(sth["log_id"], sth["tree_size"], sth["root_hash"], sth["timestamp"])
    sth["signature"], sth["key_id"] = OLD.sign_b64(message), "old"
    files = {}
    for name, bundle in (("before", before), ("after", after), ("forged", forged)):
        files[name] = tmp_path / f"{name}.bundle.json"
        files[name].write_text(json.dumps(bundle))
    keys = json.loads(CliRunner().invoke(keys_command, [str(log), "--json"]).stdout)["keys"]
    # The old key's window closes at 01:00+01:00 (= T): as text that sorts after the forged
    # head's "2026-01-01T00:30:00Z", so a string compare would accept it.
    keys[0]["valid_until"] = "2026-01-01T01:00:00+01:00"
    trust = _trust(tmp_path / "trust", {"old": keys[0], "new": keys[1]})
    for name in ("before", "after"):
        result = _verify("bundle", str(files[name]), "--trusted-keys", str(trust))
        assert result.exit_code == 0, result.output
    result = _verify("bundle", str(files["forged"]), "--trusted-keys", str(trust), "--json")
    assert result.exit_code == 1
    (verdict,) = json.loads(result.stdout)["results"]
    assert (verdict["verdict"], verdict["code"]) == ("failed", "treehead.key_outside_window")
    # --jobs workers get the windows too; --publisher-doc / --public-key files as well.
    folder = tmp_path / "all"
    folder.mkdir()
    for name, path in files.items():
        (folder / f"{name}.json").write_text(path.read_text())
    result = _verify("bundle", str(folder), "--trusted-keys", str(trust), "--jobs", "2", "--json")
    summary = json.loads(result.stdout)["summary"]
    assert (summary["verified"], summary["failed"], result.exit_code) == (2, 1, 1)
    result = _verify("bundle", str(files["forged"]), "--public-key", str(trust / "old.json"))
    assert result.exit_code == 1
    assert "treehead.key_outside_window" in result.output
    # Keys without windows behave as before: the old key alone verifies the forged head.
    plain = _verify("bundle", str(files["forged"]), "--public-key-base64", OLD.public_key.b64)
    assert plain.exit_code == 0, plain.output
    # The same key also given without a window is trusted at every time.
    both = _verify(
        "bundle", str(files["forged"]), "--trusted-keys", str(trust),
        "--public-key-base64", OLD.public_key.b64,
    )  # fmt: skip
    assert both.exit_code == 0, both.output


@pytest.mark.parametrize(
    "window",
    [
        {"valid_until": "2026-01-01T00:00:00"},  # no offset
        {"valid_from": "2026-01-01"},
        {"valid_from": 0},
        {"valid_from": "2026-01-01T00:00:00Z", "valid_until": "2025-01-01T00:00:00Z"},
    ],
)
def test_malformed_window_fields_exit_2(tmp_path: Path, window: dict[str, Any]) -> None:
    trust = _trust(tmp_path / "trust", {"k": {"public_key_base64": OLD.public_key.b64, **window}})
    bundle = tmp_path / "b.json"
    bundle.write_text("{}")
    _error(_verify("bundle", str(bundle), "--trusted-keys", str(trust)), "key.window_invalid")


def test_commands_that_cannot_check_a_window_refuse_a_windowed_key(tmp_path: Path) -> None:
    key = tmp_path / "k.json"
    key.write_text(json.dumps({"public_key_base64": OLD.public_key.b64, "valid_until": T_TEXT}))
    document = tmp_path / "attestation.json"
    document.write_text("{}")
    _error(
        _verify("attestation", str(document), "--public-key", str(key)), "key.window_unsupported"
    )
    # verify anchor --log-key honours windows now (tests/cli/verify/test_verify_anchor_cli.py):
    # the key is read, and what fails next is the receipt itself
    receipt = tmp_path / "receipt.json"
    receipt.write_text("{}")
    result = _verify("anchor", str(receipt), "--log-key", str(key))
    assert result.exit_code == 2
    assert result.output.startswith("error: anchor.malformed: ")
