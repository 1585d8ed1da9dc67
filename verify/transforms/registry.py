"""Which transformations this process can replay: the seven reference ones
(:mod:`.reference`) plus adapter plugins registered under the entry-point group
``affidavit.transforms`` (docs/formats.md "Declared transformations", "Plugins").

An entry point's name is the transformation name it implements (``cursor.composer_ordering``,
RFC 002 §1.4 "Third-party names SHOULD be prefixed with the adapter name"); its object is a
callable from text to text. A plugin may also implement one of the adapter-specific reserved names
(:data:`.reference.RESERVED_ADAPTER_SPECIFIC`), but never replace one of the seven reference
transformations. Nothing here is replaced by the identity: a plugin that cannot be loaded is an
error (``transform.plugin_invalid``), and a name nobody implements is unimplemented.

Plugins are read only when the caller asks (:func:`available_transforms`, :func:`transforms_for`:
the command line does); the library's default is the reference set, so a receipt's verdict never
depends on what happens to be installed.
"""

from __future__ import annotations

import functools
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
    "available_transforms",
    "check_name",
    "transforms_for",
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


def _load_entry_points() -> dict[str, Transform]:
    """Every entry point of :data:`ENTRY_POINT_GROUP`, loaded (raises rather than skips)."""
    # Imported here, not at the top: importlib.metadata pulls in email and socket, which
    # affidavit.verify must not import to verify offline (tests/verify/test_offline_imports.py).
    from importlib import metadata  # noqa: PLC0415

    found: dict[str, Transform] = {}
    origin: dict[str, str] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        name = ep.name
        try:
            check_name(name)
        except errors.ReceiptError:
            raise errors.ReceiptError(
                "transform.plugin_invalid",
                f"entry point {name!r} ({ep.value}) is not a transformation name",
                details={"name": name, "value": ep.value},
            ) from None
        if name in RESERVED_REFERENCE:
            raise errors.ReceiptError(
                "transform.plugin_conflict",
                f"entry point {ep.value} tries to replace the reference transformation {name!r}",
                details={"name": name, "value": ep.value},
            )
        if name in origin and origin[name] != ep.value:
            raise errors.ReceiptError(
                "transform.plugin_conflict",
                f"transformation {name!r} is registered twice ({origin[name]} and {ep.value})",
                details={"name": name, "value": ep.value},
            )
        try:
            fn = ep.load()
        except Exception as e:  # any failure of third-party import code is the plugin's fault
            raise errors.ReceiptError(
                "transform.plugin_invalid",
                f"entry point {name!r} ({ep.value}) cannot be loaded: {type(e).__name__}: {e}",
                details={"name": name, "value": ep.value},
            ) from None
        if not callable(fn):
            raise errors.ReceiptError(
                "transform.plugin_invalid",
                f"entry point {name!r} ({ep.value}) is not callable",
                details={"name": name, "value": ep.value},
            )
        origin[name] = ep.value
        found[name] = fn
    return found


@functools.cache
def available_transforms() -> TransformSet:
    """The seven reference transformations plus every installed plugin (entry-point group
    ``affidavit.transforms``), loaded once per process (``available_transforms.cache_clear()``
    reloads).

    Raises:
        ``transform.plugin_invalid``: an entry point fails to load, is not callable, or is not
            named as a transformation.
        ``transform.plugin_conflict``: an entry point names a reference transformation, or two
            entry points claim the same name.
    """
    return TransformSet.of(_load_entry_points())


def transforms_for(names: Iterable[str]) -> TransformSet:
    """What a caller that trusts its installed plugins replays ``names`` with: the reference set,
    plus every plugin (:func:`available_transforms`) only when a name is not a reference one, so a
    chain that needs no plugin loads none (and a broken plugin does not stop it).

    Raises:
        ``transform.plugin_invalid``, ``transform.plugin_conflict``: as
            :func:`available_transforms`, when plugins are needed.
    """
    if set(RESERVED_REFERENCE).issuperset(names):
        return TransformSet.of()
    return available_transforms()
