"""in-toto Statements in DSSE envelopes, written and signed: decisions, manifest entries, fact
audits (:mod:`.statement`, :mod:`.sign`, :mod:`.export`) and verification summaries, SLSA VSA v1
(:mod:`.vsa`); docs/formats.md §8, docs/adr/0014.

>>> from affidavit.attest.intoto import STATEMENT_V1
>>> STATEMENT_V1
'https://in-toto.io/Statement/v1'
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "POLICY_URI": "vsa",
    "STATEMENT_V1": "statement",
    "VERIFIED_LEVEL": "vsa",
    "build_statement": "statement",
    "detect_kind": "export",
    "keyid_of": "sign",
    "sign_statement": "sign",
    "statement_bytes": "statement",
    "statement_for": "export",
    "trust_digest": "vsa",
    "trust_document": "vsa",
    "vsa_statement": "vsa",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
