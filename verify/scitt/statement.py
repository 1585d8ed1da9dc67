"""Signed Statements and Transparent Statements (RFC 9943 §6, §7), and the leaf entry they are
logged under.

>>> LEAF_RULE
'SHA-256 of the Signed Statement with its unprotected header emptied (RFC 9943 §6.3)'

A Signed Statement is a tagged COSE_Sign1 whose protected CWT claims (15, RFC 9597 §2) carry a
text ``iss`` and ``sub``; a Transparent Statement adds its COSE Receipts at unprotected 394
(RFC 9942 §4.3). The RFC 9162 leaf hash is ``SHA-256(0x00 || entry)`` (docs/formats.md "SCITT"),
as scitt-ccf-ledger and scitt-cose's vectors use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.scitt.cose import (
    HEADER_ALG,
    HEADER_CONTENT_TYPE,
    HEADER_CRIT,
    HEADER_KID,
    Sign1,
    parse_sign1,
)
from affidavit.verify.scitt.keys import ALG_NAMES, CoseKey, check_alg, kid_first

__all__ = [
    "CLAIM_ISS",
    "CLAIM_SUB",
    "HEADER_CWT_CLAIMS",
    "HEADER_RECEIPTS",
    "LEAF_RULE",
    "MAX_RECEIPTS",
    "SignedStatement",
    "parse_statement",
]

HEADER_CWT_CLAIMS: Final = 15  # RFC 9597 §2
HEADER_RECEIPTS: Final = 394  # RFC 9942 §4.3
CLAIM_ISS: Final = 1  # RFC 8392 §3.1.1
CLAIM_SUB: Final = 2  # RFC 8392 §3.1.2
MAX_RECEIPTS: Final = 16
LEAF_RULE: Final = (
    "SHA-256 of the Signed Statement with its unprotected header emptied (RFC 9943 §6.3)"
)
# The protected labels a statement's reader processes (RFC 9052 §3.1 crit).
UNDERSTOOD: Final = frozenset({HEADER_ALG, HEADER_CRIT, HEADER_CONTENT_TYPE, HEADER_KID, 15})


@dataclass(frozen=True, slots=True)
class SignedStatement:
    """A Signed (or Transparent) Statement, parsed; nothing in it is verified yet."""

    sign1: Sign1
    issuer: str
    subject: str
    content_type: str | int | None
    claims: dict[Any, Any]
    receipts: tuple[bytes, ...]

    @property
    def registered_bytes(self) -> bytes:
        """The statement as registered: its unprotected header emptied (RFC 9943 §6.3)."""
        return self.sign1.encoded(unprotected={})

    @property
    def leaf_entry(self) -> bytes:
        """The log entry for this statement: SHA-256 of :attr:`registered_bytes` (module
        docstring); the RFC 9162 leaf hash is ``SHA-256(0x00 || leaf_entry)``."""
        return hashlib.sha256(self.registered_bytes).digest()

    @property
    def entry_id(self) -> str:
        """The registration's ID: :attr:`leaf_entry` in lowercase hex."""
        return self.leaf_entry.hex()

    @property
    def alg_name(self) -> str:
        """``EdDSA`` or ``ES256`` (:func:`parse_statement` refuses any other)."""
        return ALG_NAMES[check_alg(self.sign1.alg, "statement")]

    def verify_signature(self, key: CoseKey) -> None:
        """The issuer's signature under ``key`` (RFC 9052 §4.4).

        Raises:
            ``scitt.payload_missing``: the payload is detached.
            ``scitt.alg_unsupported``, ``scitt.key_mismatch``, ``scitt.signature_invalid``.
        """
        key.verify(self.sign1.alg, self.sign1.to_be_signed(), self.sign1.signature)

    def verify_under(self, keys: Sequence[CoseKey]) -> CoseKey:
        """The one of ``keys`` the issuer's signature verifies under, the one its ``kid`` names
        tried first (a hint: all are tried).

        Raises:
            ``scitt.signature_invalid``: it verifies under none of several keys (or no key).
            ``scitt.payload_missing``, ``scitt.key_mismatch``: under the one key given (and
                ``scitt.signature_invalid``, as :meth:`verify_signature`).
        """
        error = errors.ScittError(
            "scitt.signature_invalid", f"the signature verifies under none of the {len(keys)} keys"
        )
        for key in kid_first(keys, self.sign1.kid):
            try:
                self.verify_signature(key)
            except errors.ScittError as e:
                error = e if len(keys) == 1 else error
                continue
            return key
        raise error

    def verify_issuer(self, keys: Sequence[CoseKey]) -> CoseKey:
        """The one of ``keys`` bound to the issuer this statement names (its ``iss``,
        :attr:`CoseKey.issuers`) that its signature verifies under: RFC 9943 §5.1.1.1 requires
        the key of the issuer the statement names, not any trusted issuer's.

        Raises:
            ``scitt.issuer_mismatch``: it verifies only under keys bound to other issuers.
            everything :meth:`verify_under` raises, when it verifies under none of ``keys``.
        """
        bound = [key for key in keys if self.issuer in key.issuers]
        if bound:
            try:
                return self.verify_under(bound)
            except errors.ScittError:
                pass
        signer = self.verify_under(keys)  # raises when no key at all verifies it
        raise errors.ScittError(
            "scitt.issuer_mismatch",
            f"the statement names iss {self.issuer!r}, but the key it verifies under"
            f"{' (' + signer.source + ')' if signer.source else ''} signs only for"
            f" {', '.join(map(repr, signer.issuers)) or 'no issuer'}",
            details={"issuer": self.issuer, "key_issuers": list(signer.issuers)},
        )


def _text_claim(claims: dict[Any, Any], label: int, name: str, what: str) -> str:
    value = claims.get(label)
    if not isinstance(value, str) or not value:
        raise errors.ScittError(
            "scitt.claims_missing",
            f"{what}: the CWT claims have no text {name} (claim {label}, RFC 9943 §6)",
        )
    return value


def parse_statement(
    data: bytes, *, what: str = "statement", max_bytes: int | None = None
) -> SignedStatement:
    """The Signed or Transparent Statement in ``data`` (module docstring).

    Raises:
        ``cbor.*``, ``scitt.cose_malformed``, ``scitt.crit_unsupported``: see
            :func:`affidavit.verify.scitt.cose.parse_sign1`.
        ``scitt.alg_unsupported``: alg is missing or not EdDSA or ES256.
        ``scitt.claims_missing``: no CWT claims with a text iss and sub.
        ``scitt.header_invalid``: a content type, kid or receipts header of the wrong type.
    """
    limits = {} if max_bytes is None else {"max_bytes": max_bytes}
    sign1 = parse_sign1(data, what=what, understood=UNDERSTOOD, **limits)
    check_alg(sign1.alg, what)
    claims = sign1.protected.get(HEADER_CWT_CLAIMS)
    if not isinstance(claims, dict):
        raise errors.ScittError(
            "scitt.claims_missing",
            f"{what}: no CWT claims map at protected header 15 (RFC 9597 §2, RFC 9943 §6)",
        )
    issuer = _text_claim(claims, CLAIM_ISS, "iss", what)
    subject = _text_claim(claims, CLAIM_SUB, "sub", what)
    content_type = sign1.protected.get(HEADER_CONTENT_TYPE)
    if content_type is not None and (
        not isinstance(content_type, str | int) or isinstance(content_type, bool)
    ):
        raise errors.ScittError("scitt.header_invalid", f"{what}: content type is not text or uint")
    if HEADER_KID in sign1.protected and sign1.kid is None:
        raise errors.ScittError("scitt.header_invalid", f"{what}: kid is not a byte string")
    return SignedStatement(
        sign1, issuer, subject, content_type, claims, _receipts(sign1.unprotected, what)
    )


def _receipts(unprotected: dict[Any, Any], what: str) -> tuple[bytes, ...]:
    """The receipts at unprotected 394: ``[+ bstr .cbor Receipt]`` (RFC 9942 §4.3)."""
    if HEADER_RECEIPTS not in unprotected:
        return ()
    found = unprotected[HEADER_RECEIPTS]
    if not isinstance(found, list) or not found or len(found) > MAX_RECEIPTS:
        raise errors.ScittError(
            "scitt.header_invalid",
            f"{what}: receipts (394) is not an array of 1 to {MAX_RECEIPTS} receipts",
        )
    if not all(isinstance(item, bytes) for item in found):
        raise errors.ScittError(
            "scitt.header_invalid", f"{what}: a receipt at 394 is not a byte string"
        )
    return tuple(found)
