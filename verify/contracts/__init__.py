"""The contracts room: AdapterContracts (docs/formats.md §2, §3; seed 003).

Hashing and linting a contract, validating an adapter's output, the acceptance policy, manifests,
their freshness and pins (the modules: docs/architecture.md).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
