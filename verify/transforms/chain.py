"""Which transformations this process can replay, and replaying a declared chain of them over
source bytes in the declared order (RFC 002 §7.3; docs/formats.md "Declared transformations",
"Chains", "Plugins").

A set is the seven reference transformations (:mod:`.reference`) plus plugins the caller passes
in (:mod:`affidavit.attest.plugins`), never replacing a reference one; nothing falls back to the
identity. The empty chain is the identity on bytes; otherwise the source is decoded as UTF-8,
mapped text to text and encoded again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

from affidavit.verify import errors
from affidavit.verify.transforms.reference import (
    RESERVED_ADAPTER_SPECIFIC,
    RESERVED_REFERENCE,
    reference_transforms,
    utf8_replace_invalid,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Transform",
    "TransformSet",
    "Transforms",
    "apply_chain",
    "check_name",
]

#: One declared transformation: a pure function from the text so far to the next text.
Transform: TypeAlias = Callable[[str], str]

#: The entry-point group adapters register their transformations under.
ENTRY_POINT_GROUP: Final = "affidavit.transforms"

# RFC 002 §1.4: an adapter-defined name is "<adapter>.<name>", the adapter as RFC 002 spells
# them (`claude-code`, `cursor-jsonl`), the name a lowercase identifier.
_ADAPTER_NAME: Final = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*\.[a-z][a-z0-9_]*")
_REFERENCE_SET: Final = frozenset(RESERVED_REFERENCE)
_RESERVED: Final = _REFERENCE_SET | frozenset(RESERVED_ADAPTER_SPECIFIC)
_NAME_MAX: Final = 128


def check_name(name: str) -> None:
    """Refuse anything that is not a transformation name: one of the thirteen reserved names of
    RFC 002 §1.4, or ``<adapter>.<name>`` of at most 128 characters.

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
                raise _plugin_invalid(name, "is not callable")
            merged[name] = fn
        self._by_name: Mapping[str, Transform] = MappingProxyType(merged)

    @classmethod
    def of(cls, mapping: Mapping[str, Transform] | None = None) -> TransformSet:
        """The reference transformations plus ``mapping``; raises as the constructor does."""
        return cls(mapping)

    def resolve(self, name: str) -> Transform | None:
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


#: What a caller passes as ``transforms``: a set, or ``names -> set`` (loads plugins when needed).
Transforms: TypeAlias = TransformSet | Callable[[Sequence[str]], TransformSet]


def apply_chain(
    names: Sequence[str], source: bytes, *, transforms: Transforms | None = None
) -> bytes:
    """``source`` after the transformations ``names``, applied in order, every name checked
    first. ``transforms`` defaults to the reference set; a callable is given the names
    (:func:`affidavit.attest.plugins.transforms_for` loads plugins only when needed).

    Raises:
        ``transform.name_invalid``: a name is not a transformation name.
        ``transform.unimplemented``: a name has no implementation in ``transforms``.
        ``transform.not_utf8``: the first step is not ``utf8_replace_invalid`` and ``source`` is
            not valid UTF-8.
        ``transform.plugin_invalid``: a plugin raised, or returned something other than text that
            encodes as UTF-8.
    """
    names = tuple(names)
    if not names:
        return bytes(source)
    for name in names:
        check_name(name)
    if transforms is None:
        available = TransformSet.of()
    else:
        available = transforms if isinstance(transforms, TransformSet) else transforms(names)
    missing = available.missing(names)
    if missing:
        raise errors.ReceiptError(
            "transform.unimplemented",
            f"no implementation of {', '.join(missing)}"
            " (adapter-specific: install the adapter's transforms plugin)",
            details={"names": list(missing)},
        )
    steps = [(name, available.resolve(name)) for name in names]
    if names[0] == "utf8_replace_invalid":
        text = utf8_replace_invalid(bytes(source))
        steps = steps[1:]
    else:
        try:
            text = bytes(source).decode("utf-8")
        except UnicodeDecodeError as e:
            raise errors.ReceiptError(
                "transform.not_utf8",
                f"source is not UTF-8 at byte {e.start} and the chain does not start with "
                "utf8_replace_invalid",
                details={"offset": e.start},
            ) from None
    for name, fn in steps:
        assert fn is not None  # missing() was empty
        text = fn(text) if name in _REFERENCE_SET else _run_plugin(name, fn, text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.ReceiptError(
            "transform.plugin_invalid",
            "the chain produced text that is not encodable as UTF-8 (a lone surrogate)",
            details={"names": list(names)},
        ) from None


def _run_plugin(name: str, fn: Transform, text: str) -> str:
    try:
        out: object = fn(text)
    except Exception as e:  # a third-party transformation's failure is reported, not propagated
        raise _plugin_invalid(name, f"failed: {type(e).__name__}: {e}") from None
    if not isinstance(out, str):
        raise _plugin_invalid(name, f"returned {type(out).__name__}, not text")
    return out


def _plugin_invalid(name: str, what: str) -> errors.ReceiptError:
    return errors.ReceiptError(
        "transform.plugin_invalid", f"transformation {name!r} {what}", details={"name": name}
    )
