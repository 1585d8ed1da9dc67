"""Replaying a declared chain of transformations over source bytes (RFC 002 §7.3: "Apply each
declared transformation ... in the order declared by the adapter"); docs/formats.md "Declared
transformations", "Chains".

The empty chain is the identity on bytes (RFC 002 §1.4 ``byte_preserving``). A non-empty chain
works on text: the source is decoded as UTF-8, replacing invalid sequences when (and only when)
the first step is ``utf8_replace_invalid``, strictly otherwise; every step then maps text to text,
in order; the result is encoded as UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

from affidavit.verify import errors
from affidavit.verify.transforms.reference import RESERVED_REFERENCE, utf8_replace_invalid
from affidavit.verify.transforms.registry import Transform, TransformSet, check_name

__all__ = ["Transforms", "apply_chain"]

_REFERENCE_ONLY = frozenset(RESERVED_REFERENCE)

#: What a caller passes as ``transforms``: a set, or ``names -> set`` (loads plugins when needed).
Transforms: TypeAlias = TransformSet | Callable[[Sequence[str]], TransformSet]


def apply_chain(
    names: Sequence[str], source: bytes, *, transforms: Transforms | None = None
) -> bytes:
    """``source`` after the transformations ``names``, applied in order.

    ``transforms`` defaults to the seven reference transformations; a caller that trusts its
    installed plugins passes them, or :func:`affidavit.attest.plugins.transforms_for` to load them
    only when a name needs one (a callable is given the names). Every name is checked before any
    step runs.

    Raises:
        ``transform.name_invalid``: a name is not a transformation name.
        ``transform.unimplemented``: a name has no implementation in ``transforms``; never the
            identity.
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
        text = fn(text) if name in _REFERENCE_ONLY else _run_plugin(name, fn, text)
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
        raise errors.ReceiptError(
            "transform.plugin_invalid",
            f"transformation {name!r} failed: {type(e).__name__}: {e}",
            details={"name": name},
        ) from None
    if not isinstance(out, str):
        raise errors.ReceiptError(
            "transform.plugin_invalid",
            f"transformation {name!r} returned {type(out).__name__}, not text",
            details={"name": name},
        )
    return out
