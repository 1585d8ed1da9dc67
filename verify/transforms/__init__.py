"""Declared content transformations (seed 004, RFC 002 §1.4): the reserved reference set and the
ones adapters register under the ``affidavit.transforms`` entry-point group.

Public API: :data:`Transform`, :class:`TransformSet`, :func:`check_name`, :func:`apply_chain`;
docs/formats.md "Declared transformations". Plugins are passed in by the caller (``transforms=``;
:mod:`affidavit.attest.plugins` reads the installed ones).
"""

from affidavit.verify.transforms.chain import apply_chain
from affidavit.verify.transforms.reference import (
    RESERVED_ADAPTER_SPECIFIC,
    RESERVED_REFERENCE,
)
from affidavit.verify.transforms.registry import (
    ENTRY_POINT_GROUP,
    Transform,
    TransformSet,
    check_name,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "RESERVED_ADAPTER_SPECIFIC",
    "RESERVED_REFERENCE",
    "Transform",
    "TransformSet",
    "apply_chain",
    "check_name",
]
