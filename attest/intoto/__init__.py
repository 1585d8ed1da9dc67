"""in-toto Statements in DSSE envelopes, written and signed: decisions, manifest entries, fact
audits (:mod:`.sign`, :mod:`.export`) and verification summaries, SLSA VSA v1
(:mod:`.vsa`); docs/formats.md §8, docs/adr/0014.

>>> from affidavit.attest.intoto.sign import STATEMENT_V1
>>> STATEMENT_V1
'https://in-toto.io/Statement/v1'

This room is internal (docs/adr/0022-click-alone.md, "Amendment (issue 32)"): import each name
from the module that defines it.
"""

__all__: list[str] = []
