"""API keys: created once, shown once, stored only as a SHA-256 digest, compared in constant time.

>>> token = new_token()
>>> parse_token(token).key_id == token.split("_")[1]
True

A token is ``afk_<key id: 16 hex>_<secret: 32 random bytes, b64url>``; the key id only finds the
row. Plain SHA-256, not a password hash: the secret is 256 random bits, nothing to guess, so a
slow hash would only slow every request, and a stolen database still yields no token.

Scopes: ``publish`` (contracts), ``log:write`` (log entries), ``facts:write``,
``facts:read:<local|team|company|public|*>`` (``public`` facts need no key), and ``admin``, the
operator's key: any adapter_id and the reserved distribution channels.

Ownership (docs/adr/0006): a ``publish`` key writes only adapter ids inside its publisher
namespaces, prefixes of whole dot-separated segments (``acme`` covers ``acme.x``, not
``acmex.y``); a key with none may not write at all until bound (:func:`check_publisher`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Final

from affidavit.registry.errors import AuthError

__all__ = [
    "FACT_SCOPES",
    "ApiKey",
    "ParsedToken",
    "check_publisher",
    "check_scope",
    "hash_token",
    "new_token",
    "parse_publisher",
    "parse_scope",
    "parse_token",
    "readable_fact_scopes",
    "token_from_headers",
    "verify_token",
]

FACT_SCOPES: Final = ("local", "team", "company", "public")
_TOKEN = re.compile(r"^afk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_SCOPE = re.compile(
    r"(admin|publish|log:write|facts:write|facts:read:(local|team|company|public|\*))"
)
# Adapter-id segments (docs/formats.md §2).
_PUBLISHER = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*")


@dataclass(frozen=True, slots=True)
class ParsedToken:
    """A syntactically valid token, not yet checked against the database."""

    key_id: str
    token: str


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key: its id, scopes and the digest of its token (never the token itself)."""

    key_id: str
    token_sha256: str
    scopes: tuple[str, ...]
    label: str = ""
    publishers: tuple[str, ...] = ()  # adapter-id namespaces a publish key may write

    def has(self, scope: str) -> bool:
        """True when this key carries ``scope`` (``facts:read:*`` covers every read scope;
        ``admin`` covers ``publish``)."""
        if scope in self.scopes:
            return True
        if scope == "publish" and "admin" in self.scopes:
            return True
        return scope.startswith("facts:read:") and "facts:read:*" in self.scopes

    @property
    def is_admin(self) -> bool:
        """The operator's key: any adapter_id, reserved channels."""
        return "admin" in self.scopes

    def may_write(self, adapter_id: str) -> bool:
        """True when ``adapter_id`` lies in one of the key's publisher namespaces (or admin)."""
        if self.is_admin:
            return True
        return any(adapter_id == p or adapter_id.startswith(p + ".") for p in self.publishers)


def parse_scope(text: str) -> str:
    """Validate one scope string.

    Raises:
        ``auth.bad_scope``: not ``admin``, ``publish``, ``log:write``, ``facts:write`` or
            ``facts:read:<scope>``.
    """
    if not _SCOPE.fullmatch(text):
        raise AuthError(
            "auth.bad_scope",
            f"scope {text!r} is not admin, publish, log:write, facts:write or "
            "facts:read:<local|team|company|public|*>",
        )
    return text


def parse_publisher(text: str) -> str:
    """Validate one publisher namespace (an adapter-id prefix of whole segments).

    Raises:
        ``auth.bad_publisher``: not lowercase dot-separated segments like ``acme`` or
            ``acme.tools``.
    """
    if len(text) > 200 or not _PUBLISHER.fullmatch(text):
        raise AuthError(
            "auth.bad_publisher",
            f"publisher {text!r} must be an adapter-id prefix of whole segments, like 'acme' or "
            "'acme.tools' (lowercase letters, digits, '_', separated by '.')",
        )
    return text


def check_publisher(key: ApiKey, adapter_id: str) -> None:
    """Require that ``key`` may write contracts under ``adapter_id`` (docs/adr/0006).

    Raises:
        ``auth.key_unbound``: a publish key with no publisher binding (created before bindings).
        ``auth.publisher_forbidden``: the bindings do not cover ``adapter_id``.
    """
    if key.is_admin:
        return
    if not key.publishers:
        raise AuthError(
            "auth.key_unbound",
            f"API key {key.key_id} is bound to no publisher, so it may not write; the operator "
            f"binds it with: affidavit registry keys bind {key.key_id} --publisher PREFIX",
            details={"key_id": key.key_id},
        )
    if not key.may_write(adapter_id):
        raise AuthError(
            "auth.publisher_forbidden",
            f"API key {key.key_id} may write only under {', '.join(key.publishers)}; "
            f"not {adapter_id}",
            details={"adapter_id": adapter_id, "publishers": list(key.publishers)},
        )


def new_token() -> str:
    """A fresh token with a random key id and 256 bits of secret."""
    key_id = secrets.token_hex(8)
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii").rstrip("=")
    return f"afk_{key_id}_{secret}"


def hash_token(token: str) -> str:
    """``SHA-256(token)`` as lowercase hex: what the database stores."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def parse_token(token: str) -> ParsedToken:
    """Check the token's shape (cheap, before any lookup).

    Raises:
        ``auth.invalid``: the token is not ``afk_<16 hex>_<43 b64url>``.
    """
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise AuthError("auth.invalid", "the API key is malformed")
    return ParsedToken(key_id=match.group(1), token=token)


def token_from_headers(authorization: str | None, x_api_key: str | None) -> str | None:
    """The token from ``Authorization: Bearer <t>`` or ``X-API-Key: <t>``, or None."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise AuthError("auth.invalid", "the Authorization header must be 'Bearer <api key>'")
        return value.strip()
    if x_api_key:
        return x_api_key.strip()
    return None


def verify_token(token: str, stored: ApiKey | None) -> ApiKey:
    """Compare ``token`` with the stored digest in constant time.

    Raises:
        ``auth.invalid``: no such key, or the digest differs.
    """
    # Hash even when the key is unknown, so both paths cost the same.
    digest = hash_token(token)
    expected = stored.token_sha256 if stored is not None else "0" * 64
    if not hmac.compare_digest(digest, expected) or stored is None:
        raise AuthError("auth.invalid", "the API key is not valid")
    return stored


def check_scope(key: ApiKey | None, scope: str) -> ApiKey:
    """Require ``scope``.

    Raises:
        ``auth.missing``: no key was sent.
        ``auth.forbidden``: the key lacks ``scope``.
    """
    if key is None:
        raise AuthError("auth.missing", f"this route needs an API key with scope {scope}")
    if not key.has(scope):
        raise AuthError(
            "auth.forbidden", f"the API key lacks scope {scope}", details={"needed": scope}
        )
    return key


def readable_fact_scopes(key: ApiKey | None) -> frozenset[str]:
    """The fact scopes ``key`` may read; ``public`` always."""
    readable = {"public"}
    if key is not None:
        readable.update(s for s in FACT_SCOPES if key.has(f"facts:read:{s}"))
    return frozenset(readable)
