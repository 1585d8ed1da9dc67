"""The one HTTP(S) fetcher (registry/clients/https.py) and the codes each caller keeps."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from affidavit.cli import _sources
from affidavit.registry.clients import https
from affidavit.registry.clients.registry import fetch_manifest, fetch_public_key

from tests.conftest import raises_code


def _transport(
    routes: dict[str, httpx.Response], seen: list[str] | None = None
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(str(request.url))
        url = str(request.url)
        if url not in routes:
            raise httpx.ConnectError("connection refused\nsecond line", request=request)
        return routes[url]

    return httpx.MockTransport(handler)


def test_get_reads_the_body_and_the_final_url() -> None:
    transport = _transport(
        {
            "https://a.example/old": httpx.Response(
                301, headers={"Location": "https://a.example/new"}
            ),
            "https://a.example/new": httpx.Response(200, content=b"{}"),
        }
    )
    response = https.get(
        "https://a.example/old", https_only=True, follow_redirects=True, transport=transport
    )
    assert response == https.HttpResponse("https://a.example/new", 200, b"{}")
    assert response.ok
    not_followed = https.get("https://a.example/old", transport=transport)
    assert (not_followed.status, not_followed.ok) == (301, False)


def test_https_only_refuses_before_any_request() -> None:
    seen: list[str] = []
    with raises_code("usage.invalid", match="only https://"):
        https.get("http://a.example/m.json", https_only=True, transport=_transport({}, seen))
    assert seen == []


def test_a_redirect_away_from_https_is_refused() -> None:
    transport = _transport(
        {
            "https://a.example/m": httpx.Response(302, headers={"Location": "http://a.example/m"}),
            "http://a.example/m": httpx.Response(200, content=b"{}"),
        }
    )
    with raises_code("net.bad_response", match="redirected away from https"):
        https.get(
            "https://a.example/m", https_only=True, follow_redirects=True, transport=transport
        )


def test_the_body_is_capped() -> None:
    transport = _transport({"https://a.example/big": httpx.Response(200, content=b"x" * 101)})
    with raises_code("net.bad_response", match="over 100 bytes"):
        https.get("https://a.example/big", max_bytes=100, transport=transport)
    assert https.get("https://a.example/big", max_bytes=101, transport=transport).body == b"x" * 101


def test_a_transport_failure_is_one_line() -> None:
    with raises_code("net.unavailable") as caught:
        https.get("https://down.example/", transport=_transport({}))
    assert caught.value.message == "https://down.example/: ConnectError: connection refused"
    assert caught.value.details["url"] == "https://down.example/"


def test_each_caller_keeps_its_code(monkeypatch: pytest.MonkeyPatch) -> None:
    big = httpx.Response(200, content=b" " * (https.MAX_RESPONSE_BYTES + 1))
    routes = {
        "https://a.example/big.json": big,
        "https://a.example/off": httpx.Response(302, headers={"Location": "http://a.example/x"}),
        "http://a.example/x": httpx.Response(200, content=b"{}"),
        "https://a.example/gone": httpx.Response(410),
    }
    monkeypatch.setattr(_sources, "_HTTP_TRANSPORT", _transport(routes))
    for url, message in (
        ("https://a.example/big.json", f"https://a.example/big.json: over {2**24} bytes"),
        ("https://a.example/off", "https://a.example/off: redirected away from https"),
        ("https://a.example/gone", "https://a.example/gone: HTTP 410"),
        ("https://down.example/", "https://down.example/: ConnectError: connection refused"),
        ("http://a.example/x", "http://a.example/x: only https:// URLs are fetched"),
    ):
        with raises_code("manifest.fetch_failed") as caught:
            _sources.fetch(url)
        assert caught.value.message == message
    with raises_code("registry.bad_response", match="over"):
        fetch_manifest("https://a.example/big.json", transport=_transport(routes))
    with raises_code("registry.unavailable"):
        fetch_manifest("https://down.example/", transport=_transport(routes))
    # A key document may be anyone's: the neutral codes (issue 22), as a tile server's.
    with raises_code("net.bad_response", match="HTTP 410"):
        fetch_public_key("https://a.example/gone", transport=_transport(routes))
    with raises_code("net.unavailable"):
        fetch_public_key("https://down.example/", transport=_transport(routes))
    with raises_code("registry.unavailable"):  # the registry's clients keep their codes
        https.get("https://down.example/", transport=_transport(routes), codes=https.REGISTRY)


def test_importing_the_fetcher_does_not_import_httpx() -> None:
    script = (
        "import sys\nimport affidavit.registry.clients.https, affidavit.cli._sources\n"
        "print('httpx' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
