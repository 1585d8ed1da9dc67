"""The AiGentsy signed tree head (docs/formats.md §4): the head a ProofPack bundle is anchored to.

>>> sth_message("log-1", 3, "ab" * 32, "2026-01-01T00:00:00Z")[:16]
b'log-1|3|abababab'

C2SP checkpoints are :mod:`affidavit.verify.crypto.checkpoint`'s. On the ``verify bundle`` path,
so its record is a ``NamedTuple``, not a dataclass (docs/adr/0003).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.json.forms import UTC_TIMESTAMP, is_hex64

if TYPE_CHECKING:
    from affidavit.verify.crypto.windows import KeyWindow

__all__ = ["SignedTreeHead", "parse_sth", "sth_message", "verify_sth"]


class SignedTreeHead(NamedTuple):
    """A tree head whose fields were parsed strictly (and, from :func:`verify_sth`, verified)."""

    log_id: str
    tree_size: int
    root_hash: str  # 64 lowercase hex
    timestamp: str
    key_id: str | None
    signature: bytes
    algorithm: str = "Ed25519"

    @property
    def root(self) -> bytes:
        return bytes.fromhex(self.root_hash)

    def message(self) -> bytes:
        return sth_message(self.log_id, self.tree_size, self.root_hash, self.timestamp)


def sth_message(log_id: str, tree_size: int, root_hash: str, timestamp: str) -> bytes:
    """The bytes an AiGentsy tree-head signature covers (docs/formats.md §4)."""
    return f"{log_id}|{tree_size}|{root_hash}|{timestamp}".encode()


def parse_sth(unverified_sth: Mapping[str, Any]) -> SignedTreeHead:
    """Parse a signed tree head strictly (docs/formats.md §4: ``algorithm`` absent or Ed25519,
    no ``|`` or control character in ``log_id``); the signature is NOT checked (:func:`verify_sth`).

    Raises:
        ``treehead.malformed``: a field is missing, of the wrong type or form.
    """
    if not isinstance(unverified_sth, Mapping):
        raise errors.SignatureError("treehead.malformed", "signed tree head is not an object")
    log_id = _field(unverified_sth, "log_id", str)
    if not log_id or "|" in log_id or any(ord(c) < 0x20 for c in log_id):
        raise errors.SignatureError(
            "treehead.malformed", "log_id must be non-empty, without '|' or control characters"
        )
    tree_size = _field(unverified_sth, "tree_size", int)
    if isinstance(tree_size, bool) or tree_size < 0:
        raise errors.SignatureError(
            "treehead.malformed", "tree_size must be a non-negative integer"
        )
    root_hash = _field(unverified_sth, "root_hash", str)
    if not is_hex64(root_hash):
        raise errors.SignatureError(
            "treehead.malformed", "root_hash must be 64 lowercase hex characters"
        )
    timestamp = _field(unverified_sth, "timestamp", str)
    if not UTC_TIMESTAMP.fullmatch(timestamp):  # docs/formats.md §4: the form only
        raise errors.SignatureError(
            "treehead.malformed", "timestamp must have the form YYYY-MM-DDTHH:MM:SSZ"
        )
    algorithm = unverified_sth.get("algorithm", "Ed25519")
    if algorithm != "Ed25519":
        raise errors.SignatureError(
            "treehead.malformed", f"unsupported tree-head algorithm {algorithm!r}"
        )
    key_id = unverified_sth.get("key_id")
    if key_id is not None and not isinstance(key_id, str):
        raise errors.SignatureError("treehead.malformed", "key_id must be a string")
    try:
        signature = decode_signature_b64(_field(unverified_sth, "signature", str))
    except errors.SignatureError as e:
        if e.code != "signature.malformed":
            raise
        raise errors.SignatureError("treehead.malformed", f"tree-head {e.message}") from None
    return SignedTreeHead(log_id, tree_size, root_hash, timestamp, key_id, signature)


def verify_sth(
    unverified_sth: Mapping[str, Any],
    key: Ed25519PublicKey,
    *,
    windows: Sequence[KeyWindow] = (),
) -> SignedTreeHead:
    """Parse a signed tree head and verify its Ed25519 signature under ``key`` and, given the
    key's validity ``windows`` (:mod:`~affidavit.verify.crypto.windows`), its timestamp.

    Raises:
        ``treehead.malformed``: see :func:`parse_sth` (exit 2).
        ``treehead.signature_bad``: the signature does not verify (exit 1).
        ``treehead.key_outside_window``: the head is dated outside every window (exit 1).
    """
    sth = parse_sth(unverified_sth)
    try:
        verify_ed25519(key, sth.message(), sth.signature)
    except errors.SignatureError as e:
        if e.code != "signature.bad":
            raise
        raise errors.SignatureError(
            "treehead.signature_bad",
            f"tree head of {sth.log_id!r} at size {sth.tree_size}: {e.message}",
            details={"log_id": sth.log_id, "tree_size": sth.tree_size},
        ) from None
    if windows:
        from affidavit.verify.crypto.windows import check_head_time  # noqa: PLC0415 - only windowed keys (ADR 0003)

        check_head_time(
            windows, sth.timestamp, key_b64=key.b64, log_id=sth.log_id, tree_size=sth.tree_size
        )
    return sth


def _field(document: Mapping[str, Any], name: str, kind: type) -> Any:
    if name not in document:
        raise errors.SignatureError("treehead.malformed", f"signed tree head has no {name}")
    value = document[name]
    if not isinstance(value, kind):
        raise errors.SignatureError("treehead.malformed", f"{name} must be a {kind.__name__}")
    return value
