"""`affidavit log ...` in-process: outputs verify with the verifier side, errors are one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.cli.main import affidavit
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import (
    parse_verifier_key,
    verifier_key_string,
    verify_checkpoint,
)
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.json.canonical import py_compact
from click.testing import CliRunner, Result

KEY = derive_test_key("affidavit cli log key")  # TEST-ONLY
OTHER = derive_test_key("affidavit cli other key")  # TEST-ONLY
LOG_ID = "cli.test/log"


def _key_file(folder: Path, name: str, key: object) -> Path:
    path = folder / f"{name}.key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(private_key_pem(key))  # type: ignore[arg-type]
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["log", *args])


def _json(result: Result) -> dict[str, object]:
    assert result.exit_code == 0, result.output
    document: dict[str, object] = json.loads(result.stdout)
    return document


@pytest.fixture
def db(tmp_path: Path) -> Path:
    key_file = _key_file(tmp_path, "log", KEY)
    path = tmp_path / "log.db"
    created = _json(_run("init", str(path), "--key", str(key_file), "--log-id", LOG_ID, "--json"))
    assert created["public_key_base64"] == KEY.public_key.b64
    assert created["key_path"] == str(key_file.resolve())
    return path


def _files(tmp_path: Path) -> list[Path]:
    a = tmp_path / "a.json"
    a.write_text('{"b": 1.0, "a": [1, 2]}')
    b = tmp_path / "b.bin"
    b.write_bytes(b"\x00\xffraw bytes")
    return [a, b]


def test_append_raw_and_py_compact_leaves(db: Path, tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    raw = _json(_run("append", str(db), str(a), str(b), "--json"))
    assert raw["tree_size"] == 2
    assert raw["appended"] == [
        {"file": str(a), "index": 0, "leaf_hash": merkle.leaf_hash(a.read_bytes()).hex()},
        {"file": str(b), "index": 1, "leaf_hash": merkle.leaf_hash(b.read_bytes()).hex()},
    ]
    compact = _json(_run("append", str(db), "--leaf-form", "py-compact", str(a), "--json"))
    expected = merkle.leaf_hash(py_compact(json.loads(a.read_text())))
    assert expected == merkle.leaf_hash(b'{"a":[1,2],"b":1.0}')
    assert compact["appended"] == [{"file": str(a), "index": 2, "leaf_hash": expected.hex()}]
    human = _run("append", str(db), str(b))
    assert human.exit_code == 0
    assert human.stdout.startswith("3\t")


def test_prove_and_consistency_verify(db: Path, tmp_path: Path) -> None:
    files = _files(tmp_path) * 3
    _json(_run("append", str(db), *map(str, files), "--json"))
    leaves = [merkle.leaf_hash(f.read_bytes()) for f in files]
    proof = _json(_run("prove", str(db), "--index", "4", "--size", "5", "--json"))
    inclusion = proof["merkle_inclusion"]
    assert isinstance(inclusion, dict)
    path = [bytes.fromhex(step["hash"]) for step in inclusion["proof"]]
    merkle.verify_inclusion(leaves[4], 4, 5, path, bytes.fromhex(inclusion["merkle_root"]))
    assert inclusion["merkle_root"] == merkle.root_of(leaves[:5]).hex()
    cons = _json(_run("consistency", str(db), "--from", "2", "--json"))["consistency"]
    assert isinstance(cons, dict)
    merkle.verify_consistency(
        2,
        6,
        [bytes.fromhex(h) for h in cons["proof"]],
        merkle.root_of(leaves[:2]),
        merkle.root_of(leaves),
    )
    human = _run("prove", str(db), "--index", "0")
    assert human.exit_code == 0
    assert f"merkle_root: {merkle.root_of(leaves).hex()}" in human.stdout
    # log prove is log proof --inclusion under its old name (hidden, kept for scripts)
    same = _run("proof", str(db), "--index", "4", "--size", "5", "--inclusion", "--json")
    assert _json(same) == proof
    assert _run("proof", str(db), "--index", "0", "--inclusion").stdout == human.stdout
    assert "prove" not in _run("--help").stdout
    for wrong in (["--size", "5"], ["--inclusion", "--out", "x"], ["--inclusion"]):
        args = ["proof", str(db), *(["--index", "0"] if wrong != ["--inclusion"] else []), *wrong]
        assert _run(*args).exit_code == 2, wrong
    assert _run("consistency", str(db), "--from", "3", "--to", "4").stdout.count("proof: ") == 3


def test_head_uses_the_recorded_key_path(db: Path, tmp_path: Path) -> None:
    _json(_run("append", str(db), *map(str, _files(tmp_path)), "--json"))
    out = _json(_run("head", str(db), "--timestamp", "2025-02-03T04:05:06Z", "--json"))
    sth = out["signed_tree_head"]
    assert isinstance(sth, dict)
    verified = verify_sth(sth, KEY.public_key)
    assert (verified.tree_size, verified.timestamp) == (2, "2025-02-03T04:05:06Z")
    assert json.loads(_run("head", str(db)).stdout)["tree_size"] == 2


def test_head_checkpoint_verifies(db: Path, tmp_path: Path) -> None:
    _json(_run("append", str(db), *map(str, _files(tmp_path)), "--json"))
    result = _run("head", str(db), "--checkpoint", "--origin", "example.org/ck")
    assert result.exit_code == 0, result.output
    vkey = parse_verifier_key(verifier_key_string("example.org/ck", KEY.public_key))
    verified = verify_checkpoint(result.stdout, [vkey], origin="example.org/ck")
    assert verified.checkpoint.tree_size == 2
    as_json = _json(_run("head", str(db), "--checkpoint", "--json"))
    assert str(as_json["checkpoint"]).startswith(f"{LOG_ID}\n2\n")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["prove", "{db}", "--index", "0"], "log.index_out_of_range"),
        (["consistency", "{db}", "--from", "1", "--to", "3"], "log.size_out_of_range"),
        (["head", "{db}", "--key", "{other}"], "log.key_mismatch"),
        (["head", "{db}", "--timestamp", "yesterday"], "log.bad_timestamp"),
        # strict YYYY-MM-DDTHH:MM:SSZ (verify/json/forms.py); strptime took unpadded fields
        (["head", "{db}", "--timestamp", "2025-2-3T4:5:6Z"], "log.bad_timestamp"),
        (["head", "{db}", "--origin", "x"], "usage.invalid"),
        (["append", "{db}", "--leaf-form", "py-compact", "{bad}"], "json.syntax"),
        (["append", "{absent}", "{bad}"], "store.missing"),
        (["append", "{junk}", "{bad}"], "store.unreadable"),
        (["init", "{db}", "--key", "{other}", "--log-id", "x"], "log.exists"),
        (["init", "{new}", "--key", "{other}", "--log-id", "a|b"], "log.bad_log_id"),
    ],
)
def test_errors_are_one_line_exit_2(db: Path, tmp_path: Path, args: list[str], code: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 200)
    names = {
        "db": str(db),
        "other": str(_key_file(tmp_path, "other", OTHER)),
        "bad": str(bad),
        "absent": str(tmp_path / "absent.db"),
        "junk": str(junk),
        "new": str(tmp_path / "new.db"),
    }
    result = _run(*(a.format(**names) for a in args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {code}:"), lines[0]
    assert not (tmp_path / "absent.db").exists()


def test_failed_batch_appends_nothing(db: Path, tmp_path: Path) -> None:
    a, _ = _files(tmp_path)
    result = _run("append", str(db), str(a), str(tmp_path / "missing.bin"))
    assert result.exit_code == 2
    assert "io.unreadable" in result.stderr
    assert _run("prove", str(db), "--index", "0").exit_code == 2  # still empty


def test_head_without_any_key(tmp_path: Path) -> None:
    from affidavit.attest.log.transparency import TransparencyLog

    TransparencyLog.create(tmp_path / "l.db", KEY, LOG_ID).close()  # no key path recorded
    result = _run("head", str(tmp_path / "l.db"))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: log.no_signing_key:")


# -- the signed state beside the key (docs/adr/0005) ---------------------------------------------


def test_log_key_is_bound_to_its_log(db: Path, tmp_path: Path) -> None:
    """Reproduction: with the database deleted, ``log init`` started a second, empty history
    under the same key and log ID, and ``log head`` signed it."""
    files = _files(tmp_path)
    _json(_run("append", str(db), *map(str, files), "--json"))
    _json(_run("head", str(db), "--json"))
    states = list(tmp_path.glob("log.key.logstate-*.json"))
    assert len(states) == 1
    assert states[0].stat().st_mode & 0o777 == 0o600
    assert db.stat().st_mode & 0o777 == 0o600
    db.unlink()
    again = _run("init", str(db), "--key", str(tmp_path / "log.key"), "--log-id", LOG_ID)
    assert again.exit_code == 2
    assert again.output.startswith("error: log.state_mismatch: ")
    assert not db.exists()


def test_head_refuses_a_store_that_does_not_extend_the_signed_state(
    db: Path, tmp_path: Path
) -> None:
    files = _files(tmp_path)
    _json(_run("append", str(db), *map(str, files), "--json"))
    _json(_run("head", str(db), "--json"))
    other = tmp_path / "other"
    other.mkdir()
    forked = other / "log.db"  # another history, same key file and log ID, no state of its own
    from affidavit.attest.log.transparency import TransparencyLog

    with TransparencyLog.create(forked, KEY, LOG_ID, key_path=str(tmp_path / "log.key")) as log:
        log.append([b"something else"])
    refused = _run("head", str(forked))
    assert refused.exit_code == 2
    assert refused.output.startswith("error: log.state_mismatch: ")
