"""One HTTP client rule for every outbound call (issue 21, items 4 and 5), against real servers on
127.0.0.1: a URL is parsed and refused where it enters (``usage.invalid``, never an httpx
exception); ``timeout`` is a deadline for the whole exchange (connect, head, body), not a limit
per socket read; a ``Content-Length`` over the cap is refused before the body is read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.clients import https
from affidavit.registry.clients.registry import (
    ProbeFailure,
    RegistryClient,
    fetch_public_key,
    probe,
)
from affidavit.registry.clients.stigmem import fetch_node_facts
from affidavit.registry.clients.tiles import TileReader
from affidavit.registry.clients.witness import parse_witness
from affidavit.registry.settings import Settings
from affidavit.registry.witnessing import collect
from affidavit.verify import errors
from affidavit.witness.cosigner import WitnessKeys

from tests.conftest import raises_code
from tests.slow_server import SlowServer

pytestmark = pytest.mark.network_local

WITNESS_VKEY = WitnessKeys("w.example/w", derive_test_key("http rule: witness")).vkeys()[0]

BAD_URLS = [
    "http://127.0.0.1:0x/",  # issue 21: httpx.InvalidURL, a traceback
    "http://[::1",  # issue 21: an unclosed IPv6 literal
    "http://127.0.0.1:65536/",
    "http://127.0.0.1:0/",
    "http://127.0.0.1:/",
    "http://127.0.0.1:+80/",
    "http://127.0.0.1:٨٠/",  # Arabic-Indic digits: int() takes them, a URL does not
    "ftp://a.example/",
    "file:///etc/passwd",
    "http:///path",
    "http://",
    "http:a.example",
    "a.example/x",
    "http://user:pass@a.example/",
    "http://a.example/ x",
    "http://a .example/",
    "http://a.example/\n",
    "http://a.example\\@b.example/",
    "http://-a.example/",
    "http://a..example/",
    "http://é.example/",
    "http://[::1%25eth0]/",
    "http://[zz::1]/",
    "http://[127.0.0.1]/",
    "http://999.1.1.1/",
    "http://1.2.3/",
    "http://a.example/#fragment",
    "http://a.example/" + "x" * 5000,
]
GOOD_URLS = [
    "http://127.0.0.1:8080/tlog/",
    "https://log.example/",
    "HTTPS://Log.Example",
    "http://[::1]:8080/",
    "http://a.example",
    "http://a.example./x",
    "https://a.example/m.json?x=1",
    "http://localhost",
    "http://w.test",
    "http://x",
    "https://a-b.c_d.example:443/p/q%20r",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_url_is_refused_at_the_boundary(url: str) -> None:
    with raises_code("usage.invalid") as caught:
        https.parse_url(url)
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("url", GOOD_URLS)
def test_a_good_url_passes_and_httpx_takes_it(url: str) -> None:
    assert https.parse_url(url) == url
    httpx.URL(url)  # what parse_url accepts, httpx accepts


def test_https_only_and_prefixes() -> None:
    with raises_code("usage.invalid", match="only https://"):
        https.parse_url("http://a.example/", https_only=True)
    assert https.parse_url("https://a.example/", https_only=True) == "https://a.example/"
    with raises_code("usage.invalid", match="query"):
        https.parse_url("http://a.example/tlog?x=1", allow_query=False)


@pytest.mark.parametrize("url", ["http://127.0.0.1:0x/", "http://[::1"])
def test_every_client_refuses_a_bad_url_where_it_enters(url: str) -> None:
    with raises_code("usage.invalid"):
        TileReader(url)
    with raises_code("usage.invalid"):
        parse_witness(f"{url}#{WITNESS_VKEY}")
    with raises_code("usage.invalid"):
        Settings(witnesses=(f"{url}#{WITNESS_VKEY}",))
    with raises_code("usage.invalid", match="public URL"):
        Settings(public_url=url)  # what the node probe tells clients to fetch
    with raises_code("usage.invalid"):
        fetch_node_facts(url)
    with raises_code("usage.invalid"):
        fetch_public_key(url)
    with raises_code("usage.invalid"):
        https.get(url)
    with raises_code("registry.url_missing"):
        RegistryClient(url, env={})
    failure = probe(url, env={})  # the probe never raises
    assert isinstance(failure, ProbeFailure)
    assert failure.code == "registry.url_missing"


def test_send_turns_any_httpx_exception_into_one_error() -> None:
    """The fallback: a URL that reached ``send`` unparsed is still one error, never httpx's."""
    with httpx.Client() as client:
        for url in ("http://127.0.0.1:0x/", "http://[::1"):
            with raises_code("usage.invalid"):
                https.send(client, "GET", url)


# -- the deadline: one byte every 0.4 s must not keep a 1 s client busy -----------------------


@pytest.fixture
def slow() -> Iterator[SlowServer]:
    """The server of issue 21: one body byte every 0.4 s."""
    with SlowServer("drip-body") as server:
        yield server


def _deadline_within(call: Callable[[], object], limit: float = 2.0) -> errors.AffidavitError:
    started = time.monotonic()
    with pytest.raises(errors.AffidavitError) as caught:
        call()
    elapsed = time.monotonic() - started
    assert elapsed < limit, f"took {elapsed:.1f} s"
    assert "deadline" in caught.value.message, caught.value.message
    return caught.value


@pytest.mark.parametrize("mode", ["drip-body", "drip-head", "silent"])
def test_get_keeps_the_deadline(mode: str) -> None:
    with SlowServer(mode) as server:
        error = _deadline_within(lambda: https.get(server.url + "/x", timeout=1))
    assert error.code == "net.timeout"  # a plain fetch: the neutral code (issue 22)
    assert "1 s deadline" in error.message


def test_the_tile_reader_keeps_the_deadline(slow: SlowServer) -> None:
    with TileReader(slow.url, timeout=1) as reader:
        assert _deadline_within(reader.checkpoint).code == "net.timeout"


def test_the_registry_client_keeps_the_deadline(slow: SlowServer) -> None:
    with RegistryClient(slow.url, env={}, timeout=1) as client:
        assert _deadline_within(lambda: client.get("/v1/health")).code == "registry.unavailable"


def test_the_stigmem_client_keeps_the_deadline(slow: SlowServer) -> None:
    error = _deadline_within(lambda: fetch_node_facts(slow.url, timeout=1))
    assert error.code == "stigmem.node_unreachable"


def test_the_witness_client_keeps_the_deadline(slow: SlowServer, tmp_path: Path) -> None:
    log = TransparencyLog.create(tmp_path / "log.db", derive_test_key("http rule: log"), "o/l")
    log.append([b"a"])
    note = log.checkpoint()
    witness = parse_witness(f"{slow.url}#{WITNESS_VKEY}")
    started = time.monotonic()
    [report] = collect([witness], note, lambda old, new: (), timeout=1, tries=1)
    assert time.monotonic() - started < 2.0
    assert report.error is not None
    assert report.error.code == "net.timeout"
    assert "deadline" in report.error.message
    log.close()


def test_a_content_length_over_the_cap_is_refused_before_the_body() -> None:
    with SlowServer("huge-length") as server:
        started = time.monotonic()
        with raises_code("net.bad_response", match="over 1000 bytes"):
            https.get(server.url + "/big", timeout=5, max_bytes=1000)
        # No body byte ever comes: waiting for one would end at the 5 s deadline as net.timeout.
        # Half the deadline leaves a loaded machine room (1.0 s failed once at 1.04 s).
        assert time.monotonic() - started < 2.5


def test_a_fast_answer_is_read_whole() -> None:
    with SlowServer("drip-body", interval=0.0005) as server:
        response = https.get(server.url + "/x", timeout=5)
    assert (response.status, response.body) == (200, b"x" * 1000)
