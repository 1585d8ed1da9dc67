"""The ``affidavit`` command's entry point.

Exit codes (style.md §11): 0 ok, 1 verification failed or findings, 2 unreadable input or usage,
3 refused by policy. Every failure prints one line, ``error: <code>: <message>``, to stderr
(:func:`affidavit.cli._group.format_error`, re-exported here); a warning is one line,
``warning: <message>`` (:func:`show_warning`).

``main()`` hands the command line to the click group, :data:`affidavit` (from
:mod:`affidavit.cli._group`), which parses it and imports only the command that runs
(docs/adr/0022-click-alone.md).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, NoReturn

from affidavit.cli._group import affidavit, format_error

__all__ = ["affidavit", "format_error", "main", "show_warning"]


def show_warning(message: Warning | str, *_where: Any, **_file: Any) -> None:
    """``warning: <message>`` on stderr: a warning is one line too, without the category, module
    path and source line :func:`warnings.showwarning` adds (e.g. a private key others can read)."""
    sys.stderr.write(f"warning: {message}\n")


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: run the click group on ``argv`` (default: ``sys.argv[1:]``)."""
    warnings.showwarning = show_warning
    affidavit.main(args=argv if argv is not None else sys.argv[1:], prog_name="affidavit")
    sys.exit(0)  # pragma: no cover - click exits itself
