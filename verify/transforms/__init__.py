"""Declared content transformations (seed 004, RFC 002 §1.4): the reserved reference set and the
ones adapters register under the ``affidavit.transforms`` entry-point group.

Public API: :data:`Transform`, :class:`TransformSet`, :func:`available_transforms`,
:func:`transforms_for`, :func:`check_name`, :func:`apply_chain`; docs/formats.md "Declared
transformations". Plugins are read only when the caller asks (``transforms=``).
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
    available_transforms,
    check_name,
    transforms_for,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "RESERVED_ADAPTER_SPECIFIC",
    "RESERVED_REFERENCE",
    "Transform",
    "TransformSet",
    "apply_chain",
    "available_transforms",
    "check_name",
    "transforms_for",
]
