"""RFC 3161 time-stamp tokens, verified offline against a TSA certificate the caller trusts
(docs/adr/0010-rfc3161-tokens.md).

A token is a CMS SignedData (RFC 5652 §5) around a TSTInfo (RFC 3161 §2.4.2). :func:`parse_token`
reads one strictly (:mod:`affidavit.verify.anchor.der`) from a TimeStampResp or a bare
TimeStampToken; :func:`verify_token` checks the signer, its TSA usage, the messageDigest, the
signature, genTime within validity, an optional chain to given CAs and the message imprint, each
failure with its own ``anchor.*`` code. Certificates carried in the token are never trusted.

Load this module lazily (it imports ``cryptography``). Every ``cryptography.x509`` import is local
to its function: it loads ``socket``, which no ``affidavit.verify`` module may load on import
(``tests/verify/test_offline_imports.py``).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.anchor.der import (
    INTEGER,
    SEQUENCE,
    SET,
    DerError,
    Element,
    context,
    read_one,
)
from affidavit.verify.json.forms import format_utc_fraction
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.utils import CryptographyDeprecationWarning

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "ParsedToken",
    "VerifiedToken",
    "load_certificate",
    "parse_token",
    "verify_token",
]

# Object identifiers (RFC 5652 §14, RFC 3161 §2.4.2, RFC 5754, RFC 8017, RFC 5758, RFC 8410).
ID_SIGNED_DATA: Final = "1.2.840.113549.1.7.2"
ID_CT_TSTINFO: Final = "1.2.840.113549.1.9.16.1.4"
ID_CONTENT_TYPE: Final = "1.2.840.113549.1.9.3"
ID_MESSAGE_DIGEST: Final = "1.2.840.113549.1.9.4"
ID_SIGNING_CERTIFICATE: Final = "1.2.840.113549.1.9.16.2.12"
ID_SIGNING_CERTIFICATE_V2: Final = "1.2.840.113549.1.9.16.2.47"

HASHES: Final[dict[str, str]] = {
    "1.3.14.3.2.26": "sha1",
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
    "2.16.840.1.101.3.4.2.4": "sha224",
    "2.16.840.1.101.3.4.2.6": "sha512_256",
}
STRONG_HASHES: Final = frozenset({"sha256", "sha384", "sha512"})
_CRYPTO_HASH: Final[dict[str, type[hashes.HashAlgorithm]]] = {
    "sha256": hashes.SHA256,
    "sha384": hashes.SHA384,
    "sha512": hashes.SHA512,
}
# signatureAlgorithm OID -> (key kind, hash it implies or None = the SignerInfo digestAlgorithm)
_SIGNATURES: Final[dict[str, tuple[str, str | None]]] = {
    "1.2.840.113549.1.1.1": ("rsa", None),
    "1.2.840.113549.1.1.11": ("rsa", "sha256"),
    "1.2.840.113549.1.1.12": ("rsa", "sha384"),
    "1.2.840.113549.1.1.13": ("rsa", "sha512"),
    "1.2.840.10045.4.3.2": ("ecdsa", "sha256"),
    "1.2.840.10045.4.3.3": ("ecdsa", "sha384"),
    "1.2.840.10045.4.3.4": ("ecdsa", "sha512"),
}


class ParsedToken(NamedTuple):
    """A token read strictly; nothing in it is verified yet."""

    status: int | None  # PKIStatus when read from a TimeStampResp, None for a bare token
    policy: str
    imprint_oid: str
    hashed_message: bytes
    serial_number: int
    gen_time: datetime
    accuracy: dict[str, int] | None
    ordering: bool
    nonce: int | None
    tst_info: bytes  # the eContent octets the messageDigest attribute covers
    sid_issuer: bytes | None  # IssuerAndSerialNumber: DER issuer Name ...
    sid_serial: int | None  # ... and serial
    sid_key_id: bytes | None  # or SubjectKeyIdentifier
    digest_oid: str
    signed_attrs: bytes  # DER of SignedAttributes with the SET tag (RFC 5652 §5.4)
    message_digest: bytes
    cert_ids: tuple[CertId, ...]
    signature_oid: str
    signature: bytes
    certificates: tuple[bytes, ...]  # carried in the token, untrusted
    crls: tuple[bytes, ...]  # carried in the token, unused


class VerifiedToken(NamedTuple):
    """What a verified token proves: the TSA vouches that the imprint existed at ``gen_time``."""

    gen_time: datetime
    serial_number: int
    policy: str
    imprint_algorithm: str
    nonce: int | None
    accuracy: dict[str, int] | None
    tsa_subject: str
    tsa_cert_sha256: str
    chained_to: str | None  # subject of the CA the path ends at, when CAs were given

    def to_json(self) -> dict[str, Any]:
        """JSON form, in field order: genTime as RFC 3339 UTC, the integers as text."""
        return {
            **self._asdict(),
            "gen_time": format_utc_fraction(self.gen_time),
            "serial_number": str(self.serial_number),
            "nonce": None if self.nonce is None else str(self.nonce),
        }


def parse_token(der: bytes) -> ParsedToken:
    """Read a DER TimeStampResp or bare TimeStampToken strictly.

    Raises:
        ``anchor.token_malformed``: not strict DER of the RFC 3161 / RFC 5652 structures.
        ``anchor.tsa_not_granted``: a TimeStampResp whose status is not granted or grantedWithMods.
    """
    try:
        return _parse(der)
    except (ValueError, IndexError) as e:  # DerError, or a structure of the wrong arity
        raise errors.ProofError(
            "anchor.token_malformed", f"time-stamp token: {e or 'truncated'}"
        ) from None


def _parse(der: bytes) -> ParsedToken:
    top = read_one(der).expect(SEQUENCE, "TimeStampResp or ContentInfo")
    parts = top.children()
    status: int | None = None
    if parts and parts[0].tag == SEQUENCE:  # TimeStampResp ::= SEQUENCE {status, token OPTIONAL}
        if len(parts) > 2:
            raise DerError("TimeStampResp has extra elements")
        status = parts[0].children()[0].as_int()
        if status not in (0, 1):  # granted, grantedWithMods (RFC 3161 §2.4.2)
            raise errors.ProofError(
                "anchor.tsa_not_granted",
                f"TimeStampResp status is {status}, not granted (0) or grantedWithMods (1)",
                details={"pki_status": status},
            )
        if len(parts) < 2:
            raise DerError("TimeStampResp is granted but carries no timeStampToken")
        parts = parts[1].expect(SEQUENCE, "timeStampToken").children()
    # ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT }  (RFC 5652 §3)
    if len(parts) != 2 or parts[0].as_oid() != ID_SIGNED_DATA:
        raise DerError("timeStampToken is not a ContentInfo of id-signedData")
    (signed_data,) = parts[1].expect(context(0), "ContentInfo content").children()
    return _parse_signed_data(signed_data.expect(SEQUENCE, "SignedData"), status)


def _parse_signed_data(signed_data: Element, status: int | None) -> ParsedToken:
    items = signed_data.children()
    if items[0].as_int() not in (3, 4, 5):  # RFC 5652 §5.1: eContentType is not id-data
        raise DerError("SignedData version is not 3, 4 or 5")
    digests = {_algorithm(a) for a in items[1].expect(SET, "digestAlgorithms").children()}
    encap = items[2].expect(SEQUENCE, "encapContentInfo").children()
    if len(encap) != 2 or encap[0].as_oid() != ID_CT_TSTINFO:
        raise DerError("encapContentInfo is not an eContent of id-ct-TSTInfo")
    (econtent,) = encap[1].expect(context(0), "eContent").children()
    tst_info = econtent.as_octets()
    rest = items[3:]
    certificates: tuple[bytes, ...] = ()
    if rest and rest[0].tag == context(0):  # certificates [0] IMPLICIT CertificateSet
        # CertificateChoices: only plain X.509 certificates; the obsolete and attribute-
        # certificate choices ([0]..[3], RFC 5652 §10.2.2) have no use in a time-stamp token.
        certificates = tuple(c.expect(SEQUENCE, "Certificate").encoded for c in rest[0].children())
        rest = rest[1:]
    crls: tuple[bytes, ...] = ()
    if rest and rest[0].tag == context(1):  # crls [1] IMPLICIT RevocationInfoChoices (unused)
        crls = tuple(c.expect(SEQUENCE, "CertificateList").encoded for c in rest[0].children())
        rest = rest[1:]
    if len(rest) != 1:
        raise DerError("SignedData has no signerInfos or extra elements")
    signers = rest[0].expect(SET, "signerInfos").children()
    if len(signers) != 1:  # RFC 3161 §2.4.2: exactly one signer, the TSA
        raise DerError(f"a time-stamp token has exactly one SignerInfo, found {len(signers)}")
    signer = _parse_signer(signers[0].expect(SEQUENCE, "SignerInfo"))
    if signer["digest_oid"] not in digests:  # RFC 5652 §5.1: digestAlgorithms lists the signer's
        raise DerError("the signer's digestAlgorithm is not among SignedData digestAlgorithms")
    tst = _parse_tst_info(tst_info)
    return ParsedToken(status=status, tst_info=tst_info, certificates=certificates, crls=crls,
                       **tst, **signer)  # fmt: skip


def _parse_tst_info(data: bytes) -> dict[str, Any]:
    """TSTInfo (RFC 3161 §2.4.2)."""
    items = read_one(data).expect(SEQUENCE, "TSTInfo").children()
    if items[0].as_int() != 1:
        raise DerError("TSTInfo version is not 1")
    imprint = items[2].expect(SEQUENCE, "messageImprint").children()
    if len(imprint) != 2:
        raise DerError("messageImprint is not {hashAlgorithm, hashedMessage}")
    out: dict[str, Any] = {
        "policy": items[1].as_oid(),
        "imprint_oid": _algorithm(imprint[0]),
        "hashed_message": imprint[1].as_octets(),
        "serial_number": items[3].as_int(),
        "gen_time": items[4].as_generalized_time(),
        "accuracy": None,
        "ordering": False,
        "nonce": None,
    }
    rest = items[5:]
    if rest and rest[0].tag == SEQUENCE:  # accuracy
        out["accuracy"] = _accuracy(rest[0])
        rest = rest[1:]
    if rest and rest[0].tag == 0x01:  # ordering BOOLEAN DEFAULT FALSE
        out["ordering"] = rest[0].as_bool()
        rest = rest[1:]
    if rest and rest[0].tag == INTEGER:  # nonce
        out["nonce"] = rest[0].as_int()
        rest = rest[1:]
    if rest and rest[0].tag == context(0):  # tsa [0] GeneralName (reported via the cert)
        rest = rest[1:]
    if rest and rest[0].tag == context(1):  # extensions [1] IMPLICIT
        rest = rest[1:]
    if rest:
        raise DerError("TSTInfo has unexpected trailing elements")
    return out


def _accuracy(element: Element) -> dict[str, int]:
    names = {INTEGER: "seconds", 0x80: "millis", 0x81: "micros"}
    out: dict[str, int] = {}
    for part in element.children():
        name = names.get(part.tag)
        if name is None or name in out:
            raise DerError("Accuracy has an unexpected element")
        out[name] = part._replace(tag=INTEGER).as_int()
    return out


def _parse_signer(signer: Element) -> dict[str, Any]:
    """SignerInfo (RFC 5652 §5.3) of a time-stamp token."""
    items = signer.children()
    version = items[0].as_int()
    sid = items[1]
    out: dict[str, Any] = {"sid_issuer": None, "sid_serial": None, "sid_key_id": None}
    if sid.tag == SEQUENCE and version == 1:  # IssuerAndSerialNumber
        issuer, serial = sid.children()
        out["sid_issuer"] = issuer.expect(SEQUENCE, "sid issuer").encoded
        out["sid_serial"] = serial.as_int()
    elif sid.tag == 0x80 and version == 3:  # [0] SubjectKeyIdentifier
        out["sid_key_id"] = sid.content
    else:
        raise DerError("SignerInfo sid and version disagree (RFC 5652 §5.3)")
    out["digest_oid"] = _algorithm(items[2])
    attrs = items[3].expect(context(0), "signedAttrs (required for TSTInfo, RFC 5652 §5.3)")
    out["signed_attrs"] = bytes([SET]) + attrs.encoded[1:]  # RFC 5652 §5.4: sign as SET OF
    out["signature_oid"] = _algorithm(items[4])
    out["signature"] = items[5].as_octets()
    if len(items) > 7 or (len(items) == 7 and items[6].tag != context(1)):
        raise DerError("SignerInfo has unexpected trailing elements")
    values: dict[str, Element] = {}
    for attribute in attrs.children():
        kind, value_set = attribute.expect(SEQUENCE, "Attribute").children()
        oid = kind.as_oid()
        found = value_set.expect(SET, "attrValues").children()
        if oid in values or len(found) != 1:  # RFC 5652 §5.3: one value, no repeats
            raise DerError(f"signed attribute {oid} is repeated or has {len(found)} values")
        values[oid] = found[0]
    if ID_CONTENT_TYPE not in values or values[ID_CONTENT_TYPE].as_oid() != ID_CT_TSTINFO:
        raise DerError("signed contentType attribute is absent or not id-ct-TSTInfo")
    if ID_MESSAGE_DIGEST not in values:
        raise DerError("signed attributes carry no messageDigest")
    out["message_digest"] = values[ID_MESSAGE_DIGEST].as_octets()
    cert_ids: list[CertId] = []
    if ID_SIGNING_CERTIFICATE in values:
        cert_ids.append(_first_cert_id(values[ID_SIGNING_CERTIFICATE], v2=False))
    if ID_SIGNING_CERTIFICATE_V2 in values:
        cert_ids.append(_first_cert_id(values[ID_SIGNING_CERTIFICATE_V2], v2=True))
    if not cert_ids:  # RFC 3161 §2.4.1, RFC 5816 §2.2.1
        raise DerError("no signingCertificate(V2) attribute identifies the TSA certificate")
    out["cert_ids"] = tuple(cert_ids)
    return out


def _first_cert_id(value: Element, *, v2: bool) -> CertId:
    """The first ESSCertID(v2) of a SigningCertificate(V2): it names the signer (RFC 5035)."""
    certs = value.expect(SEQUENCE, "SigningCertificate").children()[0].expect(SEQUENCE, "certs")
    parts = certs.children()[0].expect(SEQUENCE, "ESSCertID").children()
    hash_name = "sha1"
    if v2:
        hash_name = "sha256"  # DEFAULT id-sha256 (RFC 5035 §5.4.1.1)
        if parts[0].tag == SEQUENCE:
            hash_name = HASHES.get(_algorithm(parts[0]), "unknown")
            parts = parts[1:]
    cert_hash = parts[0].as_octets()
    issuer: bytes | None = None
    serial: int | None = None
    if len(parts) > 1:  # IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber }
        names, serial_element = parts[1].expect(SEQUENCE, "IssuerSerial").children()
        serial = serial_element.as_int()
        for name in names.expect(SEQUENCE, "GeneralNames").children():
            if name.tag == context(4):  # directoryName [4] EXPLICIT Name
                issuer = name.children()[0].expect(SEQUENCE, "Name").encoded
    return CertId(hash_name, cert_hash, issuer, serial)


def _algorithm(element: Element) -> str:
    """An AlgorithmIdentifier's OID; parameters absent or NULL only (RFC 5754 §2)."""
    parts = element.expect(SEQUENCE, "AlgorithmIdentifier").children()
    if not parts or len(parts) > 2 or (len(parts) == 2 and parts[1].encoded != b"\x05\x00"):
        raise DerError("AlgorithmIdentifier parameters are not absent or NULL")
    return parts[0].as_oid()


def verify_token(
    token: ParsedToken,
    data: bytes,
    tsa_certs: Sequence[x509.Certificate],
    ca_certs: Sequence[x509.Certificate] = (),
) -> VerifiedToken:
    """Verify ``token`` as a time-stamp of ``data`` by one of ``tsa_certs`` (see module doc).

    Raises:
        ``anchor.*``: the code names the first check that fails.
    """
    cert = signer_certificate(tsa_certs, token)
    carried = check_carried(token.certificates, token.crls)
    check_tsa_usage(cert)
    digest_name = HASHES.get(token.digest_oid)
    if digest_name not in STRONG_HASHES:
        raise errors.ProofError(
            "anchor.algorithm_unsupported",
            f"SignerInfo digestAlgorithm {token.digest_oid} is not SHA-256/384/512",
        )
    if hashlib.new(digest_name, token.tst_info).digest() != token.message_digest:
        raise errors.ProofError(
            "anchor.message_digest_mismatch",
            "the signed messageDigest is not the hash of the TSTInfo (content altered)",
        )
    _check_signature(token, cert, digest_name)
    check_validity(cert, token.gen_time)
    chained_to = check_chain(cert, carried, ca_certs, token.gen_time) if ca_certs else None
    imprint_name = HASHES.get(token.imprint_oid)
    if imprint_name not in STRONG_HASHES:
        raise errors.ProofError(
            "anchor.imprint_algorithm_unsupported",
            f"messageImprint hash {imprint_name or token.imprint_oid} is not SHA-256/384/512",
            details={"imprint_algorithm": imprint_name or token.imprint_oid},
        )
    expected = hashlib.new(imprint_name, data).digest()
    if expected != token.hashed_message:
        raise errors.ProofError(
            "anchor.imprint_mismatch",
            f"the token time-stamps {token.hashed_message.hex()}, not the {imprint_name} of the "
            f"tree head ({expected.hex()})",
            details={"imprint_algorithm": imprint_name},
        )
    return VerifiedToken(
        gen_time=token.gen_time,
        serial_number=token.serial_number,
        policy=token.policy,
        imprint_algorithm=imprint_name,
        nonce=token.nonce,
        accuracy=token.accuracy,
        tsa_subject=cert.subject.rfc4514_string(),
        tsa_cert_sha256=cert.fingerprint(hashes.SHA256()).hex(),
        chained_to=chained_to,
    )


def _check_signature(token: ParsedToken, cert: x509.Certificate, digest_name: str) -> None:
    """The signature over the DER signed attributes (RFC 5652 §5.4) under the cert's key."""
    algorithm = _SIGNATURES.get(token.signature_oid)
    if algorithm is None or (algorithm[1] is not None and algorithm[1] != digest_name):
        raise errors.ProofError(
            "anchor.algorithm_unsupported",
            f"signatureAlgorithm {token.signature_oid} with digest {digest_name} is not supported",
        )
    kind = algorithm[0]
    key = cert.public_key()
    chosen = _CRYPTO_HASH[digest_name]()
    try:
        if kind == "rsa" and isinstance(key, rsa.RSAPublicKey):
            key.verify(token.signature, token.signed_attrs, padding.PKCS1v15(), chosen)
        elif kind == "ecdsa" and isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(token.signature, token.signed_attrs, ec.ECDSA(chosen))
        else:
            raise errors.ProofError(
                "anchor.tsa_signature_invalid",
                f"the TSA certificate's key does not fit signature algorithm {kind}",
            )
    except InvalidSignature:
        raise errors.ProofError(
            "anchor.tsa_signature_invalid",
            "the TSA signature over the signed attributes does not verify",
        ) from None


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
        ``anchor.tsa_cert_unreadable``: neither (exit 2).
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
    """The certificates a token carries, for path building only: never taken as the signer, but
    each (and each CRL) must be readable, as openssl also requires.

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
    candidates: Sequence[x509.Certificate], token: ParsedToken
) -> x509.Certificate:
    """The given certificate that the token's SignerInfo sid (RFC 5652 §5.3) and every first
    ESSCertID of its signing-certificate attributes (RFC 2634 §5.4, RFC 5035, RFC 5816) name.

    Raises:
        ``anchor.tsa_cert_mismatch``: none of ``candidates`` is named.
    """
    for cert in candidates:
        der = cert.public_bytes(serialization.Encoding.DER)
        issuer = _issuer_der(cert)
        if _is_sid(cert, issuer, token) and all(
            _cert_id_matches(cert_id, der, issuer, cert) for cert_id in token.cert_ids
        ):
            return cert
    raise errors.ProofError(
        "anchor.tsa_cert_mismatch",
        "the token's signer (sid and signing-certificate attribute) is not the given TSA "
        "certificate",
    )


def _is_sid(cert: x509.Certificate, issuer: bytes, token: ParsedToken) -> bool:
    from cryptography import x509  # noqa: PLC0415 - see the module docstring

    if token.sid_key_id is not None:  # [0] SubjectKeyIdentifier
        try:
            ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        except x509.ExtensionNotFound:
            return False
        return ski.value.digest == token.sid_key_id
    # IssuerAndSerialNumber
    return token.sid_serial == cert.serial_number and token.sid_issuer == issuer


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


def check_validity(cert: x509.Certificate, at: datetime) -> None:
    """``at`` (the token's genTime) lies within the certificate's validity (RFC 5280 §4.1.2.5).

    Raises:
        ``anchor.tsa_cert_not_valid``: otherwise.
    """
    if not cert.not_valid_before_utc <= at <= cert.not_valid_after_utc:
        raise errors.ProofError(
            "anchor.tsa_cert_not_valid",
            f"genTime {format_utc_fraction(at)} is outside the TSA certificate's validity "
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
