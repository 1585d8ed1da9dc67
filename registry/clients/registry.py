"""The registry client (httpx): node probe, discovery, publication, facts, the log.

>>> from affidavit.registry.clients.registry import probe, ProbeFailure
>>> isinstance(probe(None, env={}), ProbeFailure)        # no URL configured: a typed failure
True

Two kinds of caller (seed 000 §12.2-12.3): **process mode** (the CLI) calls :func:`require_node`,
which raises; **middleware mode** (a library in someone else's agent) calls
:func:`middleware_probe`, which never raises and returns None when there is no node.
Configuration: ``AFFIDAVIT_REGISTRY_URL`` and ``AFFIDAVIT_API_KEY`` (sent as a bearer token,
never logged). Every response is size-capped and parsed strictly.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
from affidavit.registry.clients.https import (
    DEFAULT_TIMEOUT,
    NET,
    REGISTRY,
    Codes,
    bearer,
    get,
    new_client,
    parse_url,
    send,
)
from affidavit.registry.errors import NetError, RegistryError
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import key_from_document
from affidavit.verify.json.strict import loads

__all__ = [
    "API_KEY_ENV",
    "URL_ENV",
    "NodeDescription",
    "ProbeFailure",
    "RegistryClient",
    "fetch_manifest",
    "fetch_public_key",
    "middleware_probe",
    "probe",
    "require_node",
    "resolve_url",
]

URL_ENV: Final = "AFFIDAVIT_REGISTRY_URL"
API_KEY_ENV: Final = "AFFIDAVIT_API_KEY"
PROBE_PATH: Final = "/.well-known/affidavit"
MANIFEST_PATH: Final = "/specs/adapter-contracts.manifest.json"
PUBLIC_KEY_PATH: Final = "/protocol/merkle/public-key"
_PROBE_FIELDS: Final = ("version", "node_id", "node_url", "auth", "federation")
_LOG = logging.getLogger("affidavit.registry.clients.registry")


@dataclass(frozen=True, slots=True)
class NodeDescription:
    """A successful node probe (seed 000 §12.3.1 required fields, plus the document)."""

    url: str
    version: str
    node_id: str
    node_url: str
    auth: str
    federation: str
    document: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class ProbeFailure:
    """Why a probe failed: ``registry.url_missing``, ``registry.unavailable`` or
    ``registry.bad_response``."""

    url: str | None
    code: str
    message: str

    def to_error(self) -> errors.AffidavitError:
        """The matching error, for process-mode callers."""
        known = ("registry.url_missing", "registry.bad_response")
        code = self.code if self.code in known else "registry.unavailable"
        return RegistryError(code, self.message, details={"url": self.url})


def resolve_url(url: str | None, env: Mapping[str, str] | None = None) -> str:
    """``url`` or ``$AFFIDAVIT_REGISTRY_URL``, without a trailing slash.

    Raises:
        ``registry.url_missing``: neither is set, or the URL breaks the one URL rule.
    """
    environment = os.environ if env is None else env
    chosen = url or environment.get(URL_ENV, "")
    if not chosen:
        raise RegistryError(
            "registry.url_missing", f"no registry URL: pass --registry URL or set {URL_ENV}"
        )
    try:
        parse_url(chosen, allow_query=False)
    except errors.UsageError as e:
        raise RegistryError("registry.url_missing", f"registry URL {e.message}") from None
    return chosen.rstrip("/")


def _get_json(
    url: str, *, timeout: float, transport: httpx.BaseTransport | None, codes: Codes = REGISTRY
) -> Any:
    response = get(url, timeout=timeout, transport=transport, codes=codes)
    return _decode(url, response.status, response.body, codes)


def _decode(url: str, status: int, data: bytes, codes: Codes = REGISTRY) -> Any:
    """The strict JSON of an answer; an error status raises (a registry's error body as
    ``registry.remote_error``; another remote's as ``net.bad_response``)."""
    try:
        document = loads(data) if data else None
    except errors.ParseError as e:
        raise codes.family(
            codes.bad_response, f"{url}: HTTP {status}, not strict JSON: {e.message}"
        ) from None
    if status >= 400 and codes is not REGISTRY:
        raise codes.family(codes.bad_response, f"{url}: HTTP {status}", details={"status": status})
    if status >= 400:
        if isinstance(document, dict) and isinstance(document.get("code"), str):
            raise RegistryError(
                "registry.remote_error",
                f"{url}: HTTP {status}: {document['code']}: {document.get('message', '')}",
                details={"status": status, "error": document},
            )
        raise RegistryError(
            "registry.unavailable", f"{url}: HTTP {status}", details={"status": status}
        )
    return document


def probe(
    url: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    transport: httpx.BaseTransport | None = None,
) -> NodeDescription | ProbeFailure:
    """``GET {url}/.well-known/affidavit`` and check the required fields. Never raises."""
    try:
        base = resolve_url(url, env)
    except RegistryError as e:
        if e.code != "registry.url_missing":
            raise
        return ProbeFailure(url, e.code, e.message)
    try:
        document = _get_json(base + PROBE_PATH, timeout=timeout, transport=transport)
    except errors.AffidavitError as e:
        code = (
            "registry.bad_response" if e.code == "registry.bad_response" else "registry.unavailable"
        )
        return ProbeFailure(base, code, e.message)
    if not isinstance(document, dict):
        return ProbeFailure(base, "registry.bad_response", f"{base}{PROBE_PATH}: not a JSON object")
    missing = [k for k in _PROBE_FIELDS if not isinstance(document.get(k), str) or not document[k]]
    if missing:
        message = f"{base}{PROBE_PATH}: node probe lacks {', '.join(missing)}"
        return ProbeFailure(base, "registry.bad_response", message)
    values = {k: str(document[k]) for k in _PROBE_FIELDS}
    return NodeDescription(url=base, document=document, **values)


def require_node(url: str | None = None, **kwargs: Any) -> NodeDescription:
    """Process mode: the node description, or an error the CLI reports and exits on.

    Raises:
        ``registry.url_missing``, ``registry.unavailable``, ``registry.bad_response``: as
            :class:`ProbeFailure`.
    """
    result = probe(url, **kwargs)
    if isinstance(result, ProbeFailure):
        raise result.to_error()
    return result


def middleware_probe(url: str | None = None, **kwargs: Any) -> NodeDescription | None:
    """Middleware mode: the node description, or None (logged at debug level). Never raises."""
    try:
        result = probe(url, **kwargs)
    except Exception:  # defensive: middleware must never break its host
        _LOG.debug("registry probe raised", exc_info=True)
        return None
    if isinstance(result, ProbeFailure):
        _LOG.debug("registry probe failed: %s: %s", result.code, result.message)
        return None
    return result


def _with_default_path(url: str, path: str) -> str:
    """``url``, or ``url + path`` when it has no path.

    Raises:
        ``usage.invalid``: ``url`` breaks the one URL rule (:func:`parse_url`).
    """
    parts = urlsplit(parse_url(url))
    return url.rstrip("/") + path if parts.path in ("", "/") else url


def fetch_manifest(
    url: str, *, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
) -> dict[str, Any]:
    """Fetch a manifest (unverified): ``url``, or its ``/specs/adapter-contracts.manifest.json``
    when ``url`` is a bare node URL.

    Raises:
        ``registry.unavailable``, ``registry.bad_response``, ``registry.remote_error``: fetch or
            parse failed.
    """
    target = _with_default_path(url, MANIFEST_PATH)
    document = _get_json(target, timeout=timeout, transport=transport)
    if not isinstance(document, dict):
        raise RegistryError("registry.bad_response", f"{target}: the manifest is not a JSON object")
    return document


def fetch_public_key(
    url: str, *, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
) -> Ed25519PublicKey:
    """Fetch a public key from a document with ``public_key_base64`` (a bare node URL: its
    ``/protocol/merkle/public-key``), only when asked (docs/formats.md §3). The document may be
    anyone's, so failures are the neutral ``net.*``.

    Raises:
        ``net.unavailable``, ``net.timeout``, ``net.bad_response``: fetch or parse failed.
        ``key.*``: the key is malformed or weak.
    """
    target = _with_default_path(url, PUBLIC_KEY_PATH)
    document = _get_json(target, timeout=timeout, transport=transport, codes=NET)
    if not isinstance(document, dict) or not isinstance(document.get("public_key_base64"), str):
        raise NetError("net.bad_response", f"{target}: no public_key_base64 in the response")
    return key_from_document(document, source=target)


class RegistryClient:
    """A synchronous client for one registry; its errors raise ``registry.remote_error`` with
    the body in ``details["error"]``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        environment = os.environ if env is None else env
        self.url = resolve_url(url, environment)
        token = api_key if api_key is not None else environment.get(API_KEY_ENV) or None
        headers = bearer(token) if token else {}
        self._http = new_client(
            base_url=self.url, timeout=timeout, transport=transport, headers=headers
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send one request; return the parsed JSON body (None for an empty body)."""
        kwargs: dict[str, Any] = {
            "params": {k: v for k, v in (params or {}).items() if v is not None}
        }
        if json_body is not None:
            kwargs["content"] = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            kwargs["headers"] = {"Content-Type": "application/json"}
        url = self.url + path
        response = send(self._http, method, path, target=url, codes=REGISTRY, **kwargs)
        return _decode(url, response.status, response.body)

    def post_bytes(
        self, path: str, data: bytes, *, params: Mapping[str, Any] | None = None
    ) -> tuple[Any, int]:
        """POST ``data`` as ``application/octet-stream``; the parsed answer and its status."""
        url = self.url + path
        response = send(
            self._http,
            "POST",
            path,
            target=url,
            codes=REGISTRY,
            content=data,
            params=dict(params or {}),
            headers={"Content-Type": "application/octet-stream"},
        )
        return _decode(url, response.status, response.body), response.status

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def publish(self, declaration: Mapping[str, Any]) -> dict[str, Any]:
        """POST a contract; returns``{created, entry, leaf_index, inclusion, signed_tree_head}``."""
        return dict(
            self.request("POST", "/protocol/adapter-contracts", json_body=dict(declaration))
        )

    def set_lifecycle(self, adapter_id: str, version: str, **fields: str) -> dict[str, Any]:
        """PATCH lifecycle fields of a published contract."""
        path = f"/protocol/adapter-contracts/{adapter_id}/{version}"
        return dict(self.request("PATCH", path, json_body=fields))

    def put_facts(self, facts: list[Mapping[str, Any]]) -> dict[str, Any]:
        """PUT a batch of facts; returns ``{added, existing}``."""
        return dict(self.request("PUT", "/v1/facts", json_body={"facts": [dict(f) for f in facts]}))

    def provenance(
        self, fact_id: str, *, depth: int | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """The provenance walk of ``fact_id``."""
        return dict(self.get(f"/v1/facts/{fact_id}/provenance", depth=depth, scope=scope))
