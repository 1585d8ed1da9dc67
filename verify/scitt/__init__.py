"""SCITT offline (RFC 9943): Signed Statements, Transparent Statements and COSE Receipts.

>>> from affidavit.verify.crypto.keys import Ed25519PublicKey
>>> from affidavit.verify.scitt.keys import CoseKey
>>> from affidavit.verify.scitt.statement import parse_statement
>>> signed = bytes.fromhex(  # made by affidavit.attest.scitt.sign_statement, TEST-ONLY key
...     "d2845832a30127045820351ce86f5bee08d7a2e42b5122bd20489c8320c8d7327d83e5676a20c072bb10"
...     "0fa201636973730263737562a0427b7d584070c7b4d2b826929bd4ed8d564427045c68e7ec1a1e6c05f6"
...     "80a0fe0181911adee97617228fd989372444442d180300584f9c64f8f156d6144055eee4190b2504")
>>> statement = parse_statement(signed)
>>> (statement.issuer, statement.subject, statement.sign1.payload)
('iss', 'sub', b'{}')
>>> issuer = Ed25519PublicKey.from_b64("/Kmx6k8gfMBnlZ1l2p3R+BvoRIgWSpGY3kRuv7WbRQs=")
>>> statement.verify_signature(CoseKey.from_ed25519(issuer))  # None: it verifies

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
