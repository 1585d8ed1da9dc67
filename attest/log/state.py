"""The signed log state file: binds a log key that has signed heads to the log it signed them for.

A log whose database is lost while its key survives could be re-initialised empty under the same
key and log ID: a fork. So each head of a new size is also written, signed, beside the key
(docs/adr/0005-log-state-binding.md; the file and its signed message: docs/formats.md §4),
replaced atomically, mode 0600. A store bound to it must extend that head, else
``log.state_mismatch``. Each key keeps its own state file; a rotation starts the new key's from
the tree handed over (docs/adr/0011).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.files import atomic_write
from affidavit.attest.host import read_capped
from affidavit.attest.keyring import SigningKey
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519_b64
from affidavit.verify.json.strict import load_object

__all__ = [
    "STATE_FORMAT",
    "LogState",
    "read_state",
    "read_state_of",
    "start_state",
    "state_path",
    "write_state",
]

STATE_FORMAT: Final = "affidavit.log_state.v1"
_MAX_STATE_BYTES: Final = 16 * 1024
_FIELDS: Final = ("format", "log_id", "tree_size", "root_hash", "public_key", "signed_at")


@dataclass(frozen=True, slots=True)
class LogState:
    """The latest head a log key signed for one log (verified when read)."""

    log_id: str
    tree_size: int
    root_hash: str  # lowercase hex
    public_key: str  # b64
    signed_at: str


def state_path(key_file: str | Path, log_id: str) -> Path:
    """Where the state of log ``log_id`` signed by the key in ``key_file`` lives (beside it)."""
    key = Path(key_file)
    tag = hashlib.sha256(log_id.encode("utf-8")).hexdigest()[:16]
    return key.with_name(f"{key.name}.logstate-{tag}.json")


def _message(state: LogState) -> bytes:
    return (
        f"{STATE_FORMAT}|{state.log_id}|{state.tree_size}|{state.root_hash}|{state.signed_at}"
    ).encode()


def write_state(path: Path, key: SigningKey, state: LogState) -> None:
    """Sign ``state`` with ``key`` and replace the file at ``path`` atomically (0600, fsynced)."""
    document: dict[str, Any] = {
        "format": STATE_FORMAT,
        **asdict(state),
        "signature": key.sign_b64(_message(state)),
    }
    atomic_write(path, (json.dumps(document, indent=2) + "\n").encode(), mode=0o600)


def read_state(path: Path, public_key: Ed25519PublicKey, log_id: str) -> LogState | None:
    """The verified state at ``path``, or None when there is no such file.

    Raises:
        ``log.state_invalid``: unreadable, malformed, for another log or key, or a bad signature.
    """
    return read_state_of(path, [public_key], log_id)


def read_state_of(
    path: Path, public_keys: Sequence[Ed25519PublicKey], log_id: str
) -> LogState | None:
    """The verified state at ``path`` signed by one of ``public_keys``, or None when absent.

    Raises:
        ``log.state_invalid``: unreadable, malformed, for another log or key, or a bad signature.
    """
    try:
        data = read_capped(path, _MAX_STATE_BYTES)
    except errors.ParseError as e:
        if isinstance(e.__cause__, FileNotFoundError):
            return None
        raise LogError("log.state_invalid", f"{e.message} (the log state)") from e
    if len(data) > _MAX_STATE_BYTES:
        raise LogError("log.state_invalid", f"{path}: the log state file is too large")
    try:
        document = load_object(data, what="log state")
    except errors.ParseError as e:
        raise LogError("log.state_invalid", f"{path}: {e.code}: {e.message}") from e
    if set(document) != {*_FIELDS, "signature"} or document.get("format") != STATE_FORMAT:
        raise LogError("log.state_invalid", f"{path}: not an {STATE_FORMAT} document")
    size = document["tree_size"]
    texts = [document[name] for name in ("log_id", "root_hash", "public_key", "signed_at")]
    if (
        not isinstance(size, int)
        or isinstance(size, bool)
        or size < 0
        or not all(isinstance(v, str) for v in texts)
        or not isinstance(document["signature"], str)
    ):
        raise LogError("log.state_invalid", f"{path}: a log state field has the wrong type")
    state = LogState(**{name: document[name] for name in _FIELDS[1:]})
    public_key = next((k for k in public_keys if k.b64 == state.public_key), None)
    if state.log_id != log_id or public_key is None:
        raise LogError(
            "log.state_invalid",
            f"{path}: the log state is for log {state.log_id!r} under another key or log ID",
        )
    try:
        verify_ed25519_b64(public_key, _message(state), document["signature"])
    except errors.AffidavitError as e:
        raise LogError(
            "log.state_invalid", f"{path}: the log state is not signed by the log key ({e.code})"
        ) from e
    return state


def start_state(
    path: Path, key: SigningKey, state: LogState, root_at: Callable[[int], bytes]
) -> None:
    """Write a new key's first state (after a rotation). A state already there (a retried
    rotation) must be one the tree extends (``root_at(n)``: the root at size ``n``).

    Raises:
        ``log.state_invalid``: the file there is not a state of this log signed by ``key``.
        ``log.state_mismatch``: it records a head the tree does not extend (a fork).
    """
    existing = read_state_of(path, [key.public_key], state.log_id)
    if existing is not None:
        if existing.tree_size > state.tree_size or (
            existing.tree_size > 0 and root_at(existing.tree_size).hex() != existing.root_hash
        ):
            raise LogError(
                "log.state_mismatch",
                f"{path}: the new key already signed a head of log {state.log_id!r} at size "
                f"{existing.tree_size} that this log does not extend: refusing a fork",
                details={"tree_size": state.tree_size, "signed_size": existing.tree_size},
            )
        if existing.tree_size == state.tree_size:
            return
    write_state(path, key, state)
