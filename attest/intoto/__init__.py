"""in-toto Statements in DSSE envelopes, written and signed: decisions, manifest entries, fact
audits (:mod:`.statement`, :mod:`.sign`, :mod:`.export`) and verification summaries, SLSA VSA v1
(:mod:`.vsa`).
"""
