"""DSSE envelopes and in-toto Statements: strict parsing, PAE, threshold verification.

DSSE (github.com/secure-systems-lab/dsse, envelope.md and protocol.md) signs
``PAE(payloadType, payload)``; an in-toto Statement v1 (github.com/in-toto/attestation,
spec/v1/statement.md) is the payload Affidavit writes and reads.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
