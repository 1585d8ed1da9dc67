"""Declared content transformations (seed 004, RFC 002 §1.4): the reserved reference set and the
ones adapters register under the ``affidavit.transforms`` entry-point group.

Public API: :data:`Transform`, :class:`TransformSet`, :func:`check_name`, :func:`apply_chain`;
docs/formats.md "Declared transformations". Plugins are passed in by the caller (``transforms=``;
:mod:`affidavit.attest.plugins` reads the installed ones).

This room is internal (issue 32; docs/adr/0003-cold-start.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. The layers
above import a name from the module that defines it (each module's ``__all__`` says what it
offers); the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
