"""Which transformations this process can replay: the seven reference ones
(:mod:`.reference`) plus adapter plugins registered under the entry-point group
``affidavit.transforms`` (docs/formats.md "Declared transformations", "Plugins").

An entry point's name is the transformation name it implements (``cursor.composer_ordering``,
RFC 002 §1.4 "Third-party names SHOULD be prefixed with the adapter name"); its object is a
callable from text to text. A plugin may also implement one of the adapter-specific reserved names
(:data:`.reference.RESERVED_ADAPTER_SPECIFIC`), but never replace one of the seven reference
transformations. Nothing here is replaced by the identity: a plugin that cannot be loaded is an
error (``transform.plugin_invalid``), and a name nobody implements is unimplemented.

Plugins are passed in by the caller (:mod:`affidavit.attest.plugins` reads the installed ones for
the command line); this package reads none, and its default is the reference set, so a receipt's
verdict never depends on what happens to be installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

from affidavit.verify import errors
from affidavit.verify.transforms.reference import (
    RESERVED_ADAPTER_SPECIFIC,
    RESERVED_REFERENCE,
    reference_transforms,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Transform",
    "TransformSet",
    "check_name",
]

#: One declared transformation: a pure function from the text so far to the next text.
Transform: TypeAlias = Callable[[str], str]

#: The entry-point group adapters register their transformations under.
ENTRY_POINT_GROUP: Final = "affidavit.transforms"

# RFC 002 §1.4: an adapter-defined name is "<adapter>.<name>". The adapter part is an adapter's
# name as RFC 002 spells them (lowercase; hyphens allowed: `claude-code`, `cursor-jsonl`), the
# name part a lowercase identifier.
_ADAPTER_NAME: Final = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*\.[a-z][a-z0-9_]*")
_RESERVED: Final = frozenset(RESERVED_REFERENCE) | frozenset(RESERVED_ADAPTER_SPECIFIC)
_NAME_MAX: Final = 128


def check_name(name: str) -> None:
    """Refuse anything that is not a transformation name: one of the thirteen reserved names of
    RFC 002 §1.4, or ``<adapter>.<name>`` (the adapter part lowercase ASCII words joined by ``-`` or
    ``_``, the name a lowercase identifier; at most 128 characters).

    Raises:
        ``transform.name_invalid``: anything else (an unprefixed custom name included).
    """
    if not isinstance(name, str):
        raise errors.ReceiptError("transform.name_invalid", "a transformation name is a string")
    if name in _RESERVED:
        return
    if len(name) <= _NAME_MAX and _ADAPTER_NAME.fullmatch(name):
        return
    shown = name if len(name) <= 80 else name[:80] + "..."
    raise errors.ReceiptError(
        "transform.name_invalid",
        f"{shown!r} is neither a reserved transformation name nor '<adapter>.<name>'",
        details={"name": shown},
    )


Kind = Literal["reference", "plugin"]


class TransformSet:
    """An immutable set of named transformations: always the seven reference ones, unaltered,
    plus others (plugins, or test doubles)."""

    __slots__ = ("_by_name",)

    def __init__(self, extra: Mapping[str, Transform] | None = None) -> None:
        """The reference transformations plus ``extra`` (name -> callable); same as :meth:`of`.

        Raises:
            ``transform.name_invalid``: a key is not a transformation name.
            ``transform.plugin_conflict``: a key names one of the seven reference transformations
                (with anything but that reference function itself).
            ``transform.plugin_invalid``: a value is not callable.
        """
        merged: dict[str, Transform] = reference_transforms()
        for name, fn in sorted((extra or {}).items()):
            check_name(name)
            if name in merged:
                if fn is merged[name]:
                    continue
                raise errors.ReceiptError(
                    "transform.plugin_conflict",
                    f"{name!r} is a reference transformation and cannot be replaced",
                    details={"name": name},
                )
            if not callable(fn):
                raise errors.ReceiptError(
                    "transform.plugin_invalid",
                    f"transformation {name!r} is not callable",
                    details={"name": name},
                )
            merged[name] = fn
        self._by_name: Mapping[str, Transform] = MappingProxyType(merged)

    @classmethod
    def of(cls, mapping: Mapping[str, Transform] | None = None) -> TransformSet:
        """The reference transformations plus ``mapping`` (name -> callable); raises as the
        constructor does."""
        return cls(mapping)

    def resolve(self, name: str) -> Transform | None:
        """The transformation named ``name``, or ``None`` when this set has none."""
        return self._by_name.get(name)

    def missing(self, names: Iterable[str]) -> tuple[str, ...]:
        """The names this set cannot replay, in order of first appearance, each once."""
        seen: dict[str, None] = {}
        for name in names:
            if name not in self._by_name:
                seen.setdefault(name, None)
        return tuple(seen)

    def names(self) -> tuple[str, ...]:
        """Every name: the reference ones in RFC 002 §1.4 table order, then the others sorted."""
        reference = [n for n in RESERVED_REFERENCE if n in self._by_name]
        others = sorted(n for n in self._by_name if n not in RESERVED_REFERENCE)
        return (*reference, *others)

    def kind(self, name: str) -> Kind:
        """``reference`` for the seven of :mod:`.reference`, ``plugin`` for the others."""
        return "reference" if name in RESERVED_REFERENCE else "plugin"

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"TransformSet({list(self.names())!r})"
