"""SCITT offline (RFC 9943): Signed Statements, Transparent Statements and COSE Receipts.

>>> from affidavit.verify.crypto.keys import Ed25519PublicKey
>>> from affidavit.verify.scitt import CoseKey, parse_statement
>>> signed = bytes.fromhex(  # made by affidavit.attest.scitt.sign_statement, TEST-ONLY key
...     "d2845832a30127045820351ce86f5bee08d7a2e42b5122bd20489c8320c8d7327d83e5676a20c072bb10"
...     "0fa201636973730263737562a0427b7d584070c7b4d2b826929bd4ed8d564427045c68e7ec1a1e6c05f6"
...     "80a0fe0181911adee97617228fd989372444442d180300584f9c64f8f156d6144055eee4190b2504")
>>> statement = parse_statement(signed)
>>> (statement.issuer, statement.subject, statement.sign1.payload)
('iss', 'sub', b'{}')
>>> issuer = Ed25519PublicKey.from_b64("/Kmx6k8gfMBnlZ1l2p3R+BvoRIgWSpGY3kRuv7WbRQs=")
>>> statement.verify_signature(CoseKey.from_ed25519(issuer))  # None: it verifies

The rooms: :mod:`~affidavit.verify.scitt.cbor` (strict CBOR in, deterministic CBOR out),
:mod:`~affidavit.verify.scitt.cose` (COSE_Sign1, RFC 9052), :mod:`~affidavit.verify.scitt.keys`
(COSE keys, EdDSA and ES256, RFC 9679 thumbprints), :mod:`~affidavit.verify.scitt.statement`
(Signed and Transparent Statements, the leaf entry), :mod:`~affidavit.verify.scitt.receipt`
(RFC 9942 receipts, RFC9162_SHA256) and :mod:`~affidavit.verify.scitt.report` (a Transparent
Statement's one Result). Nothing here reads a file, the clock or the network: keys and
bytes are the caller's. The names below load on first use, so that ``verify/errors.py`` can read
this room's codes without importing cbor2.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "ALG_EDDSA": "keys",
    "ALG_ES256": "keys",
    "CLAIM_ISS": "statement",
    "CLAIM_SUB": "statement",
    "COSE_SIGN1_TAG": "cose",
    "CoseKey": "keys",
    "HEADER_ALG": "cose",
    "HEADER_CONTENT_TYPE": "cose",
    "HEADER_CWT_CLAIMS": "statement",
    "HEADER_KID": "cose",
    "HEADER_RECEIPTS": "statement",
    "HEADER_VDP": "receipt",
    "HEADER_VDS": "receipt",
    "ISSUER_BINDING_SUFFIX": "keys",
    "MAX_CBOR_BYTES": "cbor",
    "ReceiptCheck": "receipt",
    "SignedStatement": "statement",
    "VDP_INCLUSION": "receipt",
    "VDS_RFC9162_SHA256": "receipt",
    "decode": "cbor",
    "encode": "cbor",
    "key_from_bytes": "keys",
    "parse_issuer_binding": "keys",
    "parse_receipt": "receipt",
    "parse_statement": "statement",
    "sig_structure": "cose",
    "verify_receipt": "receipt",
    "verify_transparent_statement": "report",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
