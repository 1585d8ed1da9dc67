"""The lineage room: facts and their lineage (docs/formats.md §5; seed 002).

The fact model, fact signatures, provenance walks and cycles, offline audits and Stigmem node
shapes (the modules: docs/architecture.md); the walk and the audit are :func:`affidavit.verify.walk`
and :func:`affidavit.verify.audit`.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
