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

Every request of Affidavit's clients (registry, Stigmem, tiles, witnesses, ``https://``
manifests and key documents) follows one rule (issue 21): the URL is parsed where it enters
(:func:`parse_url`: an http(s) scheme, a DNS name, an IPv4 address or a bracketed IPv6 one, an
optional port 1 to 65535, no user info, fragment, space or control character, else
``usage.invalid`` before any network use); ``timeout`` is a deadline for the whole exchange,
every socket operation bounded by the time left (:mod:`._deadline`); the answer is capped while
it streams (``max_bytes``, a ``Content-Length`` over it refused before the body); and any
failure, every httpx exception included, is one code, never a traceback: ``net.unavailable``,
``net.timeout``, ``net.bad_response`` or ``usage.invalid`` (:data:`REGISTRY` keeps the codes the
registry's scripts rely on, issue 22). httpx (the ``[registry]`` extra) is imported when a
request is made; what an answer means (status, JSON) is the caller's.
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
        return 200 <= self.status < 300


def parse_url(url: str, *, https_only: bool = False, allow_query: bool = True) -> str:
    """``url``, unchanged, once it follows the module docstring's rule; ``allow_query=False``
    also refuses a query (a prefix that paths are appended to).

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
    """An ``httpx.Client`` for :func:`send`, ``timeout`` the deadline of each exchange;
    ``transport`` (tests) replaces the network; ``kwargs`` go to httpx.

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
    """The deadline of one exchange: the client's largest timeout part."""
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
    """One request through a client of :func:`new_client`, its body read whole up to
    ``max_bytes`` within the client's timeout. ``target`` names the request in errors; ``until``
    (``time.monotonic()``) is a command's one deadline over all its requests: once it has
    passed, nothing is sent.

    Raises:
        ``net.unavailable``: a transport failure.
        ``net.timeout``: the deadline passed.
        ``net.bad_response``: the body is over ``max_bytes``, or (``https_only``) a redirect left
            https.
        ``usage.invalid``: httpx refused the URL.
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
    """One GET of ``url`` in a client of its own.

    Raises:
        ``usage.invalid``: ``url`` breaks :func:`parse_url`'s rule.
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
