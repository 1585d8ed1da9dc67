"""The certificate side of RFC 3161 tokens: which certificate signed, and may it time-stamp.

Used by :mod:`affidavit.verify.anchor.rfc3161`. Every ``cryptography.x509`` import here is local to
the
function that needs it: ``cryptography.x509`` imports the standard library's ``email.utils``,
which imports ``socket``, and no ``affidavit.verify`` module may load ``socket`` on import
(``tests/verify/test_offline_imports.py``). No socket is ever opened.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from affidavit.verify import errors
from affidavit.verify.anchor.der import context, read_one
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.utils import CryptographyDeprecationWarning

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "CertId",
    "check_carried",
    "check_chain",
    "check_tsa_usage",
    "check_validity",
    "load_certificate",
    "signer_certificate",
]

# ESSCertID (RFC 2634, SHA-1 by definition) and ESSCertIDv2 (RFC 5035) hashes accepted. The
# certificate hash identifies a certificate the caller already trusts; it is not what is signed.
_CERT_ID_HASHES = ("sha1", "sha256", "sha384", "sha512")


class CertId(NamedTuple):
    """One ESSCertID/ESSCertIDv2 (RFC 5035 §5.4.1.1): a certificate hash and issuer/serial."""

    hash_name: str
    cert_hash: bytes
    issuer: bytes | None  # DER Name of the directoryName in issuerSerial, if any
    serial: int | None


def load_certificate(data: bytes, what: str = "certificate") -> x509.Certificate:
    """A PEM or DER X.509 certificate, decoded completely.

    Raises:
        ``anchor.tsa_cert_unreadable``: neither (``anchor.tsa_cert_unreadable``, exit 2).
    """
    try:
        return _strict_load(data)
    except _unreadable() as e:
        raise errors.ProofError(
            "anchor.tsa_cert_unreadable", f"{what}: not an X.509 certificate ({e})"
        ) from None


def _unreadable() -> tuple[type[Exception], ...]:
    """What cryptography raises (or warns, for what RFC 5280 forbids yet it reads) on a bad one."""
    from cryptography import x509  # noqa: PLC0415 - see the module docstring

    return (ValueError, x509.InvalidVersion, x509.DuplicateExtension,
            x509.UnsupportedGeneralNameType, UnsupportedAlgorithm,
            CryptographyDeprecationWarning)  # fmt: skip


def _strict_load(data: bytes) -> x509.Certificate:
    """PEM or DER; what RFC 5280 forbids (e.g. a negative serial) is refused, not warned about."""
    from cryptography import x509  # noqa: PLC0415 - see the module docstring

    with warnings.catch_warnings():
        warnings.simplefilter("error", CryptographyDeprecationWarning)
        if data.lstrip().startswith(b"-----BEGIN"):
            cert = x509.load_pem_x509_certificate(data)
        else:
            cert = x509.load_der_x509_certificate(data)
        # cryptography decodes lazily: decode every part now, so that a certificate openssl
        # would refuse (say, a name that is not UTF-8) is refused here too.
        _ = (cert.subject.rfc4514_string(), cert.issuer.rfc4514_string(), list(cert.extensions))
        cert.public_key()
        return cert


def check_carried(certificates: Sequence[bytes], crls: Sequence[bytes]) -> list[x509.Certificate]:
    """The certificates a token carries: untrusted and unsigned, never taken as the signer.

    Each must still be readable (and each CRL): a token that carries garbage is malformed, as
    openssl also finds. Returns them for path building only.

    Raises:
        ``anchor.token_malformed``: one is unreadable.
    """
    from cryptography import x509  # noqa: PLC0415 - see the module docstring

    carried = []
    for blob in certificates:
        try:
            carried.append(_strict_load(blob))
        except _unreadable() as e:
            raise errors.ProofError(
                "anchor.token_malformed", f"a certificate carried in the token is unreadable ({e})"
            ) from None
    for blob in crls:
        try:
            x509.load_der_x509_crl(blob)
        except ValueError as e:
            raise errors.ProofError(
                "anchor.token_malformed", f"a CRL carried in the token is unreadable ({e})"
            ) from None
    return carried


def signer_certificate(
    candidates: Sequence[x509.Certificate],
    *,
    sid_issuer: bytes | None,
    sid_serial: int | None,
    sid_key_id: bytes | None,
    cert_ids: Sequence[CertId],
) -> x509.Certificate:
    """The given certificate that the SignerInfo sid (RFC 5652 §5.3) and every first ESSCertID
    of the signing-certificate attributes (RFC 2634 §5.4, RFC 5035, RFC 5816) name.

    Raises:
        ``anchor.tsa_cert_mismatch``: none of ``candidates`` is named.
    """
    for cert in candidates:
        der = cert.public_bytes(serialization.Encoding.DER)
        issuer = _issuer_der(cert)
        if _is_sid(cert, issuer, sid_issuer, sid_serial, sid_key_id) and all(
            _cert_id_matches(cert_id, der, issuer, cert) for cert_id in cert_ids
        ):
            return cert
    raise errors.ProofError(
        "anchor.tsa_cert_mismatch",
        "the token's signer (sid and signing-certificate attribute) is not the given TSA "
        "certificate",
    )


def _is_sid(
    cert: x509.Certificate,
    issuer: bytes,
    sid_issuer: bytes | None,
    sid_serial: int | None,
    sid_key_id: bytes | None,
) -> bool:
    from cryptography import x509  # noqa: PLC0415 - see the module docstring

    if sid_key_id is not None:  # [0] SubjectKeyIdentifier
        try:
            ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        except x509.ExtensionNotFound:
            return False
        return ski.value.digest == sid_key_id
    return sid_serial == cert.serial_number and sid_issuer == issuer  # IssuerAndSerialNumber


def _cert_id_matches(cert_id: CertId, der: bytes, issuer: bytes, cert: x509.Certificate) -> bool:
    if cert_id.hash_name not in _CERT_ID_HASHES:
        return False
    if hashlib.new(cert_id.hash_name, der).digest() != cert_id.cert_hash:
        return False
    if cert_id.serial is not None and cert_id.serial != cert.serial_number:
        return False
    return cert_id.issuer is None or cert_id.issuer == issuer


def _issuer_der(cert: x509.Certificate) -> bytes:
    """The issuer Name exactly as encoded in the certificate (RFC 5280 §4.1)."""
    tbs = read_one(cert.tbs_certificate_bytes).children()
    offset = 1 if tbs[0].tag == context(0) else 0  # [0] EXPLICIT version
    return tbs[offset + 2].encoded  # serialNumber, signature, issuer


def check_tsa_usage(cert: x509.Certificate) -> None:
    """RFC 3161 §2.3: extendedKeyUsage critical and only id-kp-timeStamping; keyUsage, when
    present, only digitalSignature and/or nonRepudiation (as openssl requires).

    Raises:
        ``anchor.tsa_cert_eku_invalid``: otherwise.
    """
    from cryptography import x509  # noqa: PLC0415 - see the module docstring
    from cryptography.x509.oid import ExtendedKeyUsageOID  # noqa: PLC0415

    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    except x509.ExtensionNotFound:
        raise errors.ProofError(
            "anchor.tsa_cert_eku_invalid", "the TSA certificate has no extendedKeyUsage"
        ) from None
    if not eku.critical or list(eku.value) != [ExtendedKeyUsageOID.TIME_STAMPING]:
        raise errors.ProofError(
            "anchor.tsa_cert_eku_invalid",
            "the TSA certificate's extendedKeyUsage is not critical id-kp-timeStamping only",
        )
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        return
    allowed = usage.digital_signature or usage.content_commitment
    others = (
        usage.key_encipherment or usage.data_encipherment or usage.key_agreement
        or usage.key_cert_sign or usage.crl_sign
    )  # fmt: skip
    if not allowed or others:
        raise errors.ProofError(
            "anchor.tsa_cert_eku_invalid",
            "the TSA certificate's keyUsage is not digitalSignature/nonRepudiation only",
        )


def check_validity(cert: x509.Certificate, at: datetime, when: str) -> None:
    """``at`` (the token's genTime) lies within the certificate's validity (RFC 5280 §4.1.2.5).

    Raises:
        ``anchor.tsa_cert_not_valid``: otherwise.
    """
    if not cert.not_valid_before_utc <= at <= cert.not_valid_after_utc:
        raise errors.ProofError(
            "anchor.tsa_cert_not_valid",
            f"genTime {when} is outside the TSA certificate's validity "
            f"({cert.not_valid_before_utc.isoformat()} .. {cert.not_valid_after_utc.isoformat()})",
        )


def check_chain(
    cert: x509.Certificate,
    carried: Sequence[x509.Certificate],
    ca_certs: Sequence[x509.Certificate],
    at: datetime,
) -> str:
    """An RFC 5280 path from ``cert`` to one of ``ca_certs`` at ``at`` (genTime); ``carried``
    certificates serve only as untrusted intermediates. Returns the anchor's subject.

    Raises:
        ``anchor.tsa_chain_invalid``: no such path.
    """
    from cryptography.x509 import verification  # noqa: PLC0415 - only with --ca-cert

    builder = (
        verification.PolicyBuilder()
        .store(verification.Store(list(ca_certs)))
        .time(at)
        .extension_policies(
            ca_policy=verification.ExtensionPolicy.webpki_defaults_ca(),
            ee_policy=verification.ExtensionPolicy.permit_all(),  # EKU: check_tsa_usage
        )
    )
    try:
        chain = builder.build_client_verifier().verify(cert, list(carried)).chain
    except verification.VerificationError as e:
        raise errors.ProofError(
            "anchor.tsa_chain_invalid", f"the TSA certificate does not chain to a given CA: {e}"
        ) from None
    return chain[-1].subject.rfc4514_string()
