"""The ``affidavit`` command's entry point: the click group :data:`affidavit` on the command line
(exit codes, ``error:`` and ``warning:`` lines: style.md §11).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, NoReturn

from affidavit.cli._group import affidavit, format_error

__all__ = ["affidavit", "format_error", "main", "show_warning"]


def show_warning(message: Warning | str, *_where: Any, **_file: Any) -> None:
    """``warning: <message>`` on stderr, without what :func:`warnings.showwarning` adds."""
    sys.stderr.write(f"warning: {message}\n")


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: run the click group on ``argv`` (default: ``sys.argv[1:]``)."""
    warnings.showwarning = show_warning
    affidavit.main(args=argv if argv is not None else sys.argv[1:], prog_name="affidavit")
    sys.exit(0)  # pragma: no cover - click exits itself
