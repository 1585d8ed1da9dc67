"""DSSE envelopes and in-toto Statements: strict parsing, PAE, threshold verification.

DSSE (github.com/secure-systems-lab/dsse, envelope.md and protocol.md) signs
``PAE(payloadType, payload)``; an in-toto Statement v1 (github.com/in-toto/attestation,
spec/v1/statement.md) is the payload Affidavit writes and reads.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "Envelope": "envelope",
    "IN_TOTO_PAYLOAD_TYPE": "envelope",
    "MAX_ENVELOPE_BYTES": "envelope",
    "NO_BUNDLE": "report",
    "SLSA_VSA_V1": "predicates",
    "STATEMENT_V1": "statement",
    "Signature": "envelope",
    "bundle_subject": "predicates",
    "check_envelope": "report",
    "dsse_keyid": "envelope",
    "envelope_json": "envelope",
    "pae": "envelope",
    "parse_envelope": "envelope",
    "statement_of": "statement",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
