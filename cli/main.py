"""The ``affidavit`` command's entry point.

Exit codes (style.md §11): 0 ok, 1 verification failed or findings, 2 unreadable input or usage,
3 refused by policy. Every failure prints one line, ``error: <code>: <message>``, to stderr
(:func:`affidavit.cli._errors.format_error`, re-exported here); a warning is one line,
``warning: <message>`` (:func:`show_warning`).

Cold start (docs/adr/0003-cold-start.md): importing this module does not import click. ``main()``
first offers ``verify bundle`` / ``verify attestation`` to a click-free fast path
(:func:`affidavit.cli.verify.bundle.fast_main`), which parses the same option table as the click
commands and hands anything it does not fully understand back to click. The click group lives in
:mod:`affidavit.cli._group`; ``affidavit.cli.main.affidavit`` still names it (loaded on access).
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Any, NoReturn

from affidavit.cli._errors import format_error

if TYPE_CHECKING:
    import click

    affidavit: click.Group

__all__ = ["affidavit", "format_error", "main", "show_warning"]

# Commands the click-free fast path may run: ("verify", name).
_FAST_COMMANDS = frozenset({"bundle", "attestation"})


# Fast path (PEP 562): ``affidavit`` (the click group) is imported on first access, so the console
# script's ``from affidavit.cli.main import main`` does not import click. What it buys, measured
# (median of 31 alternating fresh processes, Python 3.11, bytecode compiled): ``python -c pass``
# 9.5 ms, ``import affidavit.cli.main`` 17.5 ms, ``import affidavit.cli._group`` (what importing
# the group here would cost) 35.9 ms: ~18 ms off every ``verify bundle`` run. The plain path is
# ``from affidavit.cli._group import affidavit`` at module level; tests and other callers'
# ``from affidavit.cli.main import affidavit`` works the same either way.
def __getattr__(name: str) -> Any:
    """``affidavit`` (the click group) is imported on first access (PEP 562)."""
    if name == "affidavit":
        from affidavit.cli._group import affidavit  # noqa: PLC0415 - lazy: keeps click out of cold start

        return affidavit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def show_warning(message: Warning | str, *_where: Any, **_file: Any) -> None:
    """``warning: <message>`` on stderr: a warning is one line too, without the category, module
    path and source line :func:`warnings.showwarning` adds (e.g. a private key others can read)."""
    sys.stderr.write(f"warning: {message}\n")


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: the fast path for ``verify bundle|attestation``, else click."""
    warnings.showwarning = show_warning
    args = argv if argv is not None else sys.argv[1:]
    if len(args) >= 2 and args[0] == "verify" and args[1] in _FAST_COMMANDS:
        from affidavit.cli.verify.bundle import fast_main  # noqa: PLC0415 - lazy: only verify bundle|attestation need it

        code = fast_main(args[1], args[2:])
        if code is not None:
            sys.exit(code)
    from affidavit.cli._group import affidavit  # noqa: PLC0415 - lazy: keeps click out of cold start

    affidavit.main(args=args, prog_name="affidavit")
    sys.exit(0)  # pragma: no cover - click exits itself
