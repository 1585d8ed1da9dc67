"""Codes of the anchor room: receipts and their RFC 3161 time-stamp tokens.

The family classes that raise them are in :mod:`affidavit.verify.errors`; the exit code is the
code's, not the class's (2 unreadable input, 1 does not verify, 3 refused by policy).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

ANCHOR: Final = (
    Code(
        "anchor.algorithm_unsupported",
        FAILED,
        (
            "The token's signer digest/signature algorithm is not SHA-256/384/512 with RSA PKCS#1"
            " v1.5 or ECDSA."
        ),
    ),
    Code("anchor.digest_algorithm_unsupported", FAILED, 'sth_digest_algorithm is not "SHA-256".'),
    Code(
        "anchor.digest_mismatch",
        FAILED,
        "sth_digest differs from H(py-compact(sth)) recomputed over the receipt's sth.",
    ),
    Code(
        "anchor.imprint_algorithm_unsupported",
        FAILED,
        "The token's messageImprint hash is not SHA-256/384/512 (SHA-1 is refused).",
    ),
    Code(
        "anchor.imprint_mismatch",
        FAILED,
        (
            "messageImprint.hashedMessage differs from the hash, under the token's algorithm, of "
            "py-compact(sth)."
        ),
    ),
    Code(
        "anchor.malformed",
        INPUT,
        "Not an anchor receipt: a required field (receipt or sth) is absent or mistyped.",
    ),
    Code(
        "anchor.message_digest_mismatch",
        FAILED,
        "The messageDigest signed attribute differs from the hash of the TSTInfo.",
    ),
    Code(
        "anchor.sth_mismatch",
        FAILED,
        "The receipt's sth differs from the signed tree head it should anchor.",
    ),
    Code(
        "anchor.token_absent",
        FAILED,
        "The receipt has no tsr_base64 time-stamp token to verify.",
    ),
    Code(
        "anchor.token_malformed",
        FAILED,
        "tsr_base64 is not a DER TimeStampResp/TimeStampToken (RFC 3161 §2.4.2, RFC 5652 §5).",
    ),
    Code(
        "anchor.token_unchecked",
        FAILED,
        "The RFC 3161 token was not verified (no trusted TSA certificate given): not verified.",
    ),
    Code(
        "anchor.tsa_cert_eku_invalid",
        FAILED,
        (
            "The TSA certificate lacks a critical extendedKeyUsage of only id-kp-timeStamping "
            "(RFC 3161 §2.3), or its keyUsage allows more than digitalSignature/nonRepudiation."
        ),
    ),
    Code(
        "anchor.tsa_cert_mismatch",
        FAILED,
        (
            "The token's SignerInfo sid or signing-certificate attribute does not name the given "
            "TSA certificate (RFC 5035, RFC 5816)."
        ),
    ),
    Code(
        "anchor.tsa_cert_not_valid",
        FAILED,
        "The token's genTime is outside the TSA certificate's notBefore..notAfter.",
    ),
    Code(
        "anchor.tsa_cert_unreadable",
        INPUT,
        "A TSA or CA certificate given is not a PEM or DER X.509 certificate.",
    ),
    Code(
        "anchor.tsa_chain_invalid",
        FAILED,
        "The TSA certificate does not chain to a trust anchor the caller gave (RFC 5280 §6).",
    ),
    Code(
        "anchor.tsa_not_granted",
        FAILED,
        (
            'tsa_status is not "granted", or the TimeStampResp status is not granted (0) or '
            "grantedWithMods (1) (RFC 3161 §2.4.2)."
        ),
    ),
    Code(
        "anchor.tsa_signature_invalid",
        FAILED,
        (
            "The token's signature over its signed attributes does not verify under the TSA "
            "certificate's key (RFC 5652 §5.4)."
        ),
    ),
)
