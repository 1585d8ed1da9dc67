"""``affidavit verify bundle`` / ``verify attestation`` in-process: exit codes, --json schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from click.testing import CliRunner

from tests.schemas import assert_output_schema
from tests.verify.bundles.test_bundle_support import LOG_KEY, OTHER_KEY, OUTPUTS, edit, stamp

KEY = LOG_KEY.public_key.b64


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bundles")
    for deal, bundle in stamp(OUTPUTS).items():
        (folder / f"{deal}.json").write_text(json.dumps(bundle))
    return folder


def _run(*args: str) -> Any:
    return CliRunner().invoke(affidavit, ["verify", *args], catch_exceptions=False)


def _json(*args: str) -> dict[str, Any]:
    result = _run(*args, "--json")
    document: dict[str, Any] = json.loads(result.output)
    assert_output_schema(f"verify {args[0]}", document)
    document["exit_code"] = result.exit_code
    return document


def test_verified_with_trusted_key(bundles: Path) -> None:
    result = _run("bundle", str(bundles / "accepted.json"), "--public-key-base64", KEY)
    assert result.exit_code == 0, result.output
    assert "accepted.json: verified" in result.output
    document = _json("bundle", str(bundles), "--public-key-base64", KEY)
    assert document["summary"] == {"total": 4, "verified": 4, "unanchored": 0, "failed": 0,
                                   "unreadable": 0, "by_code": {}, "skipped": 0}  # fmt: skip
    assert document["exit_code"] == 0


def test_unanchored_without_key_says_how(bundles: Path) -> None:
    result = _run("bundle", str(bundles / "accepted.json"))
    assert result.exit_code == 1
    assert "bundle.unanchored" in result.output
    assert "--public-key-base64" in result.output


def test_untrusted_key_fails(bundles: Path) -> None:
    document = _json(
        "bundle", str(bundles / "accepted.json"), "--public-key-base64", OTHER_KEY.public_key.b64
    )
    assert document["exit_code"] == 1
    assert document["results"][0]["code"] == "treehead.signature_bad"


def test_trusted_keys_dir_and_publisher_doc(bundles: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "log.pub").write_text(KEY + "\n")
    assert _run("bundle", str(bundles), "--trusted-keys", str(keys)).exit_code == 0
    doc = tmp_path / "publisher.json"
    doc.write_text(
        json.dumps({"publisher_id": "t", "publisher_key_id": "k", "public_key_base64": KEY})
    )
    assert _run("bundle", str(bundles), "--publisher-doc", str(doc), "--jobs", "2").exit_code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _run("bundle", str(bundles), "--trusted-keys", str(empty))
    assert result.exit_code == 2  # an empty trust set is an error, not a pass


def test_tampered_names_the_step(bundles: Path, tmp_path: Path) -> None:
    bundle = json.loads((bundles / "rejected.json").read_text())
    forged = edit(bundle, lambda b: b["events"][-1]["payload"].update(decision="auto_accept"))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    result = _run("bundle", str(path), "--public-key-base64", KEY)
    assert result.exit_code == 1
    assert "failed at bundle_hash: bundle.hash_mismatch" in result.output


@pytest.mark.parametrize(("content", "code"), [("{", "json.syntax"), ("[1]", "bundle.malformed")])
def test_unreadable_exit_2_one_line(tmp_path: Path, content: str, code: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    document = _json("bundle", str(path), "--public-key-base64", KEY)
    assert (document["exit_code"], document["results"][0]["code"]) == (2, code)
    missing = _json("bundle", str(tmp_path / "nope.json"), "--public-key-base64", KEY)
    assert (missing["exit_code"], missing["results"][0]["code"]) == (2, "io.unreadable")


def test_mixed_inputs_take_the_largest_exit_code(bundles: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    result = _run("bundle", str(bundles / "accepted.json"), str(tmp_path / "bad.json"),
                  "--public-key-base64", KEY)  # fmt: skip
    assert result.exit_code == 2
    assert "2 bundle(s): 1 verified, 1 unreadable" in result.output


def test_bad_key_is_usage_error(bundles: Path) -> None:
    result = _run("bundle", str(bundles), "--public-key-base64", "not-base64")
    assert result.exit_code == 2
    assert "key.bad_base64" in result.output


def test_attestation(peer_vectors: Path) -> None:
    folder = peer_vectors / "aigentsy"
    sample = str(folder / "sample_attestation.json")
    verified = _json("attestation", sample, "--publisher-doc", str(folder / "sample_key.json"))
    assert (verified["exit_code"], verified["results"][0]["verdict"]) == (0, "verified")
    unanchored = _json("attestation", sample)
    assert (unanchored["exit_code"], unanchored["results"][0]["code"]) == (
        1,
        "attestation.unanchored",
    )


def test_peer_sample_bundle_unanchored(peer_vectors: Path) -> None:
    document = _json("bundle", str(peer_vectors / "aigentsy" / "sample_bundle.json"))
    result = document["results"][0]
    steps = {s["name"]: s["status"] for s in result["steps"]}
    assert (steps["bundle_hash"], steps["event_chain"], result["verdict"]) == (
        "ok",
        "ok",
        "unanchored",
    )


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"deal_id": "d", "deal_id": "e"}', "json.duplicate_key"),
        (b'{"x": NaN}', "json.non_finite"),
        (b"[" * 10_000 + b"]" * 10_000, "json.too_deep"),
    ],
)
def test_a_malformed_bundle_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, content: bytes, code: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    result = CliRunner().invoke(affidavit, ["verify", "bundle", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"error: {code}: {path}: ")


def test_every_bundle_result_has_the_bundle_keys(tmp_path: Path) -> None:
    """Scripts written for the peer read deal_id, spec_version, bundle_hash and verified from
    every result, an unreadable one too (null there)."""
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"deal_id": 1}')
    document = _json("bundle", str(tmp_path / "missing.json"), str(bad))
    for result in document["results"]:
        assert result["verdict"] == "unreadable"
        assert {k: result[k] for k in ("deal_id", "spec_version", "bundle_hash", "verified")} == {
            "deal_id": None, "spec_version": None, "bundle_hash": None, "verified": False
        }  # fmt: skip
