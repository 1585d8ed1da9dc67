"""DSSE and in-toto interop: securesystemslib 1.6.0 and the in-toto attestation bindings 0.9.3.

Both directions, and the tamper cases in both: what we write verifies there, what they write
verifies here (library and CLI), and a tampered envelope fails in both (securesystemslib raises
its VerificationError, we give the exact code).

securesystemslib's ``Envelope.verify`` only tries a key whose ``keyid`` equals the signature's
(its own note: not DSSE-compliant, the keyid is a hint). So an envelope meant for it carries the
key's securesystemslib default keyid: SHA-256 of the canonical JSON of
``{keytype, scheme, keyval}``, computable from the public key alone.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from affidavit.cli.main import affidavit
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.dsse.envelope import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    envelope_json,
    pae,
    parse_envelope,
)
from affidavit.verify.dsse.statement import parse_statement, statement_of
from affidavit.verify.dsse.verify import verify_envelope
from click.testing import CliRunner
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement as InTotoStatement
from securesystemslib import dsse as sslib_dsse
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

from tests.conftest import raises_code
from tests.schemas import assert_output_schema
from tests.verify.dsse.dsse_fixtures import ALICE, BOB, MALLORY, payload_of, sign, statement


def sslib_keyid(key: Ed25519PublicKey) -> str:
    """securesystemslib's default keyid of an Ed25519 key, from the public key alone: lowercase hex
    SHA-256 of the canonical JSON of ``{keytype, keyval: {public: hex}, scheme}`` (keys sorted, no
    whitespace; every value here is plain ASCII, so no escaping question arises)."""
    document = {"keytype": "ed25519", "keyval": {"public": key.raw.hex()}, "scheme": "ed25519"}
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def sslib_key(key: Ed25519PublicKey) -> SSlibKey:
    """A securesystemslib key built from nothing but our public key."""
    return SSlibKey(sslib_keyid(key), "ed25519", "ed25519", {"public": key.raw.hex()})


def ours_for_sslib(payload: bytes, signers: Any = (ALICE,)) -> Envelope:
    """An envelope we write (verify/dsse/envelope.py + SigningKey over pae()), each signature
    carrying its key's securesystemslib keyid."""
    envelope = sign(payload, signers)
    signatures = tuple(
        dataclasses.replace(s, keyid=sslib_key(k.public_key).keyid)
        for s, k in zip(envelope.signatures, signers, strict=True)
    )
    return dataclasses.replace(envelope, signatures=signatures)


def to_sslib(envelope: Envelope | dict[str, Any]) -> sslib_dsse.Envelope:
    document = envelope_json(envelope) if isinstance(envelope, Envelope) else envelope
    return sslib_dsse.Envelope.from_dict(json.loads(json.dumps(document)))


# -- ours -> securesystemslib --------------------------------------------------------------------


def test_our_envelope_verifies_in_securesystemslib() -> None:
    envelope = ours_for_sslib(payload_of(statement()))
    key = sslib_key(ALICE.public_key)
    accepted = to_sslib(envelope).verify([key], 1)
    assert list(accepted) == [key.keyid]
    assert to_sslib(envelope).pae() == envelope.signed_bytes()


def test_our_threshold_two_verifies_in_securesystemslib() -> None:
    envelope = ours_for_sslib(payload_of(statement()), (ALICE, BOB))
    keys = [sslib_key(ALICE.public_key), sslib_key(BOB.public_key)]
    assert len(to_sslib(envelope).verify(keys, 2)) == 2
    assert verify_envelope(envelope, [ALICE.public_key, BOB.public_key], threshold=2).met


def test_repeated_keyids_are_refused_there_and_read_here() -> None:
    """A known difference: securesystemslib keys signatures by keyid and refuses two with the same
    one (even ""); DSSE does not forbid it and the keyid is only a hint, so we read the envelope and
    count each distinct trusted key once. Producers write one keyid per key (docs)."""
    envelope = sign(payload_of(statement()), (ALICE, BOB), keyid="")
    with pytest.raises(ValueError, match="Multiple signatures"):
        to_sslib(envelope)
    assert verify_envelope(envelope, [ALICE.public_key, BOB.public_key], threshold=2).met


@settings(max_examples=40, deadline=None)
@given(payload_type=st.text(max_size=30), payload=st.binary(max_size=100))
def test_pae_is_securesystemslibs(payload_type: str, payload: bytes) -> None:
    if any(0xD800 <= ord(c) <= 0xDFFF for c in payload_type):
        return  # not encodable as UTF-8
    assert sslib_dsse.Envelope(payload, payload_type, {}).pae() == pae(payload_type, payload)


def test_our_statement_parses_and_validates_in_the_in_toto_bindings() -> None:
    payload = payload_of(statement())
    proto = json_format.Parse(payload, statement_pb2.Statement())
    bound = InTotoStatement.copy_from_pb(proto)
    bound.validate()
    assert bound.pb.predicate_type == statement()["predicateType"]
    assert dict(bound.pb.subject[0].digest) == statement()["subject"][0]["digest"]


# -- securesystemslib + in-toto bindings -> ours ------------------------------------------------


def _their_statement() -> bytes:
    subject = ResourceDescriptor(name="pkg.tar.gz", digest={"sha256": "c" * 64}).pb
    bound = InTotoStatement(
        [subject], "https://slsa.dev/verification_summary/v1", {"verificationResult": "PASSED"}
    )
    bound.validate()
    return json_format.MessageToJson(bound.pb).encode("utf-8")


@pytest.fixture(scope="module")
def signer() -> CryptoSigner:
    return CryptoSigner.generate_ed25519()


def _their_envelope(signer: CryptoSigner) -> dict[str, Any]:
    envelope = sslib_dsse.Envelope(_their_statement(), IN_TOTO_PAYLOAD_TYPE, {})
    envelope.sign(signer)
    return envelope.to_dict()


def _their_key(signer: CryptoSigner) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_hex(signer.public_key.keyval["public"])


def test_the_documented_keyid_is_securesystemslibs(signer: CryptoSigner) -> None:
    """The keyid a producer should write for securesystemslib consumers (docs) is the one
    securesystemslib itself gives the key."""
    assert sslib_keyid(_their_key(signer)) == signer.public_key.keyid


def test_their_envelope_verifies_here(signer: CryptoSigner) -> None:
    document = _their_envelope(signer)
    envelope = parse_envelope(json.dumps(document).encode())
    result = verify_envelope(envelope, [_their_key(signer)])
    assert result.met
    assert envelope.signatures[0].keyid == signer.public_key.keyid
    parsed = statement_of(envelope)
    assert parsed.predicate_type == "https://slsa.dev/verification_summary/v1"
    assert [(s.name, dict(s.digest)) for s in parsed.subjects] == [
        ("pkg.tar.gz", {"sha256": "c" * 64})
    ]


def test_their_envelope_verifies_in_the_cli(signer: CryptoSigner, tmp_path: Path) -> None:
    path = tmp_path / "theirs.json"
    path.write_text(json.dumps(_their_envelope(signer)))
    args = ["verify", "dsse", str(path), "--public-key-base64", _their_key(signer).b64]
    result = CliRunner().invoke(affidavit, args)
    assert result.exit_code == 0, result.output
    as_json = CliRunner().invoke(affidavit, [*args, "--json"])
    assert as_json.exit_code == 0
    document = json.loads(as_json.stdout)
    assert_output_schema("verify dsse", document)
    assert document["signatures"][0]["keyid"] == signer.public_key.keyid


def test_their_statement_is_one_we_parse() -> None:
    parsed = parse_statement(_their_statement())
    assert parsed.predicate == {"verificationResult": "PASSED"}


# -- tampering fails in both ----------------------------------------------------------------------


def _tamper(document: dict[str, Any], kind: str) -> dict[str, Any]:

    out = json.loads(json.dumps(document))
    if kind == "payload":
        raw = bytearray(base64.b64decode(out["payload"]))
        raw[len(raw) // 2] ^= 0x01
        out["payload"] = base64.b64encode(bytes(raw)).decode()
    elif kind == "payload_type":
        out["payloadType"] = "application/json"
    elif kind == "sig":
        sig = bytearray(base64.b64decode(out["signatures"][0]["sig"]))
        sig[10] ^= 0x01
        out["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    return out


@pytest.mark.parametrize("kind", ["payload", "payload_type", "sig", "untrusted"])
def test_our_tampered_envelope_fails_in_both(kind: str) -> None:
    signer_key = MALLORY if kind == "untrusted" else ALICE
    document = envelope_json(ours_for_sslib(payload_of(statement()), (signer_key,)))
    if kind != "untrusted":
        document = _tamper(document, kind)
    trusted = sslib_key(ALICE.public_key)
    if kind == "untrusted":  # keyid claims Alice: securesystemslib tries her key, which fails
        document["signatures"][0]["keyid"] = trusted.keyid
    with pytest.raises(VerificationError):
        to_sslib(document).verify([trusted], 1)
    envelope = parse_envelope(json.dumps(document).encode())
    error = verify_envelope(envelope, [ALICE.public_key]).error
    assert error is not None
    assert error.code == "dsse.signature_unverified"


@pytest.mark.parametrize("kind", ["payload", "payload_type", "sig", "untrusted"])
def test_their_tampered_envelope_fails_in_both(
    signer: CryptoSigner, kind: str, tmp_path: Path
) -> None:
    document = _their_envelope(CryptoSigner.generate_ed25519() if kind == "untrusted" else signer)
    if kind == "untrusted":
        document["signatures"][0]["keyid"] = signer.public_key.keyid
    else:
        document = _tamper(document, kind)
    with pytest.raises(VerificationError):
        to_sslib(document).verify([signer.public_key], 1)
    envelope = parse_envelope(json.dumps(document).encode())
    with raises_code("dsse.signature_unverified"):
        error = verify_envelope(envelope, [_their_key(signer)]).error
        assert error is not None
        raise error
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(
        affidavit,
        ["verify", "dsse", str(path), "--public-key-base64", _their_key(signer).b64, "--json"],
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["code"] == "dsse.signature_unverified"
