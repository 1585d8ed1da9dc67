"""The lineage room: facts, their signatures, provenance walks, audits and Stigmem node shapes
(docs/formats.md §5; seed 002).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it.
"""

__all__: list[str] = []
