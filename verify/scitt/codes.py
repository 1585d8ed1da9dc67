"""Codes of the SCITT room (``cbor.*``, ``scitt.*``), raised through
:class:`affidavit.verify.errors.ScittError`.

Exit codes: 2 (``INPUT``) bytes that are not strict CBOR, not a COSE_Sign1 of the shape RFC 9052
and RFC 9943 give, or use something this verifier refuses to read (an algorithm, a critical
header, a verifiable data structure); 1 (``FAILED``) a statement or receipt that was read and does
not verify; 3 (``REFUSED``) a Signed Statement the registration policy does not accept.
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, REFUSED, Code

# RFC 8949: the strict decoder (verify/scitt/cbor.py).
CBOR: Final[tuple[Code, ...]] = (
    Code("cbor.too_large", INPUT, "The CBOR input is larger than the size cap."),
    Code(
        "cbor.malformed",
        INPUT,
        "Not well-formed CBOR (RFC 8949 §3, Appendix F): truncated, a reserved or invalid"
        " additional-information value, invalid UTF-8 text, or a value type COSE does not use.",
    ),
    Code("cbor.trailing_bytes", INPUT, "Bytes follow the one CBOR data item."),
    Code(
        "cbor.indefinite_length",
        INPUT,
        "An indefinite-length string, array or map: refused (RFC 8949 §4.2.1, definite lengths).",
    ),
    Code(
        "cbor.non_shortest",
        INPUT,
        "An integer, length or tag argument not in its shortest form (RFC 8949 §4.2.1"
        " preferred serialization): the same value would have two encodings.",
    ),
    Code("cbor.duplicate_key", INPUT, "A map holds the same key twice (RFC 8949 §5.6)."),
    Code("cbor.too_deep", INPUT, "Arrays, maps and tags are nested deeper than the cap."),
)

# RFC 9052 (COSE_Sign1), RFC 9943 (Signed and Transparent Statements), RFC 9942 (Receipts).
SCITT: Final[tuple[Code, ...]] = (
    Code(
        "scitt.cose_malformed",
        INPUT,
        "Not a tagged COSE_Sign1 (RFC 9052 §4.2): tag 18 over [protected bstr, unprotected map,"
        " payload bstr or nil, signature bstr], with int or text header labels, none in both"
        " buckets.",
    ),
    Code(
        "scitt.alg_unsupported",
        INPUT,
        "The protected alg is missing or not EdDSA (-8) or ES256 (-7): refused, never accepted"
        " unchecked.",
    ),
    Code(
        "scitt.crit_unsupported",
        INPUT,
        "The protected crit header (RFC 9052 §3.1) is malformed or lists a header this verifier"
        " does not understand.",
    ),
    Code(
        "scitt.claims_missing",
        INPUT,
        "The protected CWT claims (header 15, RFC 9597) are missing or lack a text iss (1) and"
        " sub (2) (RFC 9943 §6).",
    ),
    Code(
        "scitt.header_invalid",
        INPUT,
        "A header the statement or receipt uses has the wrong type (content type, kid, CWT"
        " claims, vds, vdp, receipts).",
    ),
    Code(
        "scitt.payload_missing",
        INPUT,
        "The Signed Statement's payload is detached: its signature cannot be checked here.",
    ),
    Code(
        "scitt.receipts_missing",
        INPUT,
        "The Transparent Statement carries no receipt at unprotected header 394.",
    ),
    Code(
        "scitt.receipt_malformed",
        INPUT,
        "A receipt is not an RFC 9942 receipt of inclusion: no vdp (396) with inclusion proofs"
        " (-1) as bstr .cbor [tree_size, leaf_index, [+ 32-byte hash]], or a proof that does not"
        " fit its tree.",
    ),
    Code(
        "scitt.receipt_vds_unsupported",
        INPUT,
        "The receipt's protected vds (395) is not RFC9162_SHA256 (1).",
    ),
    Code(
        "scitt.receipt_payload_attached",
        FAILED,
        "The receipt carries an attached payload: a receipt's payload (the root) is detached"
        " (RFC 9942 §4.4), so nothing would bind the signature to the leaf.",
    ),
    Code(
        "scitt.receipt_key_untrusted",
        FAILED,
        "The receipt's kid names none of the trusted log keys, and no trusted key verifies it.",
    ),
    Code(
        "scitt.receipt_signature_invalid",
        FAILED,
        "No inclusion proof of the receipt rebuilds a root whose signature verifies under a"
        " trusted log key: the receipt, its proof, its root or the statement was altered.",
    ),
    Code(
        "scitt.key_mismatch",
        FAILED,
        "The signature's algorithm does not fit the key's type (EdDSA needs Ed25519, ES256 a"
        " P-256 key).",
    ),
    Code(
        "scitt.signature_invalid",
        FAILED,
        "The Signed Statement's signature does not verify under the issuer key given.",
    ),
    Code(
        "scitt.issuer_untrusted",
        REFUSED,
        "The registration policy does not accept the Signed Statement: its signature verifies"
        " under none of the issuer keys the service trusts.",
    ),
    Code(
        "scitt.issuer_mismatch",
        FAILED,
        "The Signed Statement's signature verifies only under issuer keys bound to other"
        " issuers than the iss it names (RFC 9943 §5.1.1.1: the key of the issuer it names;"
        " docs/transparency.md, issuer keys and the issuers they sign for).",
    ),
    Code(
        "scitt.key_unrecognized",
        INPUT,
        "Not a key a SCITT signature is checked with: an Ed25519 key in any trusted-key form, or"
        " a P-256 public key in PEM (SubjectPublicKeyInfo).",
    ),
    Code(
        "scitt.media_type_unsupported",
        INPUT,
        "A registration is not sent as application/cose (HTTP 415).",
    ),
    Code(
        "scitt.rate_limited",
        INPUT,
        "Too many requests from this client; retry after the time the service names (HTTP 429).",
    ),
    Code(
        "scitt.entry_not_found",
        INPUT,
        "No registration with this entry ID, running or done (HTTP 404).",
    ),
    Code(
        "scitt.entry_id_invalid",
        INPUT,
        "An entry ID is not 64 lowercase hex digits (the SHA-256 leaf entry) (HTTP 400).",
    ),
    Code(
        "scitt.registration_failed",
        INPUT,
        "The service answered a registration with something other than a receipt, a 303 or"
        " 302 locator, or concise problem details.",
    ),
)

__all__ = ["CBOR", "SCITT"]
