"""DSSE envelopes and in-toto Statements: strict parsing, PAE, threshold verification.

DSSE (github.com/secure-systems-lab/dsse, envelope.md and protocol.md) signs
``PAE(payloadType, payload)``; an in-toto Statement v1 (github.com/in-toto/attestation,
spec/v1/statement.md) is the payload Affidavit writes and reads.
"""
