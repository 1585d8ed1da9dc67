"""The contracts room: AdapterContracts, their validators, acceptance policies, manifests and pins
(docs/formats.md §2-§4; seed 003).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it.
"""

__all__: list[str] = []
