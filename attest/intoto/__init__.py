"""in-toto Statements in DSSE envelopes, written and signed: decisions, manifest entries, fact
audits (:mod:`.statement`, :mod:`.sign`, :mod:`.export`) and verification summaries, SLSA VSA v1
(:mod:`.vsa`); docs/formats.md §8, docs/adr/0014.

>>> from affidavit.attest.intoto.statement import STATEMENT_V1
>>> STATEMENT_V1
'https://in-toto.io/Statement/v1'

This room is internal (issue 32; docs/adr/0022-click-alone.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. Callers
import a name from the module that defines it (each module's ``__all__`` says what it offers).
"""

__all__: list[str] = []
