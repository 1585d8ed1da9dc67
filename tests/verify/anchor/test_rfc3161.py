"""RFC 3161 tokens from a real local TSA (openssl), checked against ``openssl ts -verify``.

Good tokens verify here and in openssl; each tampering fails in both, here with its exact code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from affidavit.verify import errors
from affidavit.verify.anchor.rfc3161 import (
    load_certificate,
    parse_token,
    verify_token,
)
from affidavit.verify.json.forms import format_utc_fraction

from tests.conftest import raises_code
from tests.verify.anchor_tsa import (
    LocalTsa,
    TestCa,
    openssl,
    reissue_with_key_of,
    requires_openssl,
    resign_for,
    signed_sth,
    sth_bytes,
    with_key_identifier_sid,
)

pytestmark = requires_openssl

DATA = sth_bytes(signed_sth())
SHA256_OID = bytes.fromhex("0609608648016503040201")  # 2.16.840.1.101.3.4.2.1
SHA512_256_OID = bytes.fromhex("0609608648016503040206")  # 2.16.840.1.101.3.4.2.6


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCa:
    return TestCa(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tsa(ca: TestCa) -> LocalTsa:
    return ca.tsa("tsa-rsa")


@pytest.fixture(scope="module")
def other_tsa(ca: TestCa) -> LocalTsa:
    return ca.tsa("tsa-other")


def _verify(
    response: bytes, tsa: LocalTsa, *, data: bytes = DATA, ca: Path | None = None
) -> dict[str, object]:
    tsa_cert = load_certificate(tsa.cert.read_bytes())
    cas = [load_certificate((ca or tsa.ca.cert).read_bytes())]
    return verify_token(parse_token(response), data, [tsa_cert], cas).to_json()


def _code(response: bytes, tsa: LocalTsa, **kwargs: object) -> str:
    with pytest.raises(errors.ProofError) as caught:
        _verify(response, tsa, **kwargs)  # type: ignore[arg-type]
    return caught.value.code


@pytest.mark.parametrize(
    ("key", "ess", "digest", "with_cert"),
    [
        ("rsa", "sha256", "sha256", False),  # ESSCertIDv2, RFC 5816
        ("rsa", "sha1", "sha256", True),  # ESSCertID (v1), certificate embedded
        ("ec", "sha256", "sha384", False),  # ECDSA signer, SHA-384 imprint
        ("ec", "sha512", "sha512", True),  # ESSCertIDv2 with SHA-512, SHA-512 imprint
    ],
)
def test_good_tokens_verify_like_openssl(
    ca: TestCa, key: str, ess: str, digest: str, with_cert: bool
) -> None:
    tsa = ca.tsa(f"good-{key}-{ess}-{digest}-{int(with_cert)}", key=key, ess=ess)
    response = tsa.stamp(DATA, digest=digest, with_cert=with_cert)
    assert tsa.openssl_verify(DATA, response)
    result = _verify(response, tsa)
    assert result["imprint_algorithm"] == digest
    assert result["tsa_subject"] == f"CN=good-{key}-{ess}-{digest}-{int(with_cert)}"
    assert result["chained_to"] == "CN=Affidavit Test CA"


def test_gen_time_and_serial_are_the_ones_openssl_prints(tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    (tsa.folder / "printed.tsr").write_bytes(response)
    proc = openssl("ts", "-reply", "-in", "printed.tsr", "-text", cwd=tsa.folder)
    lines = proc.stdout.decode().splitlines()
    parsed = parse_token(response)
    gen = parsed.gen_time
    # ASN1_GENERALIZEDTIME_print: "Nov  2 09:05:01 2026 GMT"
    stamp = f"{gen:%b} {gen.day:2d} {gen:%H:%M:%S} {gen.year} GMT"
    assert f"Time stamp: {stamp}" in lines
    serial = next(line for line in lines if line.startswith("Serial number: 0x"))
    assert int(serial.removeprefix("Serial number: 0x"), 16) == parsed.serial_number
    assert _verify(response, tsa)["gen_time"] == format_utc_fraction(gen)


def test_bare_token_verifies_like_openssl(tsa: LocalTsa) -> None:
    token = tsa.stamp(DATA, token_only=True)
    assert tsa.openssl_verify(DATA, token, token_only=True)
    assert parse_token(token).status is None
    assert _verify(token, tsa)["imprint_algorithm"] == "sha256"


def test_without_ca_the_token_still_checks_against_the_tsa_cert(tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    cert = load_certificate(tsa.cert.read_bytes())
    result = verify_token(parse_token(response), DATA, [cert]).to_json()
    assert result["chained_to"] is None


def test_signer_named_by_subject_key_identifier(tsa: LocalTsa, other_tsa: LocalTsa) -> None:
    from cryptography import x509

    response = tsa.stamp(DATA)
    cert = load_certificate(tsa.cert.read_bytes())
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    by_key_id = with_key_identifier_sid(response, ski)
    assert parse_token(by_key_id).sid_key_id == ski
    assert _verify(by_key_id, tsa)["tsa_subject"] == "CN=tsa-rsa"
    wrong = with_key_identifier_sid(response, bytes(len(ski)))
    assert _code(wrong, tsa) == "anchor.tsa_cert_mismatch"
    # sid names the other TSA's key, the ESSCertID still names ours: no certificate fits both
    other = load_certificate(other_tsa.cert.read_bytes())
    other_ski = other.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert _code(with_key_identifier_sid(response, other_ski), tsa) == "anchor.tsa_cert_mismatch"


def test_the_right_certificate_is_picked_among_several(tsa: LocalTsa, other_tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    certs = [load_certificate(c.cert.read_bytes()) for c in (other_tsa, tsa)]
    result = verify_token(parse_token(response), DATA, certs).to_json()
    assert result["tsa_subject"] == "CN=tsa-rsa"


# -- tampering: openssl refuses each one; we name it ------------------------------------------


def test_changed_digest_is_an_imprint_mismatch(tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    other = sth_bytes(signed_sth(tree_size=8))
    assert not tsa.openssl_verify(other, response)
    assert _code(response, tsa, data=other) == "anchor.imprint_mismatch"


def test_other_tsa_cert_is_a_cert_mismatch(tsa: LocalTsa, other_tsa: LocalTsa) -> None:
    response = other_tsa.stamp(DATA)  # no certificate embedded
    assert not tsa.openssl_verify(DATA, response, untrusted=tsa.cert)
    assert _code(response, tsa) == "anchor.tsa_cert_mismatch"


def test_flipped_signature_byte_is_a_signature_failure(tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    signature = parse_token(response).signature
    at = response.index(signature) + len(signature) // 2
    tampered = response[:at] + bytes([response[at] ^ 0x01]) + response[at + 1 :]
    assert not tsa.openssl_verify(DATA, tampered)
    assert _code(tampered, tsa) == "anchor.tsa_signature_invalid"


def test_wrong_hash_algorithm_in_the_imprint_is_caught(tsa: LocalTsa) -> None:
    # Relabel the SHA-256 imprint as SHA-512/256 (same 32-byte length): the TSTInfo changes.
    response = tsa.stamp(DATA)
    tst = parse_token(response).tst_info
    assert tst.count(SHA256_OID) == 1
    tampered = response.replace(tst, tst.replace(SHA256_OID, SHA512_256_OID))
    assert tampered != response
    assert not tsa.openssl_verify(DATA, tampered)
    assert _code(tampered, tsa) == "anchor.message_digest_mismatch"


def test_sha1_imprint_is_refused_though_openssl_accepts_it(tsa: LocalTsa) -> None:
    # Stricter than openssl on purpose (docs/adr/0010-rfc3161-tokens.md): SHA-1 collides.
    response = tsa.stamp(DATA, digest="sha1")
    assert tsa.openssl_verify(DATA, response)
    assert _code(response, tsa) == "anchor.imprint_algorithm_unsupported"


@pytest.mark.parametrize(
    ("eku", "key_usage"),
    [
        ("timeStamping", "critical,digitalSignature"),
        ("critical,timeStamping,codeSigning", "critical,digitalSignature"),
        ("critical,codeSigning", "critical,digitalSignature"),
        ("critical,timeStamping", "critical,digitalSignature,keyEncipherment"),
        ("critical,timeStamping", "critical,keyAgreement"),
    ],
)
def test_tsa_cert_that_may_not_time_stamp_is_refused(
    tsa: LocalTsa, ca: TestCa, eku: str, key_usage: str
) -> None:
    # openssl will not even sign with such a certificate; the same key signs it here (real RSA).
    name = f"weak-{eku}-{key_usage}".replace(",", "-").replace("critical", "c")
    weak = ca.tsa(name, eku=eku, key_usage=key_usage)
    reissue_with_key_of(tsa, weak)
    response = resign_for(tsa, tsa.stamp(DATA), weak.cert)
    assert not weak.openssl_verify(DATA, response)
    assert _code(response, weak) == "anchor.tsa_cert_eku_invalid"


def test_resigned_token_for_a_good_cert_verifies(tsa: LocalTsa, ca: TestCa) -> None:
    """Control for the test above: the re-signing itself keeps a token valid."""
    twin = ca.tsa("twin")
    reissue_with_key_of(tsa, twin)
    response = resign_for(tsa, tsa.stamp(DATA), twin.cert)
    assert _code(response, tsa) == "anchor.tsa_cert_mismatch"  # no longer names the old cert
    assert twin.openssl_verify(DATA, response)
    assert _verify(response, twin)["tsa_subject"] == "CN=tsa-rsa"


def test_gen_time_outside_the_certificate_validity(tsa: LocalTsa, ca: TestCa) -> None:
    """A certificate for the same key, valid only from tomorrow: the token predates it."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID

    current = load_certificate(tsa.cert.read_bytes())
    ca_cert = load_certificate(ca.cert.read_bytes())
    ca_key = serialization.load_pem_private_key(ca.key.read_bytes(), password=None)
    now = datetime.now(UTC)
    later = (
        x509.CertificateBuilder()
        .subject_name(current.subject)
        .issuer_name(ca_cert.subject)
        .public_key(current.public_key())
        .serial_number(current.serial_number)
        .not_valid_before(now + timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    future = ca.tsa("tsa-future")
    future.cert.write_bytes(later.public_bytes(serialization.Encoding.PEM))
    response = resign_for(tsa, tsa.stamp(DATA), future.cert)
    assert not future.openssl_verify(DATA, response)
    assert _code(response, future) == "anchor.tsa_cert_not_valid"


def test_certificate_key_of_another_type_than_the_signature(tsa: LocalTsa, ca: TestCa) -> None:
    """An RSA signature, checked against a certificate (same serial) for an EC key."""
    ec_tsa = ca.tsa("tsa-ec-key", key="ec")
    serial = load_certificate(tsa.cert.read_bytes()).serial_number
    proc = openssl("x509", "-req", "-in", "req.csr", "-CA", str(ca.cert), "-CAkey", str(ca.key),
                   "-set_serial", str(serial), "-out", str(ec_tsa.cert), "-days", "30",
                   "-extfile", str(ec_tsa.cnf), "-extensions", "v3_tsa",
                   cwd=ec_tsa.folder)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    response = resign_for(tsa, tsa.stamp(DATA), ec_tsa.cert)
    assert not ec_tsa.openssl_verify(DATA, response)
    assert _code(response, ec_tsa) == "anchor.tsa_signature_invalid"


def test_sha1_signer_digest_is_refused_though_openssl_accepts_it(ca: TestCa) -> None:
    sha1_signer = ca.tsa("tsa-sha1-signer", signer_digest="sha1")
    response = sha1_signer.stamp(DATA)
    assert sha1_signer.openssl_verify(DATA, response)
    assert _code(response, sha1_signer) == "anchor.algorithm_unsupported"


def test_tsa_cert_from_another_ca_does_not_chain(tsa: LocalTsa, tmp_path: Path) -> None:
    stranger = TestCa(tmp_path / "stranger", name="Stranger CA")
    response = tsa.stamp(DATA)
    assert not tsa.openssl_verify(DATA, response, ca=stranger.cert)
    assert _code(response, tsa, ca=stranger.cert) == "anchor.tsa_chain_invalid"


def test_rejected_request_is_not_granted(tsa: LocalTsa) -> None:
    # sha224 is not among the TSA's accepted digests: openssl answers with status rejection (2).
    response = tsa.stamp(DATA, digest="sha224", expect_granted=False)
    assert not tsa.openssl_verify(DATA, response)
    with raises_code("anchor.tsa_not_granted") as caught:
        parse_token(response)
    assert caught.value.details["pki_status"] == 2


def test_truncated_and_padded_tokens_are_malformed(tsa: LocalTsa) -> None:
    response = tsa.stamp(DATA)
    granted_without_token = bytes.fromhex("30053003020100")
    for broken in (response[:-1], response + b"\x00", b"", b"\x30\x80\x00\x00",
                   granted_without_token):  # fmt: skip
        with raises_code("anchor.token_malformed"):
            parse_token(broken)


def _flipped(response: bytes, at: int, mask: int = 0x04) -> bytes:
    return response[:at] + bytes([response[at] ^ mask]) + response[at + 1 :]


def _ours(response: bytes, tsa: LocalTsa) -> dict[str, object] | None:
    try:
        return _verify(response, tsa)
    except errors.ProofError:
        return None


def test_every_single_byte_flip_fails(tsa: LocalTsa) -> None:
    """A token without carried certificates: every byte is checked by something (measured)."""
    response = tsa.stamp(DATA)
    assert _ours(response, tsa) is not None
    survivors = [at for at in range(len(response)) if _ours(_flipped(response, at), tsa)]
    assert survivors == []


def test_flips_in_a_carried_certificate_never_change_the_verdict_meaning(tsa: LocalTsa) -> None:
    """Carried certificates are unsigned and untrusted: a flip there may leave the token
    verified, but never changes what it says, and a flip anywhere else fails."""
    response = tsa.stamp(DATA, with_cert=True)
    good = _verify(response, tsa)
    (carried,) = parse_token(response).certificates
    start = response.index(carried)
    for at in range(len(response)):
        result = _ours(_flipped(response, at), tsa)
        if result is not None:
            assert start <= at < start + len(carried), f"byte {at} flipped and still verified"
            assert result == good


@pytest.mark.parametrize("with_cert", [False, True])
def test_never_laxer_than_openssl_on_flipped_bytes(tsa: LocalTsa, with_cert: bool) -> None:
    """Oracle sweep (every 11th byte, two masks): verified here implies verified by openssl.

    (A full sweep, every byte with masks 0x01, 0x04, 0x40 and 0x80, found no exception.)
    """
    response = tsa.stamp(DATA, with_cert=with_cert)
    agree = 0
    for at in range(0, len(response), 11):
        for mask in (0x04, 0x80):
            tampered = _flipped(response, at, mask)
            ours = _ours(tampered, tsa) is not None
            theirs = tsa.openssl_verify(DATA, tampered)
            assert theirs or not ours, f"byte {at} mask {mask:#x}: verified here, not by openssl"
            agree += ours == theirs
    assert agree > 0


def test_load_certificate_refuses_non_certificates(tsa: LocalTsa) -> None:
    with raises_code("anchor.tsa_cert_unreadable"):
        load_certificate(tsa.key.read_bytes())
    with raises_code("anchor.tsa_cert_unreadable"):
        load_certificate(b"\x30\x03\x02\x01\x01")
    der = tsa.folder / "cert.der"
    _ = openssl("x509", "-in", str(tsa.cert), "-outform", "DER", "-out", str(der), cwd=tsa.folder)
    assert load_certificate(der.read_bytes()) == load_certificate(tsa.cert.read_bytes())
