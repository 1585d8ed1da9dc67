"""affidavit.verify must work with no network: every test here runs with sockets disabled."""

from __future__ import annotations

import socket
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
