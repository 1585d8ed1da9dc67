"""Signing a log's heads: RFC 6962-style signed tree heads (docs/formats.md §4) and C2SP
checkpoints (docs/formats.md §6), recorded before they are returned, and witness cosignatures
added to a recorded checkpoint.

:class:`HeadSigning` is that half of :class:`affidavit.attest.log.transparency.TransparencyLog`. A
head is signed inside a write transaction over the committed size, after the tree is proven to
extend every head signed so far (:class:`~affidavit.attest.log.binding.StateBinding`), by a key
whose window contains the head's timestamp (docs/adr/0011).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime

from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.binding import StateBinding
from affidavit.attest.log.keys import signing_entry
from affidavit.attest.log.storage import record_head
from affidavit.attest.log.tree import NodeReader, stored_size
from affidavit.attest.log.types import IssuedTreeHead, RecordedHead
from affidavit.attest.stores.store import Connection
from affidavit.verify.crypto.checkpoint import (
    NoteVerifier,
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT
from affidavit.verify.crypto.treehead import sth_message
from affidavit.verify.json.forms import format_utc

__all__ = ["HeadSigning", "format_timestamp"]


def format_timestamp(moment: datetime) -> str:
    """``moment`` as a head's timestamp (docs/formats.md §4: UTC, whole seconds).

    Raises:
        ``log.bad_timestamp``: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise LogError("log.bad_timestamp", "a tree head timestamp must be timezone-aware")
    return format_utc(moment)  # docs/formats.md §4


class HeadSigning(StateBinding):
    """Signed tree heads, checkpoints and cosigned checkpoints of the log in :attr:`store`."""

    _clock: Callable[[], datetime]
    _key: SigningKey | None

    def signed_tree_head(self, timestamp: datetime | None = None) -> IssuedTreeHead:
        """Sign, record and return the head of everything committed (docs/formats.md §4).

        ``timestamp`` defaults to the log's clock; it must be timezone-aware and is signed as UTC
        with one-second precision.

        Raises:
            ``log.no_signing_key``, ``log.bad_timestamp``.
            ``log.key_outside_window``: the key's window does not contain ``timestamp`` (after a
                rotation: the old key after T, the new key before T).
        """
        key = self._signing_key()
        stamp = format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signer = signing_entry(self.key_history(), key, stamp, "tree head", self.store.path)
            size, root = self._checked_head(db)
            head = self._record_sth(db, key, signer.key_id, size, root.hex(), stamp)
            self._advance_state(key, size, root.hex(), stamp)
        return head

    def checkpoint(self, origin: str | None = None, timestamp: datetime | None = None) -> str:
        """Sign, record and return a C2SP tlog-checkpoint signed note of everything committed.

        The body is ``origin``, the size, the b64 root (docs/formats.md §6); the one signature line
        is by the key name ``origin`` (default: the log ID). ``timestamp`` only dates the record,
        and the key's window must contain it (a checkpoint body carries no time).

        Raises:
            ``log.no_signing_key``, ``log.bad_timestamp``.
            ``usage.invalid``: an origin that is not a valid key name.
            ``log.key_outside_window``: the key's window does not contain ``timestamp``.
        """
        key = self._signing_key()
        stamp = format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signing_entry(self.key_history(), key, stamp, "checkpoint", self.store.path)
            size, root = self._checked_head(db)
            note = self._record_note(db, key, origin, size, root, stamp)
            self._advance_state(key, size, root.hex(), stamp)
        return note

    def sign_heads(
        self, origin: str | None = None, timestamp: datetime | None = None
    ) -> tuple[str, IssuedTreeHead]:
        """Sign, record and return both heads of everything committed, in one transaction: the
        C2SP checkpoint (as :meth:`checkpoint`) and the signed tree head (as
        :meth:`signed_tree_head`), over one size and root, proven once to extend every earlier
        head (docs/adr/0005). What an integration batch publishes.

        Raises:
            as :meth:`checkpoint` and :meth:`signed_tree_head`.
        """
        key = self._signing_key()
        stamp = format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signer = signing_entry(self.key_history(), key, stamp, "tree head", self.store.path)
            size, root = self._checked_head(db)
            note = self._record_note(db, key, origin, size, root, stamp)
            head = self._record_sth(db, key, signer.key_id, size, root.hex(), stamp)
            self._advance_state(key, size, root.hex(), stamp)
        return note, head

    def _record_note(  # noqa: PLR0917 - the head's parts
        self,
        db: Connection,
        key: SigningKey,
        origin: str | None,
        size: int,
        root: bytes,
        stamp: str,
    ) -> str:
        """The checkpoint of ``size`` and ``root`` signed by ``key`` under the name ``origin``
        (default: the log ID), recorded dated ``stamp``."""
        name = origin if origin is not None else self.log_id
        body = checkpoint_body(name, size, root)  # docs/formats.md §6, c2sp.org/tlog-checkpoint
        key_id = key_id_c2sp(name, key.public_key.raw)
        note = format_note(body, [note_signature_line(name, key_id, key.sign(body.encode()))])
        record_head(db, RecordedHead(0, "checkpoint", size, root.hex(), stamp, note))
        return note

    def _record_sth(  # noqa: PLR0917 - the head's parts
        self, db: Connection, key: SigningKey, key_id: str, size: int, root_hex: str, stamp: str
    ) -> IssuedTreeHead:
        """The signed tree head of ``size`` and ``root_hex`` dated ``stamp``, recorded."""
        message = sth_message(self.log_id, size, root_hex, stamp)  # docs/formats.md §4
        head = IssuedTreeHead(self.log_id, size, root_hex, stamp, key.sign_b64(message), key_id)
        document = json.dumps(head.to_json(), separators=(",", ":"))
        record_head(db, RecordedHead(0, "sth", size, root_hex, stamp, document))
        return head

    def add_cosignatures(self, note: str, lines: Sequence[str]) -> str:
        """Record ``note`` (a checkpoint of this log) again with witness signature ``lines`` added.

        The caller has verified the lines against the witness keys it trusts (tlog-witness: "it
        can move the valid signatures to its own view of the checkpoint"); this checks that the
        note is this log's: signed by one of its keys (a checkpoint signed before a rotation stays
        the log's), its size within the log and its root the log's root at that size. Lines
        already on the note are not added twice. Returns the new note.

        Raises:
            ``checkpoint.*``: the note is malformed or not signed by the log's key.
            ``log.checkpoint_foreign``: the size or root is not this log's.
        """
        parsed = parse_note(note)
        name = parsed.signatures[0].name if parsed.signatures else self.log_id
        verifiers = [
            NoteVerifier(name, key_id_c2sp(name, entry.public_key.raw), entry.public_key)
            for entry in self.key_history()
        ]
        checkpoint = verify_checkpoint(note, verifiers).checkpoint
        with self.store.write() as db:
            size, wanted = stored_size(db), checkpoint.tree_size
            if wanted > size or checkpoint.root_hash != (
                NodeReader(db, self.store.path).range_hash(0, wanted) if wanted else EMPTY_ROOT
            ):
                raise LogError(
                    "log.checkpoint_foreign",
                    f"checkpoint of size {checkpoint.tree_size} is not a tree head of this log",
                )
            present = set(note.splitlines(keepends=True))
            added = [line for line in lines if line not in present]
            cosigned = note + "".join(dict.fromkeys(added))
            stamp = format_timestamp(self._clock())
            root_hex = checkpoint.root_hash.hex()
            head = RecordedHead(0, "checkpoint", checkpoint.tree_size, root_hex, stamp, cosigned)
            record_head(db, head)
        return cosigned

    def _signing_key(self) -> SigningKey:
        if self._key is None:
            raise LogError(
                "log.no_signing_key", f"{self.store.path}: opened without the log's signing key"
            )
        return self._key
