"""``cli/_serve.py`` listen: the one bound socket of ``registry serve`` and ``witness serve``.

A port in use (or an address that cannot be bound) is the same code from either server
(issue 22): ``net.bind_failed``, exit 2, the port in the details.
"""

from __future__ import annotations

import socket

import pytest
from affidavit.cli._serve import listen
from affidavit.registry.errors import NetError


def test_a_port_in_use_is_bind_failed() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(NetError) as caught:
            listen("127.0.0.1", port, backlog=8)
    assert (caught.value.code, caught.value.exit_code) == ("net.bind_failed", 2)
    assert caught.value.details == {"port": port}
    assert caught.value.message.startswith(f"cannot listen on 127.0.0.1:{port}: ")


def test_an_address_not_of_this_host_is_bind_failed() -> None:
    # 192.0.2.1: TEST-NET-1 (RFC 5737), never an address of this machine; no name lookup
    with pytest.raises(NetError, match=r"^cannot listen on 192\.0\.2\.1:1: ") as caught:
        listen("192.0.2.1", 1, backlog=8)
    assert caught.value.code == "net.bind_failed"


def test_a_free_port_listens() -> None:
    listener = listen("127.0.0.1", 0, backlog=8)
    try:
        assert listener.getsockname()[1] > 0
        assert listener.get_inheritable()
    finally:
        listener.close()
