"""``affidavit verify bundle --attest-result KEYFILE --out VSA``: a signed SLSA VSA v1 of the
verdict, PASSED or FAILED, the exit code the verdict's."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.intoto.vsa import POLICY_URI, VERIFIED_LEVEL, trust_digest, trust_document
from affidavit.attest.keyring import derive_test_key, private_key_pem
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, example_contract, stamp_bundles
from affidavit.cli.main import affidavit
from affidavit.verify.contracts.policy import AcceptancePolicy
from affidavit.verify.dsse import predicates
from affidavit.verify.dsse.envelope import parse_envelope
from affidavit.verify.dsse.statement import statement_of
from affidavit.verify.dsse.verify import verify_envelope
from affidavit.verify.json.canonical import sha256_hex
from click.testing import CliRunner, Result

from tests.attest.intoto.helpers import KEY, sslib_verify

LOG_KEY = derive_test_key("vsa tests log")  # TEST-ONLY
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("vsa")
    log = TransparencyLog.create(folder / "log.db", LOG_KEY, "vsa-test-log")
    policy = AcceptancePolicy.from_json({"rules": [], "default": "require_review"})
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    item = StampItem("deal-1", example_contract(), {"signal_a": True, "signal_b": True})
    (bundle,) = stamp_bundles(log, [item], policy, when=when)
    log.close()
    good = folder / "good.json"
    good.write_text(json.dumps(bundle, indent=2))
    bundle["events"][0]["payload"]["policy_hash"] = "0" * 64  # tampered, hash left stale
    tampered = folder / "tampered.json"
    tampered.write_text(json.dumps(bundle))
    key = folder / "verifier.key"
    key.write_bytes(private_key_pem(KEY))
    os.chmod(key, 0o600)
    return {
        "dir": str(folder),
        "good": str(good),
        "tampered": str(tampered),
        "key": str(key),
        "pub": LOG_KEY.public_key.b64,
    }


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, ["verify", "bundle", *args])


def _vsa(path: str) -> tuple[dict[str, Any], Any]:
    raw = Path(path).read_bytes()
    envelope = parse_envelope(raw)
    assert verify_envelope(envelope, [KEY.public_key]).error is None
    sslib_verify(json.loads(raw), KEY.public_key.raw)
    statement = statement_of(envelope)
    assert statement.predicate_type == predicates.SLSA_VSA_V1
    return dict(statement.document), statement


def test_passed(files: dict[str, str]) -> None:
    out = f"{files['dir']}/passed.vsa.json"
    plain = _run(files["good"], "--public-key-base64", files["pub"])
    result = _run(
        files["good"], "--public-key-base64", files["pub"], "--attest-result", files["key"],
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == plain.stdout  # the report is unchanged
    assert result.stderr.endswith(f"note: wrote verification summary {out}: PASSED\n")
    document, _ = _vsa(out)
    predicate = document["predicate"]
    bundle = json.loads(Path(files["good"]).read_text())
    assert document["subject"] == [predicates.subject_for_bundle(bundle)]
    assert predicate["verificationResult"] == "PASSED"
    assert predicate["verifiedLevels"] == [VERIFIED_LEVEL]
    assert predicate["resourceUri"] == "urn:affidavit:bundle:deal-1"
    expected = trust_digest(trust_document([LOG_KEY.public_key.raw]))
    assert predicate["policy"] == {"uri": POLICY_URI, "digest": {"sha256": expected}}
    assert predicate["inputAttestations"] == [
        {
            "uri": "urn:affidavit:bundle:deal-1",
            "digest": {"sha256": sha256_hex(Path(files["good"]).read_bytes())},
        }
    ]
    assert predicate["timeVerified"].endswith("Z")
    assert len(predicate["timeVerified"]) == 20


def test_unanchored_is_a_failed_vsa_and_exit_1(files: dict[str, str]) -> None:
    out = f"{files['dir']}/unanchored.vsa.json"
    result = _run(files["good"], "--attest-result", files["key"], "--out", out, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["results"][0]["verdict"] == "unanchored"
    document, _ = _vsa(out)
    assert document["predicate"]["verificationResult"] == "FAILED"
    assert document["predicate"]["verifiedLevels"] == ["FAILED"]


def test_tampered_is_a_failed_vsa_naming_the_content_read(files: dict[str, str]) -> None:
    out = f"{files['dir']}/tampered.vsa.json"
    result = _run(
        files["tampered"], "--public-key-base64", files["pub"], "--attest-result", files["key"],
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 1
    document, _ = _vsa(out)
    assert document["predicate"]["verificationResult"] == "FAILED"
    tampered = json.loads(Path(files["tampered"]).read_text())
    assert document["subject"] == [predicates.bundle_subject(tampered)]
    assert document["subject"][0]["digest"]["sha256"] != tampered["bundle_hash"]


def test_the_trust_given_changes_the_policy_digest(files: dict[str, str]) -> None:
    a, b = f"{files['dir']}/a.vsa.json", f"{files['dir']}/b.vsa.json"
    _run(files["good"], "--public-key-base64", files["pub"], "--attest-result", files["key"],
         "--out", a)  # fmt: skip
    _run(files["good"], "--public-key-base64", files["pub"], "--attest-result", files["key"],
         "--out", b, "--profile", "swarm-strict")  # fmt: skip
    digest_a = _vsa(a)[0]["predicate"]["policy"]["digest"]
    digest_b = _vsa(b)[0]["predicate"]["policy"]["digest"]
    assert digest_a != digest_b


@pytest.mark.parametrize(
    "extra",
    [["--attest-result", "{key}"], ["--out", "{dir}/x.json"]],
)
def test_both_or_neither(files: dict[str, str], extra: list[str]) -> None:
    result = _run(files["good"], *(a.format(**files) for a in extra))
    assert result.exit_code == 2
    assert (
        result.stderr == "error: usage.invalid: --attest-result KEYFILE and --out VSA go together\n"
    )


def test_one_bundle_only(files: dict[str, str]) -> None:
    out = f"{files['dir']}/many.vsa.json"
    result = _run(files["good"], files["tampered"], "--attest-result", files["key"], "--out", out)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: --attest-result summarizes one bundle")
    assert not Path(out).exists()


def test_not_a_bundle_gets_no_vsa(files: dict[str, str]) -> None:
    path = Path(files["dir"]) / "notjson.json"
    path.write_text("{nope")
    out = f"{files['dir']}/none.vsa.json"
    result = _run(str(path), "--attest-result", files["key"], "--out", out)
    assert result.exit_code == 2
    assert "note: no verification summary written: json." in result.stderr
    assert not Path(out).exists()


def test_a_bad_signing_key_is_exit_2_before_verifying(files: dict[str, str]) -> None:
    out = f"{files['dir']}/badkey.vsa.json"
    bad = Path(files["dir"]) / "bad.key"
    bad.write_text("not a PEM key\n")
    os.chmod(bad, 0o600)
    result = _run(files["good"], "--attest-result", str(bad), "--out", out)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert not Path(out).exists()


def test_through_the_console_entry_point(files: dict[str, str]) -> None:
    out = f"{files['dir']}/main.vsa.json"
    code = "import sys; from affidavit.cli.main import main; main(sys.argv[1:])"
    argv = ["verify", "bundle", files["good"], "--public-key-base64", files["pub"],
            "--attest-result", files["key"], "--out", out]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert _vsa(out)[0]["predicate"]["verificationResult"] == "PASSED"
