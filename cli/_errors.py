"""The one-line failure message every command prints (style.md §11), shared by the click group
(:mod:`affidavit.cli._group`) and :mod:`affidavit.cli.main`.

It sits below both, so the group prints an error without importing the entry point
(tests/test_layering.py: no import cycles). It imports nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from affidavit.verify.errors import AffidavitError

__all__ = ["format_error"]


def format_error(error: AffidavitError) -> str:
    """``error: <code>: <message>``, the line every failure prints to stderr (style.md §11)."""
    return f"error: {error.code}: {error.message}"
