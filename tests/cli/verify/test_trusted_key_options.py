"""Every command reads trusted key files with the one strict loader (verify/crypto/trusted_keys.py).

``verify bundle``/``attestation`` (--public-key, --publisher-doc, --trusted-keys,
--trusted-actor-keys), ``verify anchor --log-key``, ``verify checkpoint --vkey`` and
``facts walk|audit --trusted-key`` take the same forms and refuse the same files with the same
codes. Files the lenient loader used to accept are refused now (CHANGELOG).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from affidavit.attest.keyring import public_key_pem
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey
from click.testing import CliRunner, Result

from tests.cli.verify.test_verify_primitives_cli import KEY as CHECKPOINT_KEY
from tests.cli.verify.test_verify_primitives_cli import ORIGIN, _checkpoint

ROOT = Path(__file__).resolve().parents[3]
BUNDLES = ROOT / "vectors" / "bundles"
LOG_KEY = Ed25519PublicKey.from_b64(
    json.loads((BUNDLES / "manifest.json").read_text())["vectors"][0]["trusted_public_key_base64"]
)
GOOD = str(BUNDLES / "stamped-accepted-2.0.0.json")


def _run(*args: str) -> Result:
    return CliRunner().invoke(affidavit, list(args))


def _forms(key: Ed25519PublicKey) -> dict[str, bytes]:
    return {
        "key.json": json.dumps({"public_key_base64": key.b64, "algorithm": "Ed25519"}).encode(),
        "key.pem": public_key_pem(key),
        "key.pub": (key.b64 + "\n").encode(),
        "vkey.pub": (verifier_key_string("example.com/log", key) + "\n").encode(),
    }


@pytest.mark.parametrize("name", sorted(_forms(LOG_KEY)))
def test_verify_bundle_takes_every_form(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(_forms(LOG_KEY)[name])
    for option in ("--public-key", "--publisher-doc"):
        result = _run("verify", "bundle", GOOD, option, str(path))
        assert result.exit_code == 0, result.output
    result = _run("verify", "bundle", GOOD, "--trusted-keys", str(tmp_path))
    assert result.exit_code == 0, result.output


def test_verify_checkpoint_takes_a_verifier_key_file(tmp_path: Path) -> None:
    note, vkey = _checkpoint(tmp_path)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "log.pub").write_text(vkey + "\n")
    for value in (vkey, str(tmp_path / "keys" / "log.pub"), str(tmp_path / "keys")):
        result = _run("verify", "checkpoint", str(note), "--vkey", value)
        assert result.exit_code == 0, result.output
        assert f"signed by {ORIGIN}+" in result.stdout
    bare = tmp_path / "bare.pub"
    bare.write_text(CHECKPOINT_KEY.public_key.b64 + "\n")  # no name: a checkpoint cannot use it
    result = _run("verify", "checkpoint", str(note), "--vkey", str(bare))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: key.vkey_malformed: {bare}: ")


# What the lenient loader of attest.keyring accepted, and the code each file is refused with now.
REFUSED = {
    "algorithm.json": (
        json.dumps({"public_key_base64": LOG_KEY.b64, "algorithm": "RSA"}),
        "key.unrecognized",
    ),
    "empty-key-id.json": (
        json.dumps({"public_key_base64": LOG_KEY.b64, "key_id": ""}),
        "key.unrecognized",
    ),
    "publisher-id.json": (
        json.dumps({"public_key_base64": LOG_KEY.b64, "publisher_id": 5}),
        "manifest.publisher_document_invalid",
    ),
    "trailing.pem": (public_key_pem(LOG_KEY).decode() + "trailing text\n", "key.unrecognized"),
    "two.pem": (public_key_pem(LOG_KEY).decode() * 2, "key.unrecognized"),
}


def _commands(path: Path, folder: Path) -> dict[str, list[str]]:
    missing = str(folder / "missing.json")
    return {
        "bundle --public-key": ["verify", "bundle", GOOD, "--public-key", str(path)],
        "bundle --publisher-doc": ["verify", "bundle", GOOD, "--publisher-doc", str(path)],
        "bundle --trusted-keys": ["verify", "bundle", GOOD, "--trusted-keys", str(folder)],
        "bundle --trusted-actor-keys": [
            "verify", "bundle", GOOD, "--public-key-base64", LOG_KEY.b64,
            "--trusted-actor-keys", str(folder),
        ],
        "attestation --public-key": ["verify", "attestation", missing, "--public-key", str(path)],
        "anchor --log-key": ["verify", "anchor", missing, "--log-key", str(path)],
        "checkpoint --vkey": ["verify", "checkpoint", missing, "--vkey", str(path)],
        "facts audit --trusted-key": ["facts", "audit", "--store", missing, "--trusted-key",
                                      str(path)],
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_every_command_refuses_the_same_file_with_the_same_code(tmp_path: Path, name: str) -> None:
    content, code = REFUSED[name]
    path = tmp_path / name
    path.write_text(content)
    for label, argv in _commands(path, tmp_path).items():
        result = _run(*argv)
        assert result.exit_code == 2, (label, result.output)
        assert result.stderr.startswith(f"error: {code}: {path}: "), (label, result.stderr)


def test_a_weak_key_is_refused_by_every_command(tmp_path: Path) -> None:
    path = tmp_path / "weak.pub"
    path.write_text("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")  # the identity point
    for label, argv in _commands(path, tmp_path).items():
        result = _run(*argv)
        assert result.exit_code == 2, (label, result.output)
        assert result.stderr.startswith(f"error: key.weak: {path}: "), (label, result.stderr)


def test_adapter_key_options_read_base64_as_verify_does() -> None:
    from affidavit.cli._sources import resolve_key

    key, used = resolve_key(
        public_key_base64=f" {LOG_KEY.b64}\n", publisher_doc=None, fetch_url=None, manifest=None
    )
    assert (key, used) == (LOG_KEY, None)
