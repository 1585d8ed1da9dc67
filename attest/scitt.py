"""Signing SCITT Signed Statements (RFC 9943 §6) and issuing COSE Receipts (RFC 9942 §5.2).

>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.verify.scitt.statement import parse_statement
>>> key = derive_test_key("TEST-ONLY scitt doctest issuer")
>>> signed = sign_statement(b"{}", key, issuer="https://issuer.example", subject="pkg:x@1",
...                         content_type="application/json")
>>> parse_statement(signed).subject
'pkg:x@1'

A statement is signed with an Ed25519 key (EdDSA) or a P-256 key (ES256), a receipt by the log
key over the root at ``tree_size``, payload detached; the headers: docs/formats.md §10. Every
byte is deterministic CBOR (RFC 8949 §4.2.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import cbor2
from affidavit.attest.keyring import SigningKey
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import encode
from affidavit.verify.scitt.cose import (
    COSE_SIGN1_TAG,
    HEADER_ALG,
    HEADER_CONTENT_TYPE,
    HEADER_KID,
    sig_structure,
)
from affidavit.verify.scitt.keys import ALG_EDDSA, CoseKey
from affidavit.verify.scitt.receipt import HEADER_VDP, HEADER_VDS, VDP_INCLUSION, VDS_RFC9162_SHA256
from affidavit.verify.scitt.statement import CLAIM_ISS, CLAIM_SUB, HEADER_CWT_CLAIMS
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

__all__ = ["sign_receipt", "sign_statement"]

CLAIM_IAT = 6  # RFC 8392 §3.1.6


def _cose_key(key: Any) -> CoseKey:
    """The COSE key of a :class:`SigningKey` (EdDSA) or a P-256 private key (ES256).

    Raises:
        ``scitt.key_unrecognized``: any other key.
    """
    if isinstance(key, SigningKey):
        return CoseKey.from_ed25519(key.public_key)

    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return CoseKey.from_p256(key.public_key())
    raise errors.ScittError(
        "scitt.key_unrecognized", "a statement is signed with an Ed25519 or a P-256 private key"
    )


def _sign(key: Any, alg: int, message: bytes) -> bytes:
    if alg == ALG_EDDSA:
        signature: bytes = key.sign(message)  # RFC 9053 §2.2
        return signature

    r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")  # RFC 9053 §2.1: r || s


def _sign1(
    key: Any,
    protected: dict[int, Any],
    unprotected: dict[int, Any],
    payload: bytes,
    *,
    detached: bool,
) -> bytes:
    """A COSE_Sign1 signed under its protected ``alg`` (RFC 9052 §4.4)."""
    protected_bytes = encode(protected)
    signature = _sign(key, protected[HEADER_ALG], sig_structure(protected_bytes, payload))
    body = [protected_bytes, unprotected, None if detached else payload, signature]
    return encode(cbor2.CBORTag(COSE_SIGN1_TAG, body))


def sign_statement(
    payload: bytes, key: Any, *, issuer: str, subject: str, content_type: str | None = None
) -> bytes:
    """A Signed Statement over ``payload`` (module docstring).

    Raises:
        ``scitt.key_unrecognized``: not an Ed25519 or P-256 private key.
        ``usage.invalid``: an empty issuer or subject.
    """
    if not issuer or not subject:
        raise errors.UsageError("a Signed Statement needs a non-empty issuer and subject")
    cose = _cose_key(key)
    protected: dict[int, Any] = {
        HEADER_ALG: cose.alg,
        HEADER_KID: cose.thumbprint,
        HEADER_CWT_CLAIMS: {CLAIM_ISS: issuer, CLAIM_SUB: subject},  # RFC 9943 §6
    }
    if content_type:
        protected[HEADER_CONTENT_TYPE] = content_type
    return _sign1(key, protected, {}, payload, detached=False)


def sign_receipt(
    key: SigningKey,
    *,
    leaf_index: int,
    tree_size: int,
    path: Sequence[bytes],
    root: bytes,
    issuer: str,
    subject: str,
    issued_at: datetime,
) -> bytes:
    """The receipt of leaf ``leaf_index`` under ``root`` at ``tree_size``, with its RFC 9162
    §2.1.3 inclusion ``path``, signed by the log key. The caller proves ``path`` and ``root``."""
    inclusion = encode([tree_size, leaf_index, list(path)])  # RFC 9942 §5.2
    cose = CoseKey.from_ed25519(key.public_key)
    protected: dict[int, Any] = {
        HEADER_ALG: ALG_EDDSA,
        HEADER_KID: cose.thumbprint,  # RFC 9679 thumbprint, as SCRAPI recommends
        HEADER_CWT_CLAIMS: {
            CLAIM_ISS: issuer,
            CLAIM_SUB: subject,
            CLAIM_IAT: int(issued_at.timestamp()),
        },
        HEADER_VDS: VDS_RFC9162_SHA256,
    }
    unprotected = {HEADER_VDP: {VDP_INCLUSION: [inclusion]}}
    return _sign1(key, protected, unprotected, root, detached=True)
