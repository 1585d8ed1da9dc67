"""Strict Ed25519 signature verification through libsodium (PyNaCl).

>>> from affidavit.verify.crypto.keys import Ed25519PublicKey
>>> key = Ed25519PublicKey.from_hex(
...     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
>>> signature = bytes.fromhex(
...     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
...     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
>>> verify_ed25519(key, b"", signature)  # RFC 8032 §7.1 test 1: returns None

Strict as docs/adr/0002-ed25519-strictness.md decides, checked against Wycheproof and
ed25519-speccheck: 64-byte signatures with ``S < L`` (RFC 8032 §5.1.7); small-order and
non-canonical keys refused where parsed (``key.weak``, ``key.non_canonical``), small-order and
non-canonical R by libsodium, whose cofactorless equation ``[S]B = R + [k]A`` this is.
"""

from __future__ import annotations

import nacl.bindings
import nacl.exceptions
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey, b64decode_strict, b64url_decode_strict

__all__ = [
    "ED25519_SIGNATURE_BYTES",
    "decode_signature_b64",
    "decode_signature_b64url",
    "verify_ed25519",
    "verify_ed25519_b64",
]

ED25519_SIGNATURE_BYTES = 64

# RFC 8032 §5.1: L, the order of the prime-order subgroup; S must be below it.
_L = 2**252 + 27742317777372353535851937790883648493


def verify_ed25519(key: Ed25519PublicKey, message: bytes, signature: bytes) -> None:
    """Verify an Ed25519 ``signature`` of ``message`` under ``key`` (strict, module docstring).

    Raises:
        ``signature.malformed``: ``signature`` is not 64 bytes.
        ``signature.bad``: the signature does not verify.
    """
    _exactly_64(signature)
    if int.from_bytes(signature[32:], "little") >= _L:  # RFC 8032 §5.1.7 step 1
        raise errors.SignatureError(
            "signature.bad", "signature S is not reduced modulo L (malleable)"
        )
    try:
        nacl.bindings.crypto_sign_open(signature + message, key.raw)
    except nacl.exceptions.BadSignatureError:
        raise errors.SignatureError("signature.bad", "Ed25519 signature does not verify") from None
    except (nacl.exceptions.ValueError, nacl.exceptions.TypeError) as e:  # pragma: no cover
        raise errors.SignatureError("signature.bad", f"Ed25519 signature rejected: {e}") from None


def decode_signature_b64(text: str | bytes) -> bytes:
    """Strict standard base64 of exactly 64 bytes (docs/formats.md §3: signatures are ``b64``).

    Raises:
        ``signature.malformed``: not canonical base64, or not 64 bytes.
    """
    try:
        raw = b64decode_strict(text)
    except (ValueError, UnicodeError) as e:
        raise errors.SignatureError("signature.malformed", f"signature: {e}") from None
    return _exactly_64(raw)


def decode_signature_b64url(text: str) -> bytes:
    """Strict URL-safe base64 (padded or not) of 64 bytes (docs/formats.md §5: fact signatures).

    Raises:
        ``signature.malformed``: not canonical base64url, or not 64 bytes.
    """
    try:
        raw = b64url_decode_strict(text)
    except ValueError as e:
        raise errors.SignatureError("signature.malformed", f"signature: {e}") from None
    return _exactly_64(raw)


def verify_ed25519_b64(key: Ed25519PublicKey, message: bytes, signature_b64: str) -> None:
    """Decode a standard-base64 signature strictly, then :func:`verify_ed25519`.

    Raises:
        ``signature.malformed``: the signature text is malformed (exit 2).
        ``signature.bad``: the signature does not verify (exit 1).
    """
    verify_ed25519(key, message, decode_signature_b64(signature_b64))


def _exactly_64(raw: bytes) -> bytes:
    if len(raw) != ED25519_SIGNATURE_BYTES:
        raise errors.SignatureError(
            "signature.malformed",
            f"an Ed25519 signature is 64 bytes, got {len(raw)}",
            details={"length": len(raw)},
        )
    return raw
