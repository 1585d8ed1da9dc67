"""A key folder means the same to every verify verb (style.md §16, docs/adr/0016).

The README's own flow: ``keys generate`` writes ``keys/``, ``stamp`` writes the log's signed state
file beside the key (``keys/<key>.logstate-<id>.json``), and ``verify dsse|receipt|bundle
--trusted-keys keys/`` must read that folder as a folder of keys: files that are not keys are
skipped (and listed in ``--json``), never an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from affidavit.attest.stamp import example_contract
from affidavit.cli.main import affidavit
from click.testing import CliRunner, Result

from tests.verify.bundles.test_bundle_support import OUTPUTS, POLICY

ROOT = Path(__file__).resolve().parents[3]


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


@pytest.fixture
def readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's main job in ``tmp_path``: keys, a log, a stamped bundle, its in-toto export,
    a transformation receipt."""
    monkeypatch.chdir(tmp_path)
    Path("contract.json").write_text(json.dumps(example_contract()))
    Path("policy.json").write_text(json.dumps(POLICY.to_json()))
    Path("raw.json").write_text(json.dumps(OUTPUTS["accepted"]))
    Path("source.txt").write_text("  a note\r\n")
    Path("content.txt").write_text("a note")
    steps = [
        ["keys", "generate", "--dir", "keys", "--publisher-id", "acme", "--key-id", "acme-2026"],
        ["log", "init", "log.db", "--key", "keys/acme-2026.key", "--log-id", "acme-log"],
        ["stamp", "--contract", "contract.json", "--adapter-output", "raw.json",
         "--policy", "policy.json", "--deal-id", "deal-1", "--log", "log.db",
         "--key", "keys/acme-2026.key", "--out", "bundle.json"],
        ["export", "intoto", "bundle.json", "--key", "keys/acme-2026.key",
         "--out", "decision.intoto.json"],
        ["receipt", "make", "--source", "source.txt", "--content", "content.txt",
         "--adapter", "notes", "--adapter-version", "1.0.0", "--transform", "newline_normalize",
         "--transform", "whitespace_trim", "--key", "keys/acme-2026.key",
         "--out", "content.txt.receipt.json"],
    ]  # fmt: skip
    for argv in steps:
        result = _run(*argv)
        assert result.exit_code == 0, (argv, result.output)
    assert [p.name for p in Path("keys").glob("*.logstate-*.json")], "stamp wrote no state file"
    return tmp_path


VERBS = {
    "dsse": ["verify", "dsse", "decision.intoto.json", "--bundle", "bundle.json"],
    "receipt": ["verify", "receipt", "content.txt.receipt.json", "--source", "source.txt",
                "--content", "content.txt"],
    "bundle": ["verify", "bundle", "bundle.json"],
}  # fmt: skip


@pytest.mark.parametrize("verb", ["dsse", "receipt", "bundle"])
def test_readme_key_folder_verifies_with_every_verb(readme: Path, verb: str) -> None:
    result = _run(*VERBS[verb], "--trusted-keys", "keys/")
    assert result.exit_code == 0, result.output
    assert "key.unrecognized" not in result.output


@pytest.mark.parametrize("verb", ["dsse", "receipt", "bundle"])
def test_skipped_files_are_listed_in_json(readme: Path, verb: str) -> None:
    result = _run(*VERBS[verb], "--trusted-keys", "keys/", "--json")
    assert result.exit_code == 0, result.output
    trust = json.loads(result.stdout)["trust"]
    skipped = {Path(item["source"]).name for item in trust["skipped"]}
    assert "acme-2026.key" in skipped  # the private key: not a public key file
    assert any(".logstate-" in name for name in skipped)
    keys = {Path(item["source"]).name for item in trust["keys"]}
    assert keys == {"acme-2026.pub", "acme-publisher.json"}


def test_a_folder_in_name_order_subfolders_and_other_files_skipped(tmp_path: Path) -> None:
    from affidavit.cli._trust import read_folder

    from tests.verify.test_trust import KEY, OTHER, VKEY

    (tmp_path / "b.pub").write_text(OTHER.b64)
    (tmp_path / "a.json").write_text(json.dumps({"public_key_base64": KEY.b64}))
    (tmp_path / "c.pub").write_text(VKEY)
    (tmp_path / "sub.pub").mkdir()
    (tmp_path / "big.json").write_bytes(b" " * (65 * 1024))  # not a key document, and large
    root = read_folder(str(tmp_path))
    assert [Path(k.source).name for k in root.keys] == ["a.json", "b.pub", "c.pub"]
    assert sorted(Path(s.source).name for s in root.skipped) == ["big.json", "sub.pub"]


def test_a_folder_without_keys_or_with_a_bad_key_is_exit_2(tmp_path: Path) -> None:
    good = str(ROOT / "vectors" / "bundles" / "stamped-accepted-2.0.0.json")
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "README.md").write_text("keys live here")
    for verb in (["bundle", good], ["dsse", good], ["checkpoint", good], ["anchor", good]):
        result = _run("verify", *verb, "--trusted-keys", str(tmp_path))
        assert result.exit_code == 2, (verb, result.output)
        assert result.stderr.startswith(f"error: usage.invalid: {tmp_path}: no key in it")
    (tmp_path / "bad.pub").write_text("not base64!")
    result = _run("verify", "bundle", good, "--trusted-keys", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: key.bad_base64: {tmp_path / 'bad.pub'}: ")


def test_strict_and_the_aliases_mean_the_same_in_every_verb(readme: Path) -> None:
    key = Path("keys/acme-2026.pub").read_text().strip()
    same = [
        ("--public-key-base64", key), ("--log-key-base64", key),
        ("--public-key", "keys/acme-2026.pub"), ("--publisher-doc", "keys/acme-publisher.json"),
        ("--log-key", "keys/acme-publisher.json"), ("--trusted-keys", "keys"),
    ]  # fmt: skip
    for verb in ("dsse", "receipt", "bundle"):
        for flag, value in same:
            for strict in ((), ("--strict",)):
                result = _run(*VERBS[verb], flag, value, *strict)
                assert result.exit_code == 0, (verb, flag, strict, result.output)
    # --strict, as aigentsy-verify's: no trusted key, not verified (exit 1), with or without it
    for strict in ((), ("--strict",)):
        result = _run("verify", "bundle", "bundle.json", *strict, "--json")
        assert result.exit_code == 1
        assert json.loads(result.stdout)["results"][0]["verdict"] == "unanchored"
