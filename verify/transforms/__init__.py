"""Declared content transformations (seed 004, RFC 002 §1.4): the reserved reference set and the
ones adapters register under the ``affidavit.transforms`` entry-point group.

Public API: :data:`Transform`, :class:`TransformSet`, :func:`check_name`, :func:`apply_chain`;
docs/formats.md "Declared transformations". Plugins are passed in by the caller (``transforms=``;
:mod:`affidavit.attest.plugins` reads the installed ones).
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "ENTRY_POINT_GROUP": "registry",
    "RESERVED_ADAPTER_SPECIFIC": "reference",
    "RESERVED_REFERENCE": "reference",
    "Transform": "registry",
    "TransformSet": "registry",
    "Transforms": "chain",
    "apply_chain": "chain",
    "check_name": "registry",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
