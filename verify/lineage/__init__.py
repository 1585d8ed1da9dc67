"""The lineage room: facts and their lineage (docs/formats.md §5; seed 002).

:mod:`.facts` is the fact model, FactHash and the Stigmem CID; :mod:`.signing` fact signatures;
:mod:`.walk` provenance walks over any fact source (one reads a JSON Lines file's bytes) and the
cycle rule; :mod:`.audit` audits a store offline; :mod:`.stigmem` maps Stigmem node shapes to facts.
The walk and the audit are :func:`affidavit.verify.walk` and :func:`affidavit.verify.audit`.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
