"""``affidavit scitt sign|register`` and ``affidavit verify scitt``: in-process commands, a real
registry process for registration, every --json output against its schema, and the exit codes:
0 verified, 1 a changed byte, 2 strict CBOR refusals and usage (one error line)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key, load_signing_key
from affidavit.cli.main import affidavit
from affidavit.verify.scitt.cbor import decode, encode
from click.testing import CliRunner, Result

from tests.cli.test_output_schemas import write_key
from tests.processes import RegistryProcess
from tests.schemas import assert_output_schema
from tests.verify.scitt.support import edit, transparent

ISSUER = derive_test_key("TEST-ONLY scitt cli: issuer")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(affidavit, [str(a) for a in args])


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    issuer_key = write_key(tmp_path / "issuer.key", ISSUER)
    (tmp_path / "iss").mkdir()
    (tmp_path / "iss" / "issuer.pub").write_text(ISSUER.public_key.b64 + "\n")
    (tmp_path / "iss" / "issuer.pub.iss").write_text("https://acme.example\n")
    return {"key": issuer_key, "pub": tmp_path / "iss" / "issuer.pub", "folder": tmp_path / "iss"}


def _sign(tmp_path: Path, keys: dict[str, Path]) -> Path:
    artefact = tmp_path / "bundle.json"
    artefact.write_text('{"deal_id": "d-1"}\n')
    result = run("scitt", "sign", artefact, "--key", keys["key"], "--issuer",
                 "https://acme.example", "--subject", "pkg:acme/bundle@1",
                 "--content-type", "application/json", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert_output_schema("scitt sign", result.stdout)
    assert json.loads(result.stdout)["out"] == f"{artefact}.cose"
    return Path(f"{artefact}.cose")


@pytest.mark.network_local
def test_sign_register_verify(tmp_path: Path, keys: dict[str, Path]) -> None:
    signed = _sign(tmp_path, keys)
    process = RegistryProcess(
        tmp_path / "data", env={"AFFIDAVIT_SCITT_ISSUERS": str(keys["folder"])}
    )
    process.start()
    try:
        registered = run("scitt", "register", process.url, signed, "--json")
        assert registered.exit_code == 0, registered.stderr
        assert_output_schema("scitt register", registered.stdout)
        out = Path(json.loads(registered.stdout)["out"])
        assert out.name == "bundle.json.transparent.cose"
        log_key = load_signing_key(tmp_path / "data" / "keys" / "registry-1.key").public_key
        (tmp_path / "log.pub").write_text(log_key.b64 + "\n")
        verified = run("verify", "scitt", out, "--public-key", tmp_path / "log.pub",
                       "--issuer-key", keys["pub"], "--json")  # fmt: skip
        assert verified.exit_code == 0, verified.stdout
        assert_output_schema("verify scitt", verified.stdout)
        document = json.loads(verified.stdout)
        assert document["verdict"] == "verified"
        assert [s["status"] for s in document["steps"]] == ["ok", "ok", "ok"]
        text = run("verify", "scitt", out, "--public-key", tmp_path / "log.pub")
        assert (text.exit_code, text.stdout.splitlines()[0]) == (0, f"{out}: verified")
        # a receipt under a key the caller does not trust is not verified
        other = derive_test_key("TEST-ONLY scitt cli: not the log")
        (tmp_path / "other.pub").write_text(other.public_key.b64 + "\n")
        untrusted = run("verify", "scitt", out, "--public-key", tmp_path / "other.pub", "--json")
        assert untrusted.exit_code == 1
        assert json.loads(untrusted.stdout)["code"] == "scitt.receipt_key_untrusted"
    finally:
        process.stop()


@pytest.mark.network_local
def test_register_refused_is_one_error_line(tmp_path: Path, keys: dict[str, Path]) -> None:
    signed = _sign(tmp_path, keys)
    process = RegistryProcess(tmp_path / "data")  # trusts no issuer
    process.start()
    try:
        refused = run("scitt", "register", process.url, signed, "--json")
        assert (refused.exit_code, refused.stdout) == (2, "")
        assert re.fullmatch(r"error: registry\.remote_error: .*HTTP 400: Rejected: "
                            r"scitt\.issuer_untrusted: .+\n", refused.stderr)  # fmt: skip
    finally:
        process.stop()


def _offline(tmp_path: Path) -> tuple[Path, Path]:
    from tests.verify.scitt.support import LOG_KEY

    ts, _ = transparent()
    path = tmp_path / "t.cose"
    path.write_bytes(ts)
    (tmp_path / "log.pub").write_text(LOG_KEY.public_key.b64 + "\n")
    return path, tmp_path / "log.pub"


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("statement payload", lambda p: p.__setitem__(2, b"changed")),
        ("statement signature", lambda p: p.__setitem__(3, _flip(p[3], 9))),
        ("receipt signature", lambda p: p[1][394].__setitem__(0, _flip(p[1][394][0], -1))),
        ("receipt proof", lambda p: p[1][394].__setitem__(0, _proof_flip(p[1][394][0]))),
    ],
)
def test_a_changed_byte_is_exit_1(tmp_path: Path, name: str, change: Any) -> None:
    path, log = _offline(tmp_path)
    path.write_bytes(edit(path.read_bytes(), change))
    result = run("verify", "scitt", path, "--public-key", log, "--json")
    assert result.exit_code == 1, name
    assert_output_schema("verify scitt", result.stdout)
    assert json.loads(result.stdout)["verdict"] == "failed"


def _proof_flip(receipt: bytes) -> bytes:
    def change(parts: list[Any]) -> None:
        proof = decode(parts[1][396][-1][0], what="proof")
        proof[2][0] = _flip(proof[2][0], 0)
        parts[1][396][-1][0] = encode(proof)

    return edit(receipt, change)


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("trailing bytes", lambda s: s + b"\x00", "cbor.trailing_bytes"),
        ("indefinite length", lambda s: b"\xd2\x9f" + s[2:] + b"\xff", "cbor.indefinite_length"),
        (
            "duplicate map key",
            lambda s: edit(
                s,
                lambda p: p.__setitem__(
                    0, bytes([encode(p[0])[0] + 1]) + encode(p[0])[1:] + b"\x01\x27"
                ),
            ),
            "cbor.duplicate_key",
        ),
        ("oversize", lambda s: b"\x00" * (4 * 1024 * 1024 + 1), "cbor.too_large"),
    ],
)
def test_strict_cbor_refusals_are_exit_2_one_line(
    tmp_path: Path, name: str, data: Any, code: str
) -> None:
    path, log = _offline(tmp_path)
    path.write_bytes(data(path.read_bytes()))
    result = run("verify", "scitt", path, "--public-key", log)
    assert result.exit_code == 2, name
    assert result.stdout == ""
    assert re.fullmatch(rf"error: {re.escape(code)}: .+\n", result.stderr), result.stderr
    if code != "cbor.too_large":
        as_json = run("verify", "scitt", path, "--public-key", log, "--json")
        assert as_json.exit_code == 2
        assert_output_schema("verify scitt", as_json.stdout)
        assert json.loads(as_json.stdout)["code"] == code


def test_no_trusted_log_key_is_usage(tmp_path: Path) -> None:
    path, _ = _offline(tmp_path)
    result = run("verify", "scitt", path)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: verify scitt needs a trusted key")


def test_issuer_folder_with_no_key_refuses_to_serve(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    result = run("registry", "serve", "--port", "0", "--data-dir", tmp_path / "d",
                 "--scitt-issuers", tmp_path / "empty")  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage.invalid: ")
    assert "no key in it" in result.stderr


def _issuer_key(tmp_path: Path, binding: str | None) -> Path:
    """The offline statement's issuer key (tests/verify/scitt/support.py), bound by its
    ``.iss`` file to ``binding`` (none when None)."""
    from tests.verify.scitt.support import ISSUER as STATEMENT_ISSUER

    key = tmp_path / "issuer.pub"
    key.write_text(STATEMENT_ISSUER.public_key.b64 + "\n")
    if binding is not None:
        (tmp_path / "issuer.pub.iss").write_text(binding)
    return key


def test_an_issuer_key_verifies_only_the_issuers_it_is_bound_to(tmp_path: Path) -> None:
    # RFC 9943 §5.1.1.1: the statement names iss https://issuer.example; its signature verifies
    # under this key, which signs for https://acme.example only: a mismatch, exit 1
    path, log = _offline(tmp_path)
    key = _issuer_key(tmp_path, "https://acme.example\n")
    result = run("verify", "scitt", path, "--public-key", log, "--issuer-key", key, "--json")
    assert result.exit_code == 1, result.stdout
    assert_output_schema("verify scitt", result.stdout)
    document = json.loads(result.stdout)
    assert (document["verdict"], document["code"]) == ("failed", "scitt.issuer_mismatch")
    text = run("verify", "scitt", path, "--public-key", log, "--issuer-key", key)
    assert text.exit_code == 1
    assert "scitt.issuer_mismatch" in text.stdout
    # bound to the issuer it names (among others): verified
    (tmp_path / "issuer.pub.iss").write_text("https://acme.example\nhttps://issuer.example\n")
    bound = run("verify", "scitt", path, "--public-key", log, "--issuer-key", key)
    assert bound.exit_code == 0, bound.stdout


@pytest.mark.parametrize(
    ("binding", "why"),
    [
        (None, "no binding"),
        ("", "empty"),
        ("https://issuer.example", "no final newline"),
        ("https://issuer.example\n\n", "an empty line"),
        (" https://issuer.example\n", "spaces around"),
        ("https://issuer.example\nhttps://issuer.example\n", "twice"),
        ("a\x00b\n", "a control character"),
        ("\xff\n", "not UTF-8"),
    ],
)
def test_an_issuer_key_without_a_good_binding_is_usage(
    tmp_path: Path, binding: str | None, why: str
) -> None:
    path, log = _offline(tmp_path)
    key = _issuer_key(tmp_path, None)
    if binding is not None:
        data = b"\xff\n" if binding == "\xff\n" else binding.encode()
        (tmp_path / "issuer.pub.iss").write_bytes(data)
    result = run("verify", "scitt", path, "--public-key", log, "--issuer-key", key)
    assert (result.exit_code, result.stdout) == (2, ""), why
    assert re.fullmatch(r"error: usage\.invalid: .*issuer\.pub\.iss.*\n", result.stderr), why
    served = run("registry", "serve", "--port", "0", "--data-dir", tmp_path / "d",
                 "--scitt-issuers", tmp_path)  # fmt: skip
    assert served.exit_code == 2, why
    assert re.fullmatch(r"error: usage\.invalid: .*issuer\.pub\.iss.*\n", served.stderr), why
