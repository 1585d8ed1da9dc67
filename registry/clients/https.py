"""The one HTTP(S) fetcher of Affidavit's clients: a timeout, a size cap, and nothing implicit.

>>> from affidavit.verify.errors import UsageError
>>> try:
...     get("http://example.com/m.json", https_only=True)  # refused before any network use
... except UsageError as e:
...     print(e.code)
usage.invalid

Every request a client of this package sends (the registry client, ``adapter`` commands reading
an ``https://`` manifest or publisher document, ``verify bundle --fetch-key``) goes through
:func:`send`: the body is streamed and refused past ``max_bytes`` (never more is held), a
transport failure is one error line. :func:`get` is one GET in a client of its own; with
``https_only`` it refuses any other scheme, and a redirect away from https.

httpx (the ``[registry]`` extra) is imported when a request is made, so a command that never
fetches never imports it. Errors speak the registry's codes; a caller that has always raised its
own code for a failed fetch (``manifest.fetch_failed``) translates them:

- ``registry.unavailable``: the request failed in transport (DNS, connect, TLS, timeout), or httpx
  is not installed;
- ``registry.bad_response``: the body is over ``max_bytes``, or a redirect left https;
- ``usage.invalid``: ``https_only`` and the URL is not ``https://``.

What an answer means (status, JSON) is the caller's: :class:`HttpResponse` carries the status
and the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.registry.errors import RegistryError
from affidavit.verify import errors

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_TIMEOUT", "MAX_RESPONSE_BYTES", "HttpResponse", "get", "httpx_module", "send"]

DEFAULT_TIMEOUT: Final = 10.0
MAX_RESPONSE_BYTES: Final = 16 * 1024 * 1024


class HttpResponse(NamedTuple):
    """An answer read whole: the URL that answered (after redirects), its status and body."""

    url: str
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300


def httpx_module() -> Any:
    """httpx, imported now (only the network paths need it).

    Raises:
        ``registry.unavailable``: httpx is not installed.
    """
    try:
        import httpx  # noqa: PLC0415 - only on the explicit network path
    except ImportError:  # pragma: no cover - httpx ships with the [registry] extra
        raise RegistryError(
            "registry.unavailable", "fetching needs httpx: pip install 'affidavit[registry]'"
        ) from None
    return httpx


def send(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    target: str | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
    https_only: bool = False,
    **kwargs: Any,
) -> HttpResponse:
    """One request through ``client``, its body read whole up to ``max_bytes``.

    ``target`` names the request in errors (default ``url``); ``kwargs`` go to httpx.

    Raises:
        ``registry.unavailable``: a transport failure (details: ``url``).
        ``registry.bad_response``: the body is over ``max_bytes``; with ``https_only``, the
            answer came from a URL that is not https (a redirect left it).
    """
    httpx = httpx_module()
    name = target or url
    try:
        with client.stream(method, url, **kwargs) as response:
            if https_only and response.url.scheme != "https":
                raise RegistryError("registry.bad_response", f"{name}: redirected away from https")
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise RegistryError("registry.bad_response", f"{name}: over {max_bytes} bytes")
            return HttpResponse(str(response.url), response.status_code, bytes(body))
    except httpx.HTTPError as e:
        first_line = (str(e).splitlines() or [""])[0]
        raise RegistryError(
            "registry.unavailable",
            f"{name}: {type(e).__name__}: {first_line}",
            details={"url": name},
        ) from None


def get(
    url: str,
    *,
    https_only: bool = False,
    follow_redirects: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_RESPONSE_BYTES,
    headers: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> HttpResponse:
    """One GET of ``url`` in a client of its own (see :func:`send`).

    Raises:
        ``usage.invalid``: ``https_only`` and ``url`` is not ``https://``.
        ``registry.unavailable``, ``registry.bad_response``: as :func:`send`.
    """
    if https_only and not url.startswith("https://"):
        raise errors.UsageError(f"{url}: only https:// URLs are fetched")
    httpx = httpx_module()
    with httpx.Client(
        timeout=timeout,
        follow_redirects=follow_redirects,
        headers=dict(headers or {}),
        transport=transport,
    ) as client:
        return send(client, "GET", url, max_bytes=max_bytes, https_only=https_only)
