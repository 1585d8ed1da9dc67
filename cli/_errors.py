"""The one-line failure message every command prints (style.md §11), shared by the click group
(:mod:`affidavit.cli._group`), the click-free ``verify bundle`` path and :mod:`affidavit.cli.main`.

It sits below all three so none of them imports another to print an error (tests/test_layering.py:
no import cycles). It imports nothing at run time: the click-free path stays small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from affidavit.verify.errors import AffidavitError

__all__ = ["format_error"]


def format_error(error: AffidavitError) -> str:
    """``error: <code>: <message>``, the line every failure prints to stderr (style.md §11)."""
    return f"error: {error.code}: {error.message}"
