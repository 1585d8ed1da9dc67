"""Which actor keys the caller trusts, as opposed to the keys a bundle carries (docs/formats.md §4,
docs/adr/0008).

>>> trust = ActorTrust.from_directory({"k1": {"actor_id": "a", "issued_at": "2026-01-01T00:00:00Z",
...     "revoked_at": None, "public_key_base64": "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}})
>>> trust.vouches("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "a", "2026-02-01T00:00:00Z")
True
>>> trust.vouches("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "b", "2026-02-01T00:00:00Z")
False

A key the bundle carries proves only consistency (``self_asserted``). A caller key without an
actor vouches for every actor, one with ``actor_id`` for that actor, a pinned directory entry for
its actor inside its window and lifecycle. Keys match by bytes, never by ``key_id``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.bundles.actor_keys import (
    TRUST_BUNDLE,
    TRUST_CALLER,
    directory_entries,
    key_valid_at,
    lifecycle_problem,
    parse_instant,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey

__all__ = ["TRUST_BUNDLE", "TRUST_CALLER", "ActorTrust", "TrustedActorKey"]


class TrustedActorKey(NamedTuple):
    """One key the caller trusts for actor signatures (picklable: sent to --jobs workers)."""

    raw: bytes
    actor_id: str | None = None  # None: any actor
    window: tuple[tuple[str, Any], ...] | None = None  # a pinned entry's issued/revoked/status
    key_id: str | None = None


class ActorTrust:
    """The caller's actor keys. Empty: every actor signature is at best ``self_asserted``."""

    def __init__(self, keys: Iterable[TrustedActorKey] = ()) -> None:
        self.keys: tuple[TrustedActorKey, ...] = tuple(keys)
        self._by_raw: dict[bytes, list[TrustedActorKey]] = {}
        for key in self.keys:
            self._by_raw.setdefault(key.raw, []).append(key)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def vouches(self, public_key_b64: Any, actor_id: str, when: str) -> bool:
        """True when a caller-trusted key with these bytes may sign as ``actor_id`` at ``when``."""
        if not self.keys or not isinstance(public_key_b64, str):
            return False
        try:
            raw = Ed25519PublicKey.from_b64(public_key_b64).raw
        except errors.AffidavitError:
            return False
        for key in self._by_raw.get(raw, ()):
            if key.actor_id is not None and key.actor_id != actor_id:
                continue
            if key.window is None:
                return True
            entry = dict(key.window)
            label = key.key_id or "pinned"
            if lifecycle_problem(entry, label, status_required=False) is None and key_valid_at(
                entry, when
            ):
                return True
        return False

    @classmethod
    def from_directory(cls, document: Any, *, source: str = "pinned directory") -> ActorTrust:
        """A pinned key directory, either shape (docs/formats.md §4), checked strictly.

        Raises:
            ``usage.invalid``: not a directory, or an entry lacks ``actor_id``/``issued_at`` or has
                an unparseable time.
            ``key.*``: an entry's ``public_key_base64`` is not a valid Ed25519 key.
        """
        entries = directory_entries(document)
        if not entries:
            raise errors.UsageError(f"{source}: not a key directory with at least one entry")
        keys = []
        for key_id, entry in entries.items():
            keys.append(_pinned(key_id, entry, source))
        return cls(keys)


_WINDOW_FIELDS: Final = ("issued_at", "revoked_at", "status")


def _pinned(key_id: str, entry: Any, source: str) -> TrustedActorKey:
    where = f"{source}: entry {key_id!r}"
    if not isinstance(entry, Mapping):
        raise errors.UsageError(f"{where} is not an object")
    actor = entry.get("actor_id")
    if not isinstance(actor, str) or not actor:
        raise errors.UsageError(f"{where} has no actor_id")
    if parse_instant(entry.get("issued_at")) is None:
        raise errors.UsageError(f"{where}: issued_at is not an RFC 3339 time with a zone")
    revoked = entry.get("revoked_at")
    if revoked is not None and parse_instant(revoked) is None:
        raise errors.UsageError(f"{where}: revoked_at is not null or an RFC 3339 time")
    value = entry.get("public_key_base64")
    if not isinstance(value, str):
        raise errors.UsageError(f"{where} has no public_key_base64")
    key = Ed25519PublicKey.from_b64(value)
    window = tuple((name, entry[name]) for name in _WINDOW_FIELDS if name in entry)
    return TrustedActorKey(key.raw, actor, window, key_id)
