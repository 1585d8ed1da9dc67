"""API keys: created once, shown once, stored only as a SHA-256 digest, compared in constant time.

>>> token = new_token()
>>> parse_token(token).key_id == token.split("_")[1]
True

A token is ``afk_<key id: 16 hex>_<secret: 32 random bytes, b64url>``. The key id is not
secret: it only finds the row. The database keeps ``SHA-256(token)``; a request's token is hashed
and compared with :func:`hmac.compare_digest`.

Why plain SHA-256 and not a password hash (bcrypt, scrypt, Argon2): the secret is 256 bits from
:func:`secrets.token_bytes`, not a human password, so there is nothing to guess and no dictionary to
slow down; a slow hash would only cost every request time. A stolen database still yields no usable
token, because SHA-256 is preimage resistant at that entropy.

Scopes (issue 6 item 4): ``publish`` (POST/PATCH contracts), ``facts:write`` (PUT facts),
``facts:read:<scope>`` for scope ``local|team|company|public`` or ``*`` (all). Facts in scope
``public`` are readable without a key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Final

from affidavit.verify.errors import AuthBadScope, AuthForbidden, AuthInvalid, AuthMissing

__all__ = [
    "FACT_SCOPES",
    "ApiKey",
    "ParsedToken",
    "check_scope",
    "hash_token",
    "new_token",
    "parse_scope",
    "parse_token",
    "readable_fact_scopes",
    "token_from_headers",
    "verify_token",
]

FACT_SCOPES: Final = ("local", "team", "company", "public")
_TOKEN = re.compile(r"^afk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_SCOPE = re.compile(r"^(publish|facts:write|facts:read:(local|team|company|public|\*))$")


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

    def has(self, scope: str) -> bool:
        """True when this key carries ``scope`` (``facts:read:*`` covers every read scope)."""
        if scope in self.scopes:
            return True
        return scope.startswith("facts:read:") and "facts:read:*" in self.scopes


def parse_scope(text: str) -> str:
    """Validate one scope string.

    Raises:
        AuthBadScope: not ``publish``, ``facts:write`` or ``facts:read:<scope>``.
    """
    if not _SCOPE.match(text):
        raise AuthBadScope(
            f"scope {text!r} is not publish, facts:write or "
            "facts:read:<local|team|company|public|*>"
        )
    return text


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
        AuthInvalid: the token is not ``afk_<16 hex>_<43 b64url>``.
    """
    match = _TOKEN.match(token)
    if match is None:
        raise AuthInvalid("the API key is malformed")
    return ParsedToken(key_id=match.group(1), token=token)


def token_from_headers(authorization: str | None, x_api_key: str | None) -> str | None:
    """The token from ``Authorization: Bearer <t>`` or ``X-API-Key: <t>``, or None."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise AuthInvalid("the Authorization header must be 'Bearer <api key>'")
        return value.strip()
    if x_api_key:
        return x_api_key.strip()
    return None


def verify_token(token: str, stored: ApiKey | None) -> ApiKey:
    """Compare ``token`` with the stored digest in constant time.

    Raises:
        AuthInvalid: no such key, or the digest differs.
    """
    # Hash even when the key is unknown, so both paths cost the same.
    digest = hash_token(token)
    expected = stored.token_sha256 if stored is not None else "0" * 64
    if not hmac.compare_digest(digest, expected) or stored is None:
        raise AuthInvalid("the API key is not valid")
    return stored


def check_scope(key: ApiKey | None, scope: str) -> ApiKey:
    """Require ``scope``.

    Raises:
        AuthMissing: no key was sent.
        AuthForbidden: the key lacks ``scope``.
    """
    if key is None:
        raise AuthMissing(f"this route needs an API key with scope {scope}")
    if not key.has(scope):
        raise AuthForbidden(f"the API key lacks scope {scope}", details={"needed": scope})
    return key


def readable_fact_scopes(key: ApiKey | None) -> frozenset[str]:
    """The fact scopes ``key`` may read; ``public`` always."""
    readable = {"public"}
    if key is not None:
        readable.update(s for s in FACT_SCOPES if key.has(f"facts:read:{s}"))
    return frozenset(readable)
