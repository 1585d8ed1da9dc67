"""What an error code is: its stable name, the exit code it maps to, and what it means.

Kept apart from :mod:`affidavit.verify.errors` so that each room can declare its codes (``codes.py``
beside its modules) without importing the error classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

__all__ = ["FAILED", "INPUT", "REFUSED", "Code", "catalogue"]

# Exit codes (docs/architecture.md, "Exit codes"): every command maps a code to one of these.
FAILED: Final = 1  # the input was read, and it does not verify
INPUT: Final = 2  # the input could not be read as what it claims to be, or bad usage
REFUSED: Final = 3  # refused by policy (e.g. pinning a revoked contract)


class Code(NamedTuple):
    """One stable error code. ``code`` is what users, scripts and vectors see; never rename it."""

    code: str
    exit_code: int
    description: str


def catalogue(*tables: Iterable[Code]) -> Mapping[str, Code]:
    """Merge code tables into one mapping by code, refusing a code declared twice.

    >>> sorted(catalogue([Code("a.b", INPUT, "x")], [Code("a.c", FAILED, "y")]))
    ['a.b', 'a.c']
    """
    merged: dict[str, Code] = {}
    for table in tables:
        for entry in table:
            if entry.code in merged:
                raise ValueError(f"error code {entry.code!r} is declared twice")
            merged[entry.code] = entry
    return merged
