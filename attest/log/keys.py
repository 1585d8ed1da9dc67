"""The log's key history: which key signed which heads, and the rotations between them (private to
:mod:`affidavit.attest.log.transparency`; docs/adr/0011-log-key-rotation.md).

A rotation at time T closes the current key's half-open window ``[valid_from, valid_until)`` at
T and opens the new key's there; a key signs only heads dated inside its window
(``log.key_outside_window``). The rotation statement (docs/formats.md §4) is signed by the key it
replaces and countersigned by the new key, and every later head must extend the tree it hands
over. The history is verified whenever it is read (``log.key_history_invalid``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.stores.store import Connection
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519_b64
from affidavit.verify.crypto.windows import KeyWindow, parse_rfc3339
from affidavit.verify.json.forms import format_utc_fraction, is_hex64, parse_utc
from affidavit.verify.json.strict import load_object
from affidavit.verify.tlog.rotation import ROTATION_FORMAT, rotation_message

__all__ = [
    "ROTATION_FORMAT",
    "HistoryCache",
    "LogKey",
    "Rotation",
    "check_name",
    "check_rotation",
    "entry_for",
    "insert_first_key",
    "insert_rotation",
    "latest_head_time",
    "load_history",
    "rotation_time",
    "signing_entry",
]

# Printable ASCII without space or '|': a key ID is one field of the rotation message.
_NAME: Final = re.compile(r"^[\x21-\x7b\x7d\x7e]{1,200}$")
_STATEMENT_FIELDS: Final = frozenset({
    "format", "log_id", "seq", "previous_public_key", "public_key", "key_id", "valid_from",
    "tree_size", "root_hash", "signature", "new_key_signature",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class LogKey:
    """One key of the log's history, its window ``[valid_from, valid_until)`` (None: open) and
    the rotation that introduced it (None for the first key)."""

    seq: int
    key_id: str
    public_key: Ed25519PublicKey
    valid_from: str | None
    valid_until: str | None
    tree_size: int | None = None
    root_hash: str | None = None
    statement: str | None = None

    @property
    def window(self) -> KeyWindow:
        """The window as instants."""
        return KeyWindow(_instant(self.valid_from), _instant(self.valid_until))

    def to_json(self) -> dict[str, Any]:
        """A trusted-key document with its window (:mod:`affidavit.verify.crypto.windows`),
        plus the rotation statement that introduced it (``null`` for the first key)."""
        document: dict[str, Any] = {
            "key_id": self.key_id,
            "public_key_base64": self.public_key.b64,
            "algorithm": "Ed25519",
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
        }
        document["rotation"] = None if self.statement is None else json.loads(self.statement)
        return document


def _instant(text: str | None) -> datetime | None:
    return None if text is None else parse_rfc3339(text)


def key_label(key: SigningKey) -> str:
    """The key ID a log records for ``key``: its own label, else the first 16 hex digits of
    SHA-256 of the public key."""
    return key.key_id or hashlib.sha256(key.public_key.raw).hexdigest()[:16]


def check_name(key_id: str) -> None:
    """A key ID must be 1-200 printable ASCII characters without space or ``|``.

    Raises:
        ``log.rotation_invalid``.
    """
    if not _NAME.fullmatch(key_id):
        raise LogError(
            "log.rotation_invalid",
            f"key ID {key_id!r} must be 1-200 printable ASCII characters without space or '|'",
        )


@dataclass(frozen=True, slots=True)
class Rotation:
    """What a rotation statement says (docs/formats.md §4)."""

    log_id: str
    seq: int
    previous: Ed25519PublicKey
    public: Ed25519PublicKey
    key_id: str
    valid_from: str
    tree_size: int
    root_hash: str

    def message(self) -> bytes:
        """The bytes both signatures of the statement cover (the clients' one spelling)."""
        fields = self.to_json()
        del fields["format"]
        return rotation_message(**fields)

    def to_json(self) -> dict[str, Any]:
        """The statement's fields, signatures aside."""
        return {
            "format": ROTATION_FORMAT,
            "log_id": self.log_id,
            "seq": self.seq,
            "previous_public_key": self.previous.b64,
            "public_key": self.public.b64,
            "key_id": self.key_id,
            "valid_from": self.valid_from,
            "tree_size": self.tree_size,
            "root_hash": self.root_hash,
        }

    def sign(self, old: SigningKey, new: SigningKey) -> str:
        """The statement (compact JSON) signed by ``old`` and countersigned by ``new``."""
        message = self.message()
        document = {
            **self.to_json(),
            "signature": old.sign_b64(message),
            "new_key_signature": new.sign_b64(message),
        }
        return json.dumps(document, separators=(",", ":"))


def insert_first_key(db: Connection, key_id: str, public_key: Ed25519PublicKey) -> None:
    """Row 0 of a new log's history (valid from the start), in the caller's transaction."""
    db.execute(
        "INSERT INTO log_keys(seq, key_id, public_key) VALUES (0, $1, $2)", (key_id, public_key.b64)
    )


def insert_rotation(db: Connection, entry: LogKey) -> None:
    """Append a rotation's row, in the caller's transaction."""
    db.execute(
        "INSERT INTO log_keys(seq, key_id, public_key, valid_from, tree_size, root_hash, "
        "statement) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        (
            entry.seq,
            entry.key_id,
            entry.public_key.b64,
            entry.valid_from,
            entry.tree_size,
            entry.root_hash,
            entry.statement,
        ),
    )


class HistoryCache:
    """The history verified last, and the rows and current key it was verified from."""

    __slots__ = ("history", "source")

    def __init__(self) -> None:
        self.source: object = None
        self.history: tuple[LogKey, ...] = ()


def load_history(
    db: Connection,
    path: Path | str,
    log_id: str,
    meta: dict[str, str],
    cache: HistoryCache | None = None,
) -> list[LogKey]:
    """The verified key history, oldest first; its last key is the log's current key.

    Raises:
        ``log.key_history_invalid``: rows missing or out of order, a statement that is malformed,
            not about its row, or not signed by the key before it (and by its own key), windows that
            do not follow each other, or a current key that is not the one in ``log_meta``.
    """
    rows = db.execute(
        "SELECT seq, key_id, public_key, valid_from, tree_size, root_hash, statement "
        "FROM log_keys ORDER BY seq"
    ).fetchall()
    source = (tuple(rows), meta.get("public_key"), meta.get("key_id"))
    if cache is not None and cache.source == source:
        return list(cache.history)
    history: list[LogKey] = []
    for position, row in enumerate(rows):
        seq, key_id, public, valid_from, tree_size, root_hash, statement = row
        if seq != position:
            raise _invalid(path, f"key #{position} is missing")
        key = _public_key(path, seq, public)
        if seq == 0:
            if valid_from is not None or statement is not None:
                raise _invalid(path, "the first key has a rotation record")
            history.append(LogKey(0, str(key_id), key, None, None))
            continue
        previous = history[-1]
        entry = LogKey(
            seq, str(key_id), key, valid_from, None, tree_size, root_hash, str(statement)
        )
        _check_statement(path, log_id, previous, entry)
        history[-1] = replace(previous, valid_until=entry.valid_from)
        history.append(entry)
    if not history:
        raise _invalid(path, "the log has no key history")
    current = history[-1]
    if meta.get("public_key") != current.public_key.b64 or meta.get("key_id") != current.key_id:
        raise _invalid(path, "the log's current key is not the last key of its history")
    if cache is not None:
        cache.source, cache.history = source, tuple(history)
    return history


def _check_statement(path: Path | str, log_id: str, previous: LogKey, entry: LogKey) -> None:
    """``entry``'s rotation statement: well formed, about exactly this row, signed by both
    keys, and starting after the previous key's window began."""
    where = f"rotation #{entry.seq}"
    start, previous_start = _instant(entry.valid_from), _instant(previous.valid_from)
    size = entry.tree_size
    if (
        start is None
        or not isinstance(size, int)
        or size < 0
        or not is_hex64(entry.root_hash)
        or (previous_start is not None and start <= previous_start)
    ):
        raise _invalid(path, f"{where}: its window or tree is malformed")
    try:
        document = load_object((entry.statement or "").encode(), what="key rotation")
    except errors.ParseError as e:
        raise _invalid(path, f"{where}: {e.code}: {e.message}") from e
    rotation = Rotation(
        log_id,
        entry.seq,
        previous.public_key,
        entry.public_key,
        entry.key_id,
        str(entry.valid_from),
        size,
        str(entry.root_hash),
    )
    if set(document) != _STATEMENT_FIELDS or any(
        document[name] != value or type(document[name]) is not type(value)
        for name, value in rotation.to_json().items()
    ):
        raise _invalid(path, f"{where}: the statement is not about this key row")
    message = rotation.message()
    for signer, field in ((previous, "signature"), (entry, "new_key_signature")):
        value = document[field]
        try:
            if not isinstance(value, str):
                raise errors.SignatureError("signature.malformed", f"{field} is not a string")
            verify_ed25519_b64(signer.public_key, message, value)
        except errors.AffidavitError as e:
            raise _invalid(path, f"{where}: {field} is not by key #{signer.seq} ({e.code})") from e


def _public_key(path: Path | str, seq: int, value: object) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_b64(str(value))
    except errors.AffidavitError as e:
        raise _invalid(path, f"key #{seq}: {e.code}") from e


def _invalid(path: Path | str, reason: str) -> LogError:
    return LogError(
        "log.key_history_invalid",
        f"{path}: the log's key history does not verify: {reason}; restore the database",
    )


def entry_for(history: Sequence[LogKey], public_key: Ed25519PublicKey) -> LogKey | None:
    """The history entry of ``public_key``, or None."""
    return next((e for e in history if e.public_key.raw == public_key.raw), None)


def signing_entry(
    history: Sequence[LogKey], key: SigningKey, stamp: str, what: str, path: Path | str
) -> LogKey:
    """The history entry of ``key``, which signs a head dated ``stamp``.

    Raises:
        ``log.key_mismatch``: not a key of this log.
        ``log.key_outside_window``: ``stamp`` is outside the key's window.
    """
    entry = entry_for(history, key.public_key)
    if entry is None:
        raise LogError(
            "log.key_mismatch",
            f"the signing key ({key.public_key.b64}) is not a key of this log "
            f"(current: {history[-1].public_key.b64})",
        )
    moment = parse_utc(stamp)
    if moment is not None and entry.window.contains(moment):
        return entry
    holder = next((e for e in history if moment is not None and e.window.contains(moment)), None)
    hint = f"; key {holder.key_id!r} signs heads dated then" if holder is not None else ""
    raise LogError(
        "log.key_outside_window",
        f"{path}: key {entry.key_id!r} is valid [{entry.valid_from or '-inf'}, "
        f"{entry.valid_until or '+inf'}) and may not sign a {what} dated {stamp}{hint}",
        details={"key_id": entry.key_id, "timestamp": stamp},
    )


def latest_head_time(db: Connection) -> datetime | None:
    """The latest timestamp of any recorded head, compared as times (None: no head)."""
    latest: datetime | None = None
    for (text,) in db.execute("SELECT timestamp FROM log_heads"):
        moment = parse_utc(text)
        if moment is not None and (latest is None or moment > latest):
            latest = moment
    return latest


def check_rotation(
    history: Sequence[LogKey], old: SigningKey, new: SigningKey, moment: datetime, now: datetime
) -> None:
    """A rotation from ``old`` to ``new`` at ``moment`` against the history (the recorded heads
    are the caller's: :func:`latest_head_time`).

    Raises:
        ``log.key_mismatch``: ``old`` is not the current key (only it may hand the log over).
        ``log.rotation_invalid``: ``new`` (or its key ID) is already in the history; ``moment`` is
            not after the current key's ``valid_from`` (an overlap), or later than ``now``.
    """
    current = history[-1]
    if old.public_key.raw != current.public_key.raw:
        raise LogError(
            "log.key_mismatch",
            f"only the current key ({current.key_id!r}, {current.public_key.b64}) may hand "
            f"the log over; the key given is {old.public_key.b64}",
        )
    for entry in history:
        if entry.public_key.raw == new.public_key.raw or entry.key_id == new.key_id:
            raise LogError(
                "log.rotation_invalid",
                f"the new key ({new.key_id!r}) is already key #{entry.seq} of this log (same "
                "key or key ID): a key gets one window",
            )
    start = current.window.valid_from
    if start is not None and moment <= start:
        raise LogError(
            "log.rotation_invalid",
            f"a rotation at {rotation_time(moment)} would overlap the current key's window, "
            f"which begins at {current.valid_from}",
        )
    if moment > now:
        raise LogError(
            "log.rotation_invalid",
            f"a rotation at {rotation_time(moment)} is in the future (now "
            f"{rotation_time(now)}): a rotation takes effect when it is recorded",
        )


def rotation_time(at: datetime) -> str:
    """``at`` as the RFC 3339 UTC text a rotation records (fraction kept when there is one)."""
    return format_utc_fraction(at)
