"""affidavit.verify must work with no network, no file and no clock: every test here runs with
sockets disabled, and with file reads and wall-clock reads refused while affidavit.verify code is on
the stack (style.md rule 8; tests/verify/test_purity.py also scans the source and pins datetime).
"""

from __future__ import annotations

import builtins
import io
import os
import pathlib
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

import pytest


class NetworkDisabled(RuntimeError):
    """Raised when code under affidavit.verify tries to open a socket."""


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise NetworkDisabled("affidavit.verify tests run with sockets disabled")


@pytest.fixture(autouse=True)
def _no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _refuse)
    monkeypatch.setattr(socket, "create_connection", _refuse)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse)


class ImpureRead(AssertionError):
    """Raised when affidavit.verify code opens a file or reads the clock on its own."""


def _in_verify() -> bool:
    """Whether the code that called the guarded function is affidavit.verify's: the innermost
    frame of the project's own code (not the standard library's or a third party's) is in it. A
    callback of the caller's (a tile fetcher reading files) is the caller's code, and allowed."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("affidavit.verify"):
            return True
        if module.startswith(("affidavit.", "tests.", "__main__")) or module == "tests":
            return False
        frame = frame.f_back
    return False


def guarded(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, refused (:class:`ImpureRead`) when affidavit.verify is on the calling stack."""

    def guard(*args: Any, **kwargs: Any) -> Any:
        if _in_verify():
            raise ImpureRead(
                f"affidavit.verify called {name}: it takes bytes and time as arguments"
            )
        return real(*args, **kwargs)

    return guard


_GUARDED: tuple[tuple[Any, str], ...] = (
    (builtins, "open"),
    (io, "open"),
    (os, "open"),
    (os, "listdir"),
    (os, "scandir"),
    (os, "stat"),
    (pathlib.Path, "open"),
    (pathlib.Path, "read_bytes"),
    (pathlib.Path, "read_text"),
    (time, "time"),
    (time, "time_ns"),
)


@pytest.fixture(autouse=True)
def _no_files_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    for owner, name in _GUARDED:
        monkeypatch.setattr(
            owner,
            name,
            guarded(f"{getattr(owner, '__name__', owner)}.{name}", getattr(owner, name)),
        )
