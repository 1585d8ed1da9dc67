"""The one HTTP(S) fetcher of Affidavit's clients: one URL rule, a deadline, a size cap, and
nothing implicit.

>>> from affidavit.verify.errors import UsageError
>>> try:
...     get("http://example.com/m.json", https_only=True)  # refused before any network use
... except UsageError as e:
...     print(e.code)
usage.invalid
>>> parse_url("https://log.example:8443/tlog/")
'https://log.example:8443/tlog/'

Every request a client of this package sends (the registry client, the Stigmem client, the tile
reader of ``log monitor``, the witness client of ``log head --witness`` and ``registry serve``,
``adapter`` commands reading an ``https://`` manifest or publisher document, ``verify bundle
--fetch-key``) follows one rule (issue 21):

- **URLs are parsed where they enter** (:func:`parse_url`, called by each client's constructor or
  parser): an http(s) scheme, a host that is a DNS name, an IPv4 address or a bracketed IPv6 one,
  an optional port 1 to 65535, no user name or password, no fragment, no space or control
  character; anything else is ``usage.invalid``, one line, before any network use;
- **``timeout`` is a deadline for the whole exchange** (connect, TLS, the request, the head and
  the whole body): every socket read and write is bounded by the time left (clients are built by
  :func:`new_client`; :mod:`affidavit.registry.clients._deadline`), and the clock is checked
  between body chunks;
- **the answer is capped while it streams**: a ``Content-Length`` over ``max_bytes`` is refused
  before the body is read, and the body is refused as soon as it passes ``max_bytes`` (never more
  is held);
- **any failure is one error**: every httpx exception (``httpx.HTTPError`` is not the base of all
  of them: ``InvalidURL``, ``CookieConflict``, ``StreamError`` are apart) becomes one of the codes
  below, never a traceback.

:func:`send` is one request through a client of :func:`new_client`; :func:`get` is one GET in a
client of its own; with ``https_only`` it refuses any other scheme, and a redirect away from https.

httpx (the ``[registry]`` extra) is imported when a request is made, so a command that never
fetches never imports it. A failure has one code per situation, the same for every remote that is
not a registry (a tile server, a witness, a Stigmem node, a key document; issue 22); a client
passes its own :class:`Codes` where scripts rely on its codes (:data:`REGISTRY`: the registry's
clients), and a caller that has always raised its own code for a failed fetch
(``manifest.fetch_failed``) translates them:

- ``net.unavailable``: the request failed in transport (DNS, connect, TLS), or httpx is not
  installed;
- ``net.timeout``: the exchange's deadline passed;
- ``net.bad_response``: the body (or its ``Content-Length``) is over ``max_bytes``, or a
  redirect left https;
- ``usage.invalid``: the URL breaks the rule above (with ``https_only``: it is not ``https://``).

What an answer means (status, JSON) is the caller's: :class:`HttpResponse` carries the status
and the bytes.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.registry.errors import NetError, RegistryError
from affidavit.verify import errors

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RESPONSE_BYTES",
    "MAX_URL_LENGTH",
    "NET",
    "REGISTRY",
    "Codes",
    "HttpResponse",
    "bearer",
    "get",
    "httpx_module",
    "new_client",
    "parse_url",
    "send",
]

DEFAULT_TIMEOUT: Final = 10.0
MAX_RESPONSE_BYTES: Final = 16 * 1024 * 1024
MAX_URL_LENGTH: Final = 4096
_SCHEMES: Final = ("http", "https")
# RFC 1123 §2.1 labels (letters, digits, hyphens, not at either end), plus "_" which real hosts use
_LABEL: Final = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_PORT: Final = re.compile(r"[0-9]{1,5}")
_TOKEN: Final = re.compile(r"[\x21-\x7e]+")


class Codes(NamedTuple):
    """The codes a failed exchange is told in: unreachable, late, a bad answer."""

    family: type[errors.AffidavitError]
    unavailable: str
    timeout: str
    bad_response: str


NET: Final = Codes(NetError, "net.unavailable", "net.timeout", "net.bad_response")
# The registry's clients keep the codes scripts rely on (a late answer is "unavailable" there).
REGISTRY: Final = Codes(
    RegistryError, "registry.unavailable", "registry.unavailable", "registry.bad_response"
)


class HttpResponse(NamedTuple):
    """An answer read whole: the URL that answered (after redirects), its status and body."""

    url: str
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300


def parse_url(url: str, *, https_only: bool = False, allow_query: bool = True) -> str:
    """``url``, unchanged, once it is an absolute http(s) URL every client can use (the module
    docstring's rule); ``allow_query=False`` also refuses a query (a prefix that paths are
    appended to). Reads no network and imports no httpx.

    Raises:
        ``usage.invalid``: the URL breaks the rule (the message says which part).
    """
    shown = repr(url if len(url) <= 200 else url[:200] + "...")
    if https_only and url[:8].lower() != "https://":
        raise errors.UsageError(f"{url}: only https:// URLs are fetched")

    def refuse(why: str) -> errors.UsageError:
        return errors.UsageError(f"{shown}: {why}")

    if len(url) > MAX_URL_LENGTH:
        raise refuse(f"a URL is at most {MAX_URL_LENGTH} characters")
    if any(c.isspace() or not c.isprintable() for c in url) or "\\" in url:
        raise refuse("a URL has no spaces, control characters or backslashes")
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in _SCHEMES:
        raise refuse("only http:// and https:// URLs are fetched")
    if "#" in rest:
        raise refuse("a URL to fetch has no #fragment")
    if not allow_query and "?" in rest:
        raise refuse("this URL is a prefix: it takes no ?query")
    authority = re.split(r"[/?]", rest, maxsplit=1)[0]
    if "@" in authority:  # the message names the host only: the secret is not echoed
        host = authority.rpartition("@")[2]
        raise errors.UsageError(
            f"{scheme}://...@{host}: no user name or password in a URL (they would be logged)"
        )
    _check_host_and_port(authority, refuse)
    return url


def _check_host_and_port(authority: str, refuse: Callable[[str], errors.UsageError]) -> None:
    """``host[:port]`` (RFC 3986 §3.2.2-3.2.3), strictly; ``refuse(why)`` makes the error."""
    if authority.startswith("["):
        host, bracket, after = authority[1:].partition("]")
        if not bracket:
            raise refuse("an IPv6 address needs its closing ']'")
        if "%" in host:
            raise refuse("an IPv6 zone (%...) is not fetched")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise refuse(f"[{host}] is not an IPv6 address") from None
        if after and not after.startswith(":"):
            raise refuse("only a :port may follow an IPv6 address")
        port = after[1:] if after else None
    else:
        host, colon, port_text = authority.partition(":")
        port = port_text if colon else None
        _check_host_name(host, refuse)
    if port is not None and (not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535):
        raise refuse("the port must be 1 to 65535")


def _check_host_name(host: str, refuse: Callable[[str], errors.UsageError]) -> None:
    if not host:
        raise refuse("the URL has no host")
    if not host.isascii():
        raise refuse("write an international host name in its xn-- (IDNA) form")
    name = host.removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise refuse(f"{host!r} is not a host name, an IPv4 address or a bracketed IPv6 one")
    if labels[-1].isdigit():  # a name ending in a number is an IPv4 address (WHATWG URL, "host")
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            raise refuse(f"{host!r} is not an IPv4 address (a.b.c.d, each 0 to 255)") from None


def bearer(token: str) -> dict[str, str]:
    """``{"Authorization": "Bearer <token>"}``.

    Raises:
        ``usage.invalid``: the token is not visible ASCII (it could not be sent as a header).
    """
    if not _TOKEN.fullmatch(token):
        raise errors.UsageError("an API key is visible ASCII characters, without spaces")
    return {"Authorization": f"Bearer {token}"}


def httpx_module() -> Any:
    """httpx, imported now (only the network paths need it).

    Raises:
        ``net.unavailable``: httpx is not installed.
    """
    try:
        import httpx  # noqa: PLC0415 - only on the explicit network path
    except ImportError:  # pragma: no cover - httpx ships with the [registry] extra
        raise NetError(
            "net.unavailable", "fetching needs httpx: pip install 'affidavit[registry]'"
        ) from None
    return httpx


def new_client(
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
    **kwargs: Any,
) -> httpx.Client:
    """An ``httpx.Client`` for :func:`send`: ``timeout`` is then the deadline of each exchange
    (module docstring); ``transport`` (tests) replaces the network; ``kwargs`` go to httpx
    (``headers``, ``base_url``, ``follow_redirects``; never ``timeout`` again).

    Raises:
        ``net.unavailable``: httpx is not installed.
    """
    module = httpx_module()
    if transport is None:
        from affidavit.registry.clients._deadline import transport as deadline_transport  # noqa: PLC0415 - imports httpx

        transport = deadline_transport()
    client: httpx.Client = module.Client(timeout=timeout, transport=transport, **kwargs)
    return client


def _budget(client: httpx.Client) -> float:
    """The deadline of one exchange through ``client``: its timeout (the largest part set)."""
    parts = client.timeout
    given = [t for t in (parts.connect, parts.read, parts.write, parts.pool) if t is not None]
    return max(given) if given else DEFAULT_TIMEOUT


def send(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    target: str | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
    https_only: bool = False,
    codes: Codes = NET,
    until: float | None = None,
    **kwargs: Any,
) -> HttpResponse:
    """One request through ``client`` (built by :func:`new_client`), its body read whole up to
    ``max_bytes``, the whole exchange within the client's timeout.

    ``target`` names the request in errors (default ``url``); failures are told in ``codes``
    (the neutral ``net.*`` unless the client keeps its own); ``until`` (a
    ``time.monotonic()`` value) ends the exchange earlier, for a command that keeps one deadline
    over all its requests: once it has passed, nothing is sent; ``kwargs`` go to httpx.

    Raises:
        ``net.unavailable``: a transport failure (details: ``url``).
        ``net.timeout``: the deadline passed (details: ``url``, ``deadline_s``).
        ``net.bad_response``: the body or its ``Content-Length`` is over ``max_bytes``;
            with ``https_only``, the answer came from a URL that is not https (a redirect left it).
        ``usage.invalid``: httpx refused the URL (a caller that did not :func:`parse_url` it).
    """
    httpx = httpx_module()
    from affidavit.registry.clients._deadline import deadline  # noqa: PLC0415 - imports httpx

    name = target or url
    budget = _budget(client)
    ends = time.monotonic() + budget
    if until is not None and until < ends:
        ends = until
        if ends <= time.monotonic():  # one deadline for the whole command: no request after it
            raise _late(codes, name, budget)
    try:
        with deadline(ends), client.stream(method, url, **kwargs) as response:
            if https_only and response.url.scheme != "https":
                raise codes.family(codes.bad_response, f"{name}: redirected away from https")
            announced = response.headers.get("content-length", "")
            too_big = codes.family(codes.bad_response, f"{name}: over {max_bytes} bytes")
            if announced.isdigit() and int(announced) > max_bytes:  # refused before the body
                raise too_big
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise too_big
                if time.monotonic() > ends:
                    raise _late(codes, name, budget)
            return HttpResponse(str(response.url), response.status_code, bytes(body))
    except httpx.InvalidURL as e:
        raise errors.UsageError(f"{name}: not a URL httpx can fetch: {_first_line(e)}") from None
    except (httpx.HTTPError, httpx.StreamError, httpx.CookieConflict) as e:
        if isinstance(e, httpx.TimeoutException) or time.monotonic() >= ends:
            raise _late(codes, name, budget) from None
        raise codes.family(
            codes.unavailable,
            f"{name}: {type(e).__name__}: {_first_line(e)}",
            details={"url": name},
        ) from None


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [""])[0]


def _late(codes: Codes, name: str, budget: float) -> errors.AffidavitError:
    return codes.family(
        codes.timeout,
        f"{name}: no complete answer within the {budget:g} s deadline",
        details={"url": name, "deadline_s": budget},
    )


def get(
    url: str,
    *,
    https_only: bool = False,
    follow_redirects: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_RESPONSE_BYTES,
    headers: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    codes: Codes = NET,
) -> HttpResponse:
    """One GET of ``url`` in a client of its own (see :func:`send`).

    Raises:
        ``usage.invalid``: ``url`` breaks the URL rule (:func:`parse_url`); with ``https_only``,
            it is not ``https://``.
        ``net.unavailable``, ``net.timeout``, ``net.bad_response``: as :func:`send`.
    """
    parse_url(url, https_only=https_only)
    with new_client(
        timeout=timeout,
        follow_redirects=follow_redirects,
        headers=dict(headers or {}),
        transport=transport,
    ) as client:
        return send(client, "GET", url, max_bytes=max_bytes, https_only=https_only, codes=codes)
