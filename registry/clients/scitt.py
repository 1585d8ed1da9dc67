"""A SCRAPI client: register a Signed Statement with a Transparency Service, get its receipt.

>>> parse_problem(bytes.fromhex(
...     "a2206852656a656374656421781a73636974742e6973737565725f756e747275737465643a206e6f"))
('Rejected', 'scitt.issuer_untrusted: no')

:func:`register_statement` sends ``POST {base}/entries`` and follows SCRAPI's answers: 201 is
the receipt; 303 (then 302) names a locator on the service's own origin, polled after its
``Retry-After`` (50 ms to 5 s) until 200, within ``timeout`` in all. A refusal's RFC 9290 problem
details are raised as ``registry.remote_error``. The caller verifies the receipt.
"""

from __future__ import annotations

import time
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

from affidavit.registry.clients.https import REGISTRY, new_client, parse_url, send
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import decode

__all__ = ["MAX_RECEIPT_BYTES", "parse_problem", "register_statement"]

MAX_RECEIPT_BYTES: Final = 1024 * 1024


def parse_problem(body: bytes) -> tuple[str, str]:
    """``(title, detail)`` of RFC 9290 concise problem details (``-1``, ``-2``); empty strings
    for what is missing or malformed."""
    try:
        value: Any = decode(body, what="problem details", tags=frozenset())
    except errors.ScittError:
        return "", ""
    if not isinstance(value, dict):
        return "", ""
    title, detail = value.get(-1), value.get(-2)
    return (title if isinstance(title, str) else "", detail if isinstance(detail, str) else "")


def _refused(url: str, status: int, body: bytes) -> RegistryError:
    title, detail = parse_problem(body)
    code = detail.split(":", 1)[0] if ":" in detail else ""
    return RegistryError(
        "registry.remote_error",
        f"{url}: HTTP {status}: {title or 'refused'}: {detail or 'no problem details'}",
        details={"status": status, "title": title, "detail": detail, "code": code},
    )


def _same_origin(base: str, location: str) -> str:
    target = urljoin(base, location)
    parse_url(target)
    if urlsplit(target)[:2] != urlsplit(base)[:2]:
        raise RegistryError(
            "registry.bad_response", f"{base}: a locator on another origin: {target}"
        )
    return target


def _retry_after(headers: Any) -> float:
    text = str(headers.get("retry-after", "1")).strip()
    seconds = float(text) if text.isdigit() else 1.0
    return min(5.0, max(0.05, seconds))


def register_statement(
    base_url: str, statement: bytes, *, timeout: float = 30.0
) -> tuple[bytes, str | None]:
    """The receipt of ``statement`` from the Transparency Service at ``base_url``, and its
    locator (module docstring).

    Raises:
        ``usage.invalid``: the URL breaks the URL rule.
        ``registry.unavailable``: no answer (in time).
        ``registry.remote_error``: refused, with the service's problem details.
        ``scitt.registration_failed``: an answer SCRAPI does not have.
    """
    base = parse_url(base_url.rstrip("/"), allow_query=False)
    ends = time.monotonic() + timeout
    entries = f"{base}/entries"
    headers = {"Content-Type": "application/cose", "Accept": "application/cose"}
    with new_client(timeout=timeout, follow_redirects=False) as client:
        answer, response_headers = _exchange(client, "POST", entries, statement, headers)
        locator: str | None = None
        while True:
            status = answer.status
            if status in (200, 201):
                location = response_headers.get("location")
                return answer.body, _same_origin(base, location) if location else locator
            if status not in (302, 303):
                raise _refused(entries, status, answer.body)
            location = response_headers.get("location")
            if not location:
                raise errors.ScittError(
                    "scitt.registration_failed", f"{entries}: HTTP {status} without a Location"
                )
            locator = _same_origin(base, location)
            pause = _retry_after(response_headers)
            if time.monotonic() + pause > ends:
                raise RegistryError(
                    "registry.unavailable",
                    f"{locator}: still registering after {timeout:g} s",
                    details={"url": locator},
                )
            time.sleep(pause)
            answer, response_headers = _exchange(client, "GET", locator, None, headers)


def _exchange(
    client: Any, method: str, url: str, body: bytes | None, headers: dict[str, str]
) -> tuple[Any, Any]:
    """One request; the answer and its headers (``send`` keeps the status and body only, so the
    headers are read from a hook)."""
    seen: dict[str, Any] = {}

    def keep(response: Any) -> None:
        seen["headers"] = response.headers

    client.event_hooks["response"] = [keep]
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["content"] = body
    answer = send(client, method, url, max_bytes=MAX_RECEIPT_BYTES, codes=REGISTRY, **kwargs)
    return answer, seen.get("headers", {})
