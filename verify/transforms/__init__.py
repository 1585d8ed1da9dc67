"""Declared content transformations (seed 004, RFC 002 §1.4): the reserved reference set and the
ones adapters register under the ``affidavit.transforms`` entry-point group.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
