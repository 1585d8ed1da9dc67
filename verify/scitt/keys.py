"""The keys SCITT signatures are checked with, as COSE Keys (RFC 9052 §7), and their thumbprints.

>>> from affidavit.verify.crypto.keys import Ed25519PublicKey
>>> key = CoseKey.from_ed25519(Ed25519PublicKey.from_hex(
...     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
>>> key.describe
'EdDSA (Ed25519)'
>>> len(key.thumbprint)
32

Two kinds, each bound to its one algorithm (RFC 9053 §2.1, §2.2): Ed25519 for EdDSA (-8),
verified strictly (docs/adr/0002), and P-256 for ES256 (-7). A key's ``kid`` is its COSE Key
Thumbprint (RFC 9679 §3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.crypto.trusted_keys import parse_key_bytes
from affidavit.verify.scitt.cbor import encode
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import load_pem_public_key

__all__ = [
    "ALG_EDDSA",
    "ALG_ES256",
    "ALG_NAMES",
    "ISSUER_BINDING_SUFFIX",
    "CoseKey",
    "check_alg",
    "key_from_bytes",
    "kid_first",
    "parse_issuer_binding",
]

# docs/transparency.md "Issuer keys and the issuers they sign for": KEYFILE + this suffix.
ISSUER_BINDING_SUFFIX: Final = ".iss"
_MAX_ISSUERS: Final = 1000
# RFC 9053 §2.1, §2.2 (COSE Algorithms registry)
ALG_EDDSA: Final = -8
ALG_ES256: Final = -7
ALG_NAMES: Final = {ALG_EDDSA: "EdDSA", ALG_ES256: "ES256"}
# RFC 9052 §7.1 / RFC 9053 §7 (COSE Key Types and Elliptic Curves registries)
KTY_OKP: Final = 1
KTY_EC2: Final = 2
CRV_P256: Final = 1
CRV_ED25519: Final = 6
_KTY, _KID, _ALG, _CRV, _X, _Y = 1, 2, 3, -1, -2, -3  # COSE Key labels (RFC 9052 §7.1, 9053 §7)
_P256_ORDER: Final = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@dataclass(frozen=True, slots=True)
class CoseKey:
    """A public key a SCITT signature is checked with; ``source`` names where it came from."""

    kty: int
    crv: int
    x: bytes
    y: bytes = b""
    source: str = ""
    issuers: tuple[str, ...] = ()  # the iss values it signs for (:func:`parse_issuer_binding`)

    @classmethod
    def from_ed25519(cls, key: Ed25519PublicKey, source: str = "") -> CoseKey:
        """The OKP form of an Ed25519 key (already checked where it entered)."""
        return cls(KTY_OKP, CRV_ED25519, key.raw, source=source)

    @classmethod
    def from_p256(cls, key: ec.EllipticCurvePublicKey, source: str = "") -> CoseKey:
        """The EC2 form of a P-256 public key (RFC 9053 §7.1.1: x and y, 32 bytes each)."""
        numbers = key.public_numbers()
        x, y = numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")
        return cls(KTY_EC2, CRV_P256, x, y, source)

    @property
    def alg(self) -> int:
        return ALG_EDDSA if self.kty == KTY_OKP else ALG_ES256

    @property
    def describe(self) -> str:
        return "EdDSA (Ed25519)" if self.kty == KTY_OKP else "ES256 (P-256)"

    def bound_to(self, issuers: Sequence[str]) -> CoseKey:
        """This key, signing for ``issuers`` only (an issuer key's binding)."""
        return replace(self, issuers=tuple(issuers))

    def required(self) -> dict[int, Any]:
        """The required parameters (RFC 9679 §4): kty, crv, x (and y for EC2)."""
        params: dict[int, Any] = {_KTY: self.kty, _CRV: self.crv, _X: self.x}
        if self.kty == KTY_EC2:
            params[_Y] = self.y
        return params

    @property
    def thumbprint(self) -> bytes:
        """The COSE Key Thumbprint (RFC 9679 §3) with SHA-256: this key's ``kid``."""
        return hashlib.sha256(encode(self.required())).digest()

    def to_cose(self) -> dict[int, Any]:
        """The COSE Key (RFC 9052 §7) with its ``kid`` (the thumbprint) and ``alg``."""
        return {**self.required(), _KID: self.thumbprint, _ALG: self.alg}

    def verify(self, alg: object, message: bytes, signature: bytes) -> None:
        """Check ``signature`` over ``message`` (a Sig_structure, RFC 9052 §4.4) under ``alg``.

        Raises:
            ``scitt.alg_unsupported``: ``alg`` is not EdDSA or ES256.
            ``scitt.key_mismatch``: ``alg`` does not fit this key.
            ``scitt.signature_invalid``: the signature does not verify.
        """
        chosen = check_alg(alg, self.source or "signature")
        if chosen != self.alg:
            raise errors.ScittError(
                "scitt.key_mismatch",
                f"alg {ALG_NAMES[chosen]} does not fit the {self.describe} key"
                + (f" {self.source}" if self.source else ""),
            )
        if self.kty == KTY_OKP:
            try:
                verify_ed25519(Ed25519PublicKey(self.x), message, signature)  # RFC 9053 §2.2
            except errors.SignatureError as e:
                raise errors.ScittError("scitt.signature_invalid", e.message) from None
            return
        _verify_es256(self.x, self.y, message, signature)


def kid_first(keys: Iterable[CoseKey], kid: bytes | None) -> list[CoseKey]:
    """``keys``, the one whose thumbprint is ``kid`` first (a kid is a hint: all are tried)."""
    return sorted(keys, key=lambda key: key.thumbprint != kid)


def check_alg(alg: object, what: str) -> int:
    """``alg`` when it is the integer EdDSA or ES256 (RFC 9053 §2.1, §2.2).

    Raises:
        ``scitt.alg_unsupported``: anything else, or no alg.
    """
    if type(alg) is not int or alg not in ALG_NAMES:
        raise errors.ScittError(
            "scitt.alg_unsupported",
            f"{what}: alg {alg!r} is not EdDSA (-8) or ES256 (-7) (RFC 9053)",
            details={"alg": alg if isinstance(alg, int | str) else None},
        )
    return alg


def _verify_es256(x: bytes, y: bytes, message: bytes, signature: bytes) -> None:
    """RFC 9053 §2.1: ECDSA P-256 with SHA-256; the signature is ``r || s``, 32 bytes each."""
    if len(signature) != 64:
        raise errors.ScittError(
            "scitt.signature_invalid",
            f"an ES256 signature is 64 bytes (r || s), got {len(signature)}",
        )
    r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    if not (0 < r < _P256_ORDER and 0 < s < _P256_ORDER):
        raise errors.ScittError("scitt.signature_invalid", "ES256 r or s is out of range")
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()
    )
    try:
        numbers.public_key().verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        raise errors.ScittError(
            "scitt.signature_invalid", "the ES256 signature does not verify"
        ) from None


def _p256_from_pem(data: bytes, source: str) -> CoseKey | None:
    """A P-256 SubjectPublicKeyInfo PEM as an EC2 key; None when it is not one."""
    try:
        key = load_pem_public_key(data.strip())
    except (ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        return None
    return CoseKey.from_p256(key, source)


def key_from_bytes(data: bytes, *, source: str) -> CoseKey:
    """The key in a file's bytes: Ed25519 in any trusted-key form, or a P-256 PEM.

    Raises:
        ``scitt.key_unrecognized``: neither (an EC key on another curve, an RSA key...).
        ``key.*``, ``json.*``: a malformed Ed25519 key file (trusted_keys.py).
    """
    try:
        return CoseKey.from_ed25519(parse_key_bytes(data, source=source).key, source)
    except errors.KeyMaterialError as not_ed25519:
        if b"-----BEGIN PUBLIC KEY-----" not in data:
            raise not_ed25519 from None
        p256 = _p256_from_pem(data, source)
        if p256 is None:
            raise errors.ScittError(
                "scitt.key_unrecognized",
                f"{source}: a public key that is neither Ed25519 nor P-256",
            ) from None
        return p256


def parse_issuer_binding(data: bytes, *, source: str) -> tuple[str, ...]:
    """The issuers (CWT ``iss``) an issuer key signs for, from its binding file
    (docs/transparency.md "Issuer keys and the issuers they sign for"): UTF-8, 1 to 1,000 lines of
    one ``iss`` each, newline-ended, none empty, padded, with a control character or repeated.

    Raises:
        ``usage.invalid``: anything else (the binding is the operator's or the caller's input).
    """

    def bad(why: str) -> errors.UsageError:
        return errors.UsageError(f"{source}: {why} (one issuer a line, each ending in a newline)")

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not UTF-8") from None
    if not text.endswith("\n"):
        raise bad("empty, or the last line does not end in a newline")
    lines = text[:-1].split("\n")
    if len(lines) > _MAX_ISSUERS:
        raise bad(f"more than {_MAX_ISSUERS} issuers")
    for line in lines:
        if not line or line != line.strip() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in line):
            raise bad(f"the line {line!r} is empty, has spaces around it or a control character")
    if len(set(lines)) != len(lines):
        raise bad("an issuer is named twice")
    return tuple(lines)
