"""The bundles room: ProofPack bundles (docs/formats.md §4; :mod:`.verifier`) and attestations.

This room is internal (issue 32; docs/adr/0003-cold-start.md, "Amendment (issue 32)"): its
``__init__`` imports nothing; callers import a name from the module that defines it.
"""

__all__: list[str] = []
