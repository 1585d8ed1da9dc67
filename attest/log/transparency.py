"""An append-only RFC 6962 / RFC 9162 transparency log in SQLite.

>>> import tempfile, pathlib, datetime
>>> from affidavit.attest.keyring import derive_test_key
>>> key = derive_test_key("log doctest")             # TEST-ONLY key
>>> db = pathlib.Path(tempfile.mkdtemp()) / "log.db"
>>> log = TransparencyLog.create(db, key, "example.com/log")
>>> log.append([b"a", b"b", b"c"])
[0, 1, 2]
>>> proof = log.inclusion_proof(1)
>>> from affidavit.verify.crypto.merkle import verify_inclusion
>>> verify_inclusion(proof.leaf_hash, 1, 3, list(proof.path), proof.root_hash)
>>> when = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
>>> log.signed_tree_head(when).to_json()["timestamp"]
'2025-01-02T03:04:05Z'
>>> log.close()

One class, read top to bottom (docs/adr/0024). Any subtree hash is one stored node
(:mod:`affidavit.attest.log.storage`) or a fold of at most log2(n) of them, so proofs, roots and
heads cost O(log n) point reads. An append returns after COMMIT. A head is signed inside a write
transaction, after the tree is proven to extend every head signed so far and the signed state
file beside the key (docs/adr/0005), and recorded before it is returned.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Final, NamedTuple

from affidavit.attest.errors import LogError
from affidavit.attest.host import utc_now
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log import keys, sequencing, storage, tree
from affidavit.attest.log.keys import LogKey
from affidavit.attest.log.sequencing import MAX_INTEGRATE, LogStatus, Sequenced
from affidavit.attest.log.state import LogState, read_state_of, start_state, write_state
from affidavit.attest.log.types import (
    ConsistencyProof,
    InclusionProof,
    IssuedTreeHead,
    RecordedHead,
)
from affidavit.attest.stores.store import Connection, Store
from affidavit.verify.crypto.checkpoint import (
    NoteVerifier,
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import (
    EMPTY_ROOT,
    consistency_ranges,
    inclusion_ranges,
    leaf_hash,
    node_hash,
    verify_consistency,
)
from affidavit.verify.crypto.treehead import sth_message
from affidavit.verify.errors import AffidavitError
from affidavit.verify.json.forms import format_utc

__all__ = [
    "MAX_ENTRIES_PER_CALL",
    "MAX_INTEGRATE",
    "ConsistencyProof",
    "InclusionProof",
    "IssuedTreeHead",
    "LogKey",
    "LogStatus",
    "RecordedHead",
    "Sequenced",
    "TransparencyLog",
    "format_timestamp",
]

MAX_ENTRIES_PER_CALL: Final = 1000
_LOG_ID = re.compile(r"^[\x21-\x7b\x7d\x7e]{1,200}$")  # printable ASCII, no space, no '|'


def format_timestamp(moment: datetime) -> str:
    """``moment`` as a head's timestamp (docs/formats.md §4: UTC, whole seconds).

    Raises:
        ``log.bad_timestamp``: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise LogError("log.bad_timestamp", "a tree head timestamp must be timezone-aware")
    return format_utc(moment)  # docs/formats.md §4


class TransparencyLog:
    """An append-only Merkle log in one database; build it with :meth:`create` or :meth:`open`."""

    def __init__(
        self,
        store: Store,
        *,
        key: SigningKey | None = None,
        clock: Callable[[], datetime] = utc_now,
        owns_store: bool = True,
        state_file: Path | None = None,
    ) -> None:
        """Wrap an open store that holds a log; prefer :meth:`open`.

        Raises:
            ``log.not_found``: the store holds no log.
            ``log.key_history_invalid``: the recorded key history does not verify.
            ``log.key_mismatch``: ``key`` is not a key of the log.
            ``log.state_invalid``, ``log.state_mismatch``: ``state_file`` is bad, or not extended.
        """
        self.store = store
        self._clock = clock
        self._owns_store = owns_store
        self.state_file = state_file
        store.migrate(storage.COMPONENT, storage.MIGRATIONS)
        meta = self._meta()
        if "log_id" not in meta:
            raise LogError("log.not_found", f"{store.path}: no transparency log here")
        self.log_id: str = meta["log_id"]
        self.public_key = Ed25519PublicKey.from_b64(meta["public_key"])  # the current key
        self.key_id: str = meta["key_id"]
        self.key_path: str | None = meta.get("key_path")
        self._key: SigningKey | None = None
        self._verified = keys.HistoryCache()
        # (write transaction serial, next index): sequence() in the same transaction asks once
        self._next: tuple[int, int] | None = None
        # the state file last read, by stat and the keys it was checked against
        self._state_seen: tuple[tuple[object, ...], LogState | None] | None = None
        self.key_history()  # verified now: a log whose history does not verify is not opened
        if key is not None:
            self.set_key(key)
        if state_file is not None:
            self._check_state()

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | Path | Store,
        key: SigningKey,
        log_id: str,
        *,
        key_path: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        state_file: Path | None = None,
    ) -> TransparencyLog:
        """Create an empty log in the database at ``path`` (made if absent), signed by ``key``.

        ``log_id`` is signed into every head, so it holds no ``|`` (the STH separator) or
        whitespace. ``key_path`` is remembered for the CLI. An existing ``state_file``
        (:func:`affidavit.attest.log.state.state_path`) means the key signed heads of this log
        elsewhere, and a new empty log would fork it.

        Raises:
            ``log.bad_log_id``, ``log.exists``, ``store.unreadable``, ``log.state_mismatch``.
        """
        if not _LOG_ID.fullmatch(log_id):
            raise LogError("log.bad_log_id", f"invalid log ID {log_id!r}")
        if state_file is not None and state_file.exists():
            if cls._holds(path, log_id, key):  # an existing log is not a fork
                raise LogError(
                    "log.exists",
                    f"{path}: log {log_id!r} already exists there under this key; nothing to"
                    " create (append to it, or give init a new DB and log ID)",
                    details={"state_file": str(state_file)},
                )
            raise LogError(
                "log.state_mismatch",
                f"the key already signed heads of log {log_id!r} (see {state_file}); "
                "refusing to start a new, empty log under the same key and log ID (a fork): "
                "restore the log's database",
                details={"state_file": str(state_file)},
            )
        store, owns = storage.store_for(path, create=True)
        try:
            store.migrate(storage.COMPONENT, storage.MIGRATIONS)
            key_id = keys.key_label(key)
            meta = {"log_id": log_id, "public_key": key.public_key.b64, "key_id": key_id}
            if key_path is not None:
                meta["key_path"] = key_path
            with store.write() as db:
                storage.insert_meta(db, store.path, meta)
                keys.insert_first_key(db, key_id, key.public_key)
            return cls(store, key=key, clock=clock, owns_store=owns, state_file=state_file)
        except BaseException:
            if owns:
                store.close()
            raise

    @classmethod
    def _holds(cls, path: str | Path | Store, log_id: str, key: SigningKey) -> bool:
        """Whether ``path`` already holds the log ``log_id`` under ``key`` (read only)."""
        if not isinstance(path, Store) and not os.path.isfile(path):
            return False
        try:
            with cls.open(path) as existing:
                return existing.log_id == log_id and existing.public_key == key.public_key
        except AffidavitError:
            return False

    @classmethod
    def open(
        cls,
        path: str | Path | Store,
        key: SigningKey | None = None,
        *,
        clock: Callable[[], datetime] = utc_now,
        state_file: Path | None = None,
    ) -> TransparencyLog:
        """Open an existing log; ``key`` enables signing. With ``state_file`` the store must
        extend the head recorded there (and signing keeps it current).

        Raises:
            ``store.missing``, ``store.unreadable``, ``log.not_found``, ``log.key_mismatch``,
                ``log.state_invalid``, ``log.state_mismatch``.
        """
        store, owns = storage.store_for(path, create=False)
        try:
            return cls(store, key=key, clock=clock, owns_store=owns, state_file=state_file)
        except BaseException:
            if owns:
                store.close()
            raise

    def set_key(self, key: SigningKey) -> None:
        """Sign heads with ``key`` from now on (an earlier key signs only inside its window).

        Raises:
            ``log.key_mismatch``: it is not a key of this log.
        """
        if keys.entry_for(self.key_history(), key.public_key) is None:
            raise LogError(
                "log.key_mismatch",
                f"the signing key ({key.public_key.b64}) is not this log's key "
                f"({self.public_key.b64})",
            )
        self._key = key

    def close(self) -> None:
        """Close the database (when this log opened it)."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> TransparencyLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- appending ------------------------------------------------------------------------------

    def append(self, leaf_data: Sequence[bytes]) -> list[int]:
        """Append leaves (RFC 9162 §2.1.1) in one transaction, durable on return; returns
        their indexes."""
        return self._append([leaf_hash(bytes(data)) for data in leaf_data], leaf_data)

    def append_leaf_hashes(self, hashes: Sequence[bytes]) -> list[int]:
        """Append precomputed 32-byte leaf hashes (no entry data kept); returns their indexes.

        Raises:
            ``log.bad_leaf_hash``: a hash is not 32 bytes.
        """
        for position, value in enumerate(hashes):
            if not isinstance(value, bytes | bytearray) or len(value) != 32:
                raise LogError(
                    "log.bad_leaf_hash",
                    f"leaf hash #{position} is not 32 bytes",
                    details={"position": position},
                )
        return self._append([bytes(h) for h in hashes], None)

    def _append(self, hashes: list[bytes], data: Sequence[bytes] | None) -> list[int]:
        if not hashes:
            return []
        self._next = None  # the next index moves with the tree
        with self.store.write() as db:
            sequencing.integrate_all(db, self.store.path)  # they keep their indexes: first
            first = tree.stored_size(db)
            edge = tree.frontier(db, self.store.path, first)
            rows = tree.extend(edge, first, hashes)  # RFC 9162 §2.1.1, complete subtrees only
            storage.insert_nodes(db, self.store.path, rows)
            if data is not None:
                storage.insert_entries(db, first, data)
        return list(range(first, first + len(hashes)))

    # -- sequencing (attest/log/sequencing.py) --------------------------------------------------

    def sequence(self, entries: Sequence[bytes]) -> list[Sequenced]:
        """Sequence ``entries`` durably, in one transaction (or the caller's): each gets the next
        index, or its first index when its leaf hash is in the log already. They join the tree
        at the next :meth:`integrate` (or :meth:`append`)."""
        with self.store.write() as db:
            serial = self.store.serial
            known = self._next[1] if self._next is not None and self._next[0] == serial else None
            placed = sequencing.sequence_entries(db, entries, known)
            created = [p.index + 1 for p in placed if p.created]
            if created or known is not None:  # the next index, for this transaction
                self._next = (serial, max([*created, known or 0]))
            return placed

    def integrate(self, limit: int = MAX_INTEGRATE) -> tuple[int, int]:
        """Integrate up to ``limit`` sequenced entries into the tree; returns ``(old size, new
        size)``. No head is signed here.

        Raises:
            ``log.integrity``: the sequenced entries do not continue the tree (nothing integrated).
        """
        with self.store.write() as db:
            return sequencing.integrate_pending(db, self.store.path, limit)

    def status(self) -> LogStatus:
        """The size, next index and largest checkpoint size, in one statement."""
        rows = self.store.query(sequencing.STATUS_SQL)
        return sequencing.status_of(rows[0] if rows else None)

    @property
    def next_index(self) -> int:
        """The index the next sequenced entry gets."""
        with self.store.read() as db:
            return sequencing.next_index(db)

    # -- reading and proofs (RFC 9162 §2.1.3, §2.1.4) ------------------------------------------

    @property
    def size(self) -> int:
        """The number of committed leaves (one statement: :meth:`Store.query`)."""
        rows = self.store.query("SELECT max(idx) FROM log_nodes WHERE level = 0")
        return 0 if not rows or rows[0][0] is None else int(rows[0][0]) + 1

    def latest_signed(self) -> tuple[RecordedHead | None, int]:
        """The latest copy of the largest checkpoint recorded (or None) and the tree's size, in
        one statement."""
        rows = self.store.query(
            "SELECT (SELECT max(idx) FROM log_nodes WHERE level = 0), seq, kind, tree_size, "
            "root_hash, timestamp, document FROM (SELECT 1 AS one) AS anchor LEFT JOIN "
            "(SELECT seq, kind, tree_size, root_hash, timestamp, document FROM log_heads "
            "WHERE kind = 'checkpoint' ORDER BY tree_size DESC, seq DESC LIMIT 1) AS head ON 1 = 1"
        )
        top, *head = rows[0]
        size = 0 if top is None else int(top) + 1
        if head[0] is None:
            return None, size
        return storage.head_row(head), size

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (default: all), RFC 9162 §2.1.1.

        Raises:
            ``log.size_out_of_range``: ``size`` is negative or beyond the log.
        """
        with self.store.read() as db:
            n = tree.check_size(db, size)
            return tree.NodeReader(db, self.store.path).range_hash(0, n)

    def leaf_hash(self, index: int) -> bytes:
        """The leaf hash of leaf ``index``.

        Raises:
            ``log.index_out_of_range``: no such leaf.
        """
        with self.store.read() as db:
            tree.check_index(index, tree.stored_size(db))
            return tree.NodeReader(db, self.store.path).node(0, index)

    def leaf(self, index: int) -> bytes:
        """The data of leaf ``index``.

        Raises:
            ``log.index_out_of_range``: no such leaf.
            ``log.no_entry_data``: the leaf was appended by hash only.
        """
        with self.store.read() as db:
            tree.check_index(index, tree.stored_size(db))
            return storage.entry_data(db, index, index + 1)[0]

    def entries(self, start: int, end: int) -> list[bytes]:
        """Leaf data of ``[start, end)``, at most :data:`MAX_ENTRIES_PER_CALL` at once.

        Raises:
            ``log.size_out_of_range``: the range is empty, reversed or beyond the log.
            ``log.range_too_large``: more than :data:`MAX_ENTRIES_PER_CALL` entries.
            ``log.no_entry_data``: a leaf in the range was appended by hash only.
        """
        if end - start > MAX_ENTRIES_PER_CALL:
            raise LogError(
                "log.range_too_large",
                f"at most {MAX_ENTRIES_PER_CALL} entries per call, asked for {end - start}",
            )
        with self.store.read() as db:
            size = tree.stored_size(db)
            if not 0 <= start < end <= size:
                raise LogError(
                    "log.size_out_of_range",
                    f"entries [{start}, {end}) are not a non-empty range within size {size}",
                )
            return storage.entry_data(db, start, end)

    def has_head(self, size: int, root: bytes) -> bool:
        """Whether ``root`` is this log's root at ``size``."""
        with self.store.read() as db:
            if size > tree.stored_size(db):
                return False
            reader = tree.NodeReader(db, self.store.path)
            return root == (reader.range_hash(0, size) if size else EMPTY_ROOT)

    def inclusion_proof(self, index: int, size: int | None = None) -> InclusionProof:
        """The inclusion proof of leaf ``index`` in the tree of ``size`` leaves (default: all).

        Raises:
            ``log.size_out_of_range``, ``log.index_out_of_range``.
        """
        with self.store.read() as db:
            n = tree.check_size(db, size)
            tree.check_index(index, n)
            reader = tree.NodeReader(db, self.store.path)
            ranges = inclusion_ranges(index, n)
            reader.prefetch([(0, index)])
            reader.prefetch_ranges([*ranges, (0, n)])  # one statement for the whole proof
            path = tuple(reader.range_hash(a, b) for a, b in ranges)
            return InclusionProof(
                leaf_index=index,
                tree_size=n,
                leaf_hash=reader.node(0, index),
                root_hash=reader.range_hash(0, n),
                path=path,
                sides=tuple("left" if a <= index else "right" for a, _ in ranges),
            )

    def inclusion_paths(self, indexes: Sequence[int], size: int) -> list[tuple[bytes, ...]]:
        """The RFC 9162 §2.1.3 inclusion paths of ``indexes`` in the tree of ``size`` leaves,
        leaf end first, with one node read for all of them.

        Raises:
            ``log.size_out_of_range``, ``log.index_out_of_range``.
        """
        with self.store.read() as db:
            n = tree.check_size(db, size)
            plans = []
            for index in indexes:
                tree.check_index(index, n)
                plans.append(inclusion_ranges(index, n))
            reader = tree.NodeReader(db, self.store.path)
            reader.prefetch_ranges(r for plan in plans for r in plan)
            return [tuple(reader.range_hash(a, b) for a, b in plan) for plan in plans]

    def consistency_proof(self, first: int, second: int | None = None) -> ConsistencyProof:
        """The consistency proof from size ``first`` to ``second`` (default: all).

        Raises:
            ``log.size_out_of_range``: a size is zero, beyond the log, or the two are out of order.
        """
        with self.store.read() as db:
            n = tree.check_size(db, second)
            if not 0 < first <= n:
                raise LogError(
                    "log.size_out_of_range",
                    f"a consistency proof needs 0 < from ({first}) <= to ({n})",
                )
            reader = tree.NodeReader(db, self.store.path)
            ranges = consistency_ranges(first, n)
            reader.prefetch_ranges([*ranges, (0, first), (0, n)])
            return ConsistencyProof(
                first_size=first,
                second_size=n,
                first_root=reader.range_hash(0, first),
                second_root=reader.range_hash(0, n),
                path=tuple(reader.range_hash(a, b) for a, b in ranges),
            )

    def recorded_head(self, kind: str, tree_size: int) -> RecordedHead | None:
        """The head of ``kind`` (``sth`` or ``checkpoint``) and ``tree_size`` recorded last, or
        None."""
        with self.store.read() as db:
            return storage.head_of_size(db, kind, tree_size)

    def largest_head(self, kind: str) -> RecordedHead | None:
        """The latest record of the largest head of ``kind`` (``log_heads_by_size``), or None."""
        with self.store.read() as db:
            return storage.largest_head(db, kind)

    def latest_checkpoint(self) -> RecordedHead | None:
        """The checkpoint recorded last (with any cosignatures), or None."""
        with self.store.read() as db:
            return storage.latest_head(db, "checkpoint")

    def heads(self, *, since_seq: int = 0, limit: int = MAX_ENTRIES_PER_CALL) -> list[RecordedHead]:
        """The heads handed out with ``seq > since_seq``, oldest first, at most ``limit``."""
        with self.store.read() as db:
            return storage.heads_after(db, since_seq, max(0, min(limit, MAX_ENTRIES_PER_CALL)))

    # -- signing heads (docs/formats.md §4, §6) ------------------------------------------------

    def signed_tree_head(self, timestamp: datetime | None = None) -> IssuedTreeHead:
        """Sign, record and return the head of everything committed (docs/formats.md §4),
        dated ``timestamp`` (default: the log's clock), signed as UTC whole seconds.

        Raises:
            ``log.no_signing_key``, ``log.bad_timestamp``.
            ``log.key_outside_window``: the key's window does not contain ``timestamp``.
        """
        with self._signing(timestamp, "tree head") as head:
            return self._record_sth(head)

    def checkpoint(self, origin: str | None = None, timestamp: datetime | None = None) -> str:
        """Sign, record and return a C2SP tlog-checkpoint of everything committed
        (docs/formats.md §6), signed under the key name ``origin`` (default: the log ID).
        ``timestamp`` only dates the record; the key's window must contain it.

        Raises:
            ``log.no_signing_key``, ``log.bad_timestamp``.
            ``usage.invalid``: an origin that is not a valid key name.
            ``log.key_outside_window``: the key's window does not contain ``timestamp``.
        """
        with self._signing(timestamp, "checkpoint") as head:
            return self._record_note(head, origin)

    def sign_heads(
        self, origin: str | None = None, timestamp: datetime | None = None
    ) -> tuple[str, IssuedTreeHead]:
        """:meth:`checkpoint` and :meth:`signed_tree_head` in one transaction, over one size
        and root proven once to extend every earlier head: what an integration batch publishes.

        Raises:
            as :meth:`checkpoint` and :meth:`signed_tree_head`.
        """
        with self._signing(timestamp, "tree head") as head:
            return self._record_note(head, origin), self._record_sth(head)

    @contextmanager
    def _signing(self, timestamp: datetime | None, what: str) -> Iterator[_Head]:
        """The head of everything committed, inside the write transaction that records it: the
        key's window checked, the tree proven to extend every earlier head; the state file
        advanced once the caller recorded it."""
        key = self._signing_key()
        stamp = format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signer = keys.signing_entry(self.key_history(), key, stamp, what, self.store.path)
            size, root = self._checked_head(db)
            yield _Head(db, key, signer.key_id, size, root.hex(), stamp)
            self._advance_state(key, size, root.hex(), stamp)

    def _record_note(self, head: _Head, origin: str | None) -> str:
        name = origin if origin is not None else self.log_id
        body = checkpoint_body(name, head.size, bytes.fromhex(head.root_hex))  # docs/formats.md §6
        key_id = key_id_c2sp(name, head.key.public_key.raw)
        signature = head.key.sign(body.encode())
        note = format_note(body, [note_signature_line(name, key_id, signature)])
        storage.record_head(
            head.db, RecordedHead(0, "checkpoint", head.size, head.root_hex, head.stamp, note)
        )
        return note

    def _record_sth(self, head: _Head) -> IssuedTreeHead:
        message = sth_message(self.log_id, head.size, head.root_hex, head.stamp)  # formats.md §4
        signature = head.key.sign_b64(message)
        issued = IssuedTreeHead(
            self.log_id, head.size, head.root_hex, head.stamp, signature, head.key_id
        )
        document = json.dumps(issued.to_json(), separators=(",", ":"))
        storage.record_head(
            head.db, RecordedHead(0, "sth", head.size, head.root_hex, head.stamp, document)
        )
        return issued

    def add_cosignatures(self, note: str, lines: Sequence[str]) -> str:
        """Record ``note``, a checkpoint of this log, again with the witness signature ``lines``
        the caller verified added once (tlog-witness: "it can move the valid signatures to its
        own view of the checkpoint"); returns it.

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
            if not self.has_head(checkpoint.tree_size, checkpoint.root_hash):
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
            storage.record_head(db, head)
        return cosigned

    def _signing_key(self) -> SigningKey:
        if self._key is None:
            raise LogError(
                "log.no_signing_key", f"{self.store.path}: opened without the log's signing key"
            )
        return self._key

    # -- integrity: the signed heads and the state file (docs/adr/0005) ------------------------

    def state(self) -> LogState | None:
        """The verified signed state beside the key (None: unbound, or none signed yet).

        Raises:
            ``log.state_invalid``: the file is malformed or not signed by a key of this log.
        """
        if self.state_file is None:
            return None
        public_keys = [entry.public_key for entry in self.key_history()]
        try:  # read again only when the file was replaced (an atomic write: a new inode)
            info = os.stat(self.state_file)
            stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
            seen: tuple[object, ...] | None = (*stamp, *(k.b64 for k in public_keys))
        except OSError:
            seen = None
        cached = self._state_seen
        if seen is not None and cached is not None and cached[0] == seen:
            return cached[1]
        state = read_state_of(self.state_file, public_keys, self.log_id)
        if seen is not None:
            self._state_seen = (seen, state)
        return state

    def _references(self, db: Connection, state: LogState | bool | None = False) -> list[Reference]:
        """The heads the tree must extend: the latest recorded, the last rotation's, the state
        file's (``state`` as read before the caller's snapshot, or False: read it now)."""
        references = []
        row = db.execute(
            "SELECT tree_size, root_hash FROM log_heads ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        if row is not None:
            references.append(Reference(int(row[0]), str(row[1]), "the latest recorded head"))
        rotated = self.key_history()[-1]  # the tree the last rotation handed over
        if rotated.tree_size is not None and rotated.root_hash is not None:
            source = f"the rotation to key {rotated.key_id!r}"
            references.append(Reference(rotated.tree_size, rotated.root_hash, source))
        if state is False:
            state = self.state()
        if isinstance(state, LogState):
            references.append(
                Reference(state.tree_size, state.root_hash, f"the signed state {self.state_file}")
            )
        return references

    def _checked_head(
        self, db: Connection, state: LogState | bool | None = False
    ) -> tuple[int, bytes]:
        """The current size and root, proven to extend every earlier head (RFC 9162 §2.1.4;
        ``state`` as :meth:`_references`).

        Raises:
            ``log.integrity``: a stored node contradicts a head this log signed.
        """
        size = tree.stored_size(db)
        reader = tree.NodeReader(db, self.store.path)
        references = self._references(db, state)
        ranges = [(0, size)]  # every node the root and the proofs from the references fold
        for ref in references:
            if 0 < ref.tree_size <= size:
                ranges += consistency_ranges(ref.tree_size, size)
        reader.prefetch_ranges(ranges)
        root = reader.range_hash(0, size)
        check_extends(reader, self.store.path, size, root, references)
        return size, root

    def _advance_state(self, key: SigningKey, size: int, root_hex: str, stamp: str) -> None:
        """Record a head of a new size in the state file (inside the head's write transaction,
        which serialises every signer)."""
        if self.state_file is None:
            return
        current = self.state()
        if current is not None and current.tree_size >= size:
            return
        state = LogState(self.log_id, size, root_hex, key.public_key.b64, stamp)
        write_state(self.state_file, key, state)

    def bind_state(self, state_file: Path) -> None:
        """Bind this log to its key's signed state file, as ``open(state_file=)`` does.

        Raises:
            ``log.state_invalid``, ``log.state_mismatch``.
        """
        self.state_file = state_file
        self._check_state()

    def _check_state(self) -> None:
        state = self.state()
        if state is None:
            return
        with self.store.read() as db:
            size = tree.stored_size(db)
            ok = size >= state.tree_size
            if ok:
                root = tree.NodeReader(db, self.store.path).range_hash(0, state.tree_size)
                ok = root.hex() == state.root_hash
        if not ok:
            raise LogError(
                "log.state_mismatch",
                f"{self.store.path}: the log key signed a head of log {self.log_id!r} at size "
                f"{state.tree_size} (root {state.root_hash[:16]}..., {self.state_file}) and this "
                f"store (size {size}) does not extend it: refusing a forked or damaged log",
                details={"tree_size": size, "signed_size": state.tree_size},
            )

    def verify_integrity(self, *, full: bool = False) -> None:
        """Check the stored tree against the latest recorded head and the state file (O(log n));
        with ``full``, also every stored node against its children and data (O(n)).

        Raises:
            ``log.integrity``: the tree contradicts a signed head, or a node is damaged.
        """
        # The state file first, then the tree in one snapshot (a state read after it could
        # cover leaves integrated since). A signer writes the state before COMMIT, so a state
        # ahead of the snapshot can still be seen: registry/startup.py checks again under lock.
        state = self.state()
        with self.store.read() as db:
            self._checked_head(db, state)
            if full:
                audit_nodes(db, self.store.path)

    # -- keys (docs/adr/0011) ---------------------------------------------------------------------

    def key_history(self) -> list[LogKey]:
        """Every key of the log with its window, oldest first, read and verified now.

        Raises:
            ``log.key_history_invalid``: the recorded history does not verify.
        """
        with self.store.read() as db:
            return keys.load_history(db, self.store.path, self.log_id, self._meta(), self._verified)

    def rotate_key(
        self,
        new_key: SigningKey,
        at: datetime | None = None,
        *,
        new_key_path: str | None = None,
        new_state_file: Path | None = None,
    ) -> LogKey:
        """Close the current key's window at ``at`` (default: now, whole seconds) and open
        ``new_key``'s there: ``[.., at)`` then ``[at, ..)``. The current key signs the rotation,
        ``new_key`` countersigns it, and this log signs with ``new_key`` afterwards.

        The rotation records the tree handed over (proven to extend every earlier head): later
        heads must extend it. The old key's state file moves to that tree and
        ``new_state_file`` starts from it (docs/adr/0005). ``new_key_path`` replaces the
        recorded key path.

        Raises:
            ``log.no_signing_key``: no key set.
            ``log.key_mismatch``: the key set is not the current key (only it may hand over).
            ``log.rotation_invalid``: ``new_key`` is already a key of the log (or its key ID is
                taken, or malformed); ``at`` is in the future, or not after the current key's
                ``valid_from`` or a head already recorded.
            ``log.bad_timestamp``: ``at`` is naive.
            ``log.integrity``, ``log.state_invalid``, ``log.state_mismatch``: as
                :meth:`signed_tree_head`, or ``new_state_file`` records a head this tree does
                not extend.
        """
        old = self._signing_key()
        # to the second, as heads are dated (docs/formats.md §4)
        moment = self._clock().replace(microsecond=0) if at is None else at
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise LogError("log.bad_timestamp", "a rotation time must be timezone-aware")
        valid_from = keys.rotation_time(moment)
        new_id = keys.key_label(new_key)
        keys.check_name(new_id)
        new_key = new_key.with_labels(key_id=new_id, publisher_id=new_key.publisher_id)
        with self.store.write() as db:
            history = self.key_history()
            keys.check_rotation(history, old, new_key, moment, self._clock())
            latest = keys.latest_head_time(db)
            if latest is not None and moment <= latest:
                raise LogError(
                    "log.rotation_invalid",
                    f"{self.store.path}: a head dated {format_utc(latest)} was already signed; "
                    f"a rotation at {valid_from} would leave it outside the window of the key "
                    "that signed it: rotate at a later time",
                )
            size, root = self._checked_head(db)
            seq, new_public = history[-1].seq + 1, new_key.public_key
            rotation = keys.Rotation(
                self.log_id, seq, old.public_key, new_public, new_id, valid_from, size, root.hex()
            )
            signature = rotation.sign(old, new_key)
            entry = LogKey(seq, new_id, new_public, valid_from, None, size, root.hex(), signature)
            keys.insert_rotation(db, entry)
            meta = {"public_key": new_public.b64, "key_id": new_id, "key_path": new_key_path}
            storage.update_meta(db, meta)
            stamp = format_timestamp(self._clock())
            if new_state_file is not None:  # first: it may refuse (a fork under the new key)
                reader = tree.NodeReader(db, self.store.path)
                state = LogState(self.log_id, size, root.hex(), new_key.public_key.b64, stamp)
                start_state(new_state_file, new_key, state, lambda n: reader.range_hash(0, n))
            self._advance_state(old, size, root.hex(), stamp)
        self.public_key, self.key_id, self.key_path = new_key.public_key, new_id, new_key_path
        self._key, self.state_file = new_key, new_state_file
        return entry

    def _meta(self) -> dict[str, str]:
        with self.store.read() as db:
            return storage.read_meta(db)


class _Head(NamedTuple):
    """A head being signed: the write transaction, the key and its ID, size, root, timestamp."""

    db: Connection
    key: SigningKey
    key_id: str
    size: int
    root_hex: str
    stamp: str


# -- integrity checks against the heads the log signed (docs/adr/0005-log-state-binding.md) ----


class Reference(NamedTuple):
    """A head the log signed earlier: its size, root (hex) and where it was recorded."""

    tree_size: int
    root_hash: str
    source: str


def check_extends(
    reader: tree.NodeReader, path: Path | str, size: int, root: bytes, references: list[Reference]
) -> None:
    """Prove the tree of ``size`` leaves and root ``root`` extends every reference head
    (RFC 9162 §2.1.4, with :func:`affidavit.verify.crypto.merkle.verify_consistency`).

    Raises:
        ``log.integrity``: a reference is larger than the tree, or the proof does not verify.
    """
    for ref in references:
        if ref.tree_size > size:
            raise LogError(
                "log.integrity",
                f"{path}: the stored tree has {size} leaves, {ref.source} covers {ref.tree_size}",
                details={"tree_size": size, "signed_size": ref.tree_size},
            )
        try:
            expected = bytes.fromhex(ref.root_hash)
        except ValueError:
            expected = b""
        if ref.tree_size == 0:
            ok = expected == EMPTY_ROOT
        else:
            proof = [reader.range_hash(a, b) for a, b in consistency_ranges(ref.tree_size, size)]
            try:  # RFC 9162 §2.1.4.2
                verify_consistency(ref.tree_size, size, proof, expected, root)
                ok = True
            except AffidavitError:
                ok = False
        if not ok:
            raise LogError(
                "log.integrity",
                f"{path}: the stored tree of size {size} does not extend {ref.source} "
                f"(size {ref.tree_size}, root {ref.root_hash[:16]}...): a stored node differs",
                details={"tree_size": size, "signed_size": ref.tree_size},
            )


def _level(db: Connection, level: int) -> Iterator[tuple[int, bytes]]:
    for index, value in db.execute(
        "SELECT idx, hash FROM log_nodes WHERE level = $1 ORDER BY idx", (level,)
    ):
        yield int(index), bytes(value)


def audit_nodes(db: Connection, path: Path | str) -> int:
    """Check every stored node against its children and every leaf against its data (RFC 9162
    §2.1.1; O(n)); returns the number of nodes checked.

    Raises:
        ``log.integrity``: a node is missing or is not the hash of what it covers.
    """
    checked = 0
    rows = db.execute(
        "SELECT e.idx, e.data, n.hash FROM log_entries e "
        "LEFT JOIN log_nodes n ON n.level = 0 AND n.idx = e.idx ORDER BY e.idx"
    )
    for index, data, stored in rows:
        if stored is None or bytes(stored) != leaf_hash(bytes(data)):
            raise _bad(path, 0, int(index))
        checked += 1
    level = 1
    while True:
        parents = _level(db, level)
        children = _level(db, level - 1)
        seen = False
        for index, value in parents:
            seen = True
            left = _next_child(children, 2 * index)
            right = _next_child(children, 2 * index + 1)
            if left is None or right is None or node_hash(left, right) != value:
                raise _bad(path, level, index)
            checked += 1
        if not seen:
            return checked
        level += 1


def _next_child(children: Iterator[tuple[int, bytes]], wanted: int) -> bytes | None:
    for index, value in children:
        if index == wanted:
            return value
        if index > wanted:
            return None
    return None


def _bad(path: Path | str, level: int, index: int) -> LogError:
    return LogError(
        "log.integrity",
        f"{path}: stored node ({level}, {index}) is not the hash of what it covers",
        details={"level": level, "index": index},
    )
