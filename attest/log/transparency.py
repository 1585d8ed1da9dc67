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

Storage: :mod:`affidavit.attest.log.storage` (tables, one row per complete subtree).

Any subtree hash a proof needs is either one stored node or (for the one ragged right edge) a fold
of at most log2(n) stored nodes, so proofs, roots and heads cost O(log n) point reads and never
recompute the tree. Reads happen inside one read transaction, so a concurrent append cannot mix two
sizes into one answer.

Durability: appends commit a batch in one ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL``
(:mod:`affidavit.attest.stores.sqlite`) and return only after COMMIT, so an acknowledged leaf is on
disk. A head is signed inside a write transaction over the committed size and recorded before it
is returned: it only ever covers durably committed leaves, and every later head extends it.

Integrity (docs/adr/0005-log-state-binding.md, :mod:`affidavit.attest.log.binding`): before a
head is signed, the tree is proven to extend every head signed so far and the signed state file
beside the key; :meth:`TransparencyLog.create` refuses to start a new log when the key already
signed heads of that log ID.

Keys (docs/adr/0011-log-key-rotation.md, :mod:`affidavit.attest.log.keys`): :meth:`rotate_key`
closes the current key's window at T and opens a new key's at T (half-open windows, no gap, no
overlap), recorded with a statement signed by the old key. A key signs a head only when the head's
timestamp is inside its window (``log.key_outside_window``); :attr:`public_key` is the current key
and :meth:`key_history` lists every key with its window.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final

from affidavit.attest._host import utc_now
from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.binding import StateBinding
from affidavit.attest.log.keys import (
    HistoryCache,
    LogKey,
    Rotation,
    check_name,
    check_rotation,
    entry_for,
    insert_first_key,
    insert_rotation,
    key_label,
    latest_head_time,
    load_history,
    rotation_time,
    signing_entry,
)
from affidavit.attest.log.sequencing import (
    MAX_INTEGRATE,
    STATUS_SQL,
    LogStatus,
    Sequenced,
    integrate_all,
    integrate_pending,
    sequence_entries,
    status_of,
)
from affidavit.attest.log.sequencing import next_index as _next_index
from affidavit.attest.log.state import LogState, start_state
from affidavit.attest.log.storage import (
    COMPONENT,
    MIGRATIONS,
    entry_data,
    head_of_size,
    heads_after,
    insert_entries,
    insert_meta,
    insert_nodes,
    largest_head,
    latest_head,
    read_meta,
    record_head,
    store_for,
    update_meta,
)
from affidavit.attest.log.tree import (
    NodeReader,
    check_index,
    check_size,
    extend,
    frontier,
    stored_size,
)
from affidavit.attest.log.types import (
    ConsistencyProof,
    InclusionProof,
    IssuedTreeHead,
    RecordedHead,
)
from affidavit.attest.stores.sqlite import Store
from affidavit.verify.crypto.checkpoint import (
    NoteVerifier,
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT, leaf_hash
from affidavit.verify.crypto.tree_ranges import consistency_ranges, inclusion_ranges
from affidavit.verify.crypto.treehead import sth_message
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
]

MAX_ENTRIES_PER_CALL: Final = 1000
_LOG_ID = re.compile(r"^[\x21-\x7b\x7d\x7e]{1,200}$")  # printable ASCII, no space, no '|'


def _format_timestamp(moment: datetime) -> str:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise LogError("log.bad_timestamp", "a tree head timestamp must be timezone-aware")
    return format_utc(moment)  # docs/formats.md §4


class TransparencyLog(StateBinding):
    """An append-only Merkle log in one SQLite database; build it with :meth:`create`/:meth:`open`.

    Append (:meth:`append`), read (:attr:`size`, :meth:`root`, :meth:`leaf`, :meth:`entries`),
    prove (:meth:`inclusion_proof`, :meth:`consistency_proof`), sign heads (:meth:`checkpoint`,
    :meth:`signed_tree_head`) and manage keys (:meth:`key_history`, :meth:`rotate_key`).
    """

    def __init__(
        self,
        store: Store,
        *,
        key: SigningKey | None = None,
        clock: Callable[[], datetime] = utc_now,
        owns_store: bool = True,
        state_file: Path | None = None,
    ) -> None:
        """Wrap an open store that already holds a log; prefer :meth:`open`.

        Raises:
            ``log.not_found``: the store holds no log.
            ``log.key_history_invalid``: the recorded key history does not verify.
            ``log.key_mismatch``: ``key`` is not a key of the log.
            ``log.state_invalid``, ``log.state_mismatch``: ``state_file`` is bad, or the store does
                not extend the head it records.
        """
        self.store = store
        self._clock = clock
        self._owns_store = owns_store
        self.state_file = state_file
        store.migrate(COMPONENT, MIGRATIONS)
        meta = self._meta()
        if "log_id" not in meta:
            raise LogError("log.not_found", f"{store.path}: no transparency log here")
        self.log_id: str = meta["log_id"]
        self.public_key = Ed25519PublicKey.from_b64(meta["public_key"])  # the current key
        self.key_id: str = meta["key_id"]
        self.key_path: str | None = meta.get("key_path")
        self._key: SigningKey | None = None
        self._verified = HistoryCache()
        # (write transaction serial, next index): sequence() in the same transaction asks once
        self._next: tuple[int, int] | None = None
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

        ``log_id`` is signed into every tree head, so it must not contain ``|`` (the STH message
        separator) or whitespace. The head's ``key_id`` is ``key.key_id`` when set, else the first
        16 hex digits of SHA-256 of the public key. ``key_path`` is remembered for the CLI.
        ``state_file`` (:func:`affidavit.attest.log.state.state_path`) binds the key to this log:
        when it already exists the key signed heads of this log ID elsewhere, and a new empty log
        would fork it.

        Raises:
            ``log.bad_log_id``, ``log.exists``, ``store.unreadable``, ``log.state_mismatch``.
        """
        if not _LOG_ID.fullmatch(log_id):
            raise LogError("log.bad_log_id", f"invalid log ID {log_id!r}")
        if state_file is not None and state_file.exists():
            raise LogError(
                "log.state_mismatch",
                f"the key already signed heads of log {log_id!r} (see {state_file}); "
                "refusing to start a new, empty log under the same key and log ID (a fork): "
                "restore the log's database",
                details={"state_file": str(state_file)},
            )
        store, owns = store_for(path, create=True)
        try:
            store.migrate(COMPONENT, MIGRATIONS)
            key_id = key_label(key)
            meta = {"log_id": log_id, "public_key": key.public_key.b64, "key_id": key_id}
            if key_path is not None:
                meta["key_path"] = key_path
            with store.write() as db:
                insert_meta(db, store.path, meta)
                insert_first_key(db, key_id, key.public_key)
            return cls(store, key=key, clock=clock, owns_store=owns, state_file=state_file)
        except BaseException:
            if owns:
                store.close()
            raise

    @classmethod
    def open(
        cls,
        path: str | Path | Store,
        key: SigningKey | None = None,
        *,
        clock: Callable[[], datetime] = utc_now,
        state_file: Path | None = None,
    ) -> TransparencyLog:
        """Open an existing log; ``key`` (checked against the log's public key) enables signing.
        With ``state_file`` the store must extend the head recorded there (and signing keeps it
        current).

        Raises:
            ``store.missing``, ``store.unreadable``, ``log.not_found``, ``log.key_mismatch``,
                ``log.state_invalid``,
            ``log.state_mismatch``.
        """
        store, owns = store_for(path, create=False)
        try:
            return cls(store, key=key, clock=clock, owns_store=owns, state_file=state_file)
        except BaseException:
            if owns:
                store.close()
            raise

    def set_key(self, key: SigningKey) -> None:
        """Use ``key`` to sign heads from now on: the current key, or an earlier key of the
        history (which signs only heads dated inside its window).

        Raises:
            ``log.key_mismatch``: it is not a key of this log.
        """
        if entry_for(self.key_history(), key.public_key) is None:
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
        """Append leaves (RFC 9162 §2.1.1 leaf hash of each) in one transaction; returns indexes.

        The leaves are durable when this returns; nothing of the batch is stored if it raises.
        """
        hashes = [leaf_hash(bytes(data)) for data in leaf_data]
        return self._append(hashes, leaf_data)

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
            integrate_all(db, self.store.path)  # sequenced entries keep their indexes: first
            first = stored_size(db)
            edge = frontier(db, self.store.path, first)
            rows = extend(edge, first, hashes)  # RFC 9162 §2.1.1, complete subtrees only
            insert_nodes(db, self.store.path, rows)
            if data is not None:
                insert_entries(db, first, data)
        return list(range(first, first + len(hashes)))

    # -- sequencing (attest/log/sequencing.py) -------------------------------------------------

    def sequence(self, entries: Sequence[bytes]) -> list[Sequenced]:
        """Sequence ``entries`` durably, in one transaction (or the caller's): each gets the next
        index, or, when its leaf hash is in the log already, its first index (deduplication).
        They join the tree at the next :meth:`integrate`; :meth:`append` integrates them first.
        """
        with self.store.write() as db:
            serial = self.store.serial
            known = self._next if self._next is not None and self._next[0] == serial else None
            placed = sequence_entries(db, entries, None if known is None else known[1])
            following = max((p.index + 1 for p in placed if p.created), default=None)
            if following is not None or known is not None:  # the next index, for this txn
                self._next = (serial, max(following or 0, known[1] if known else 0))
            return placed

    def integrate(self, limit: int = MAX_INTEGRATE) -> tuple[int, int]:
        """Integrate up to ``limit`` sequenced entries into the tree, in one transaction (or the
        caller's); returns ``(old size, new size)``. No head is signed here.

        Raises:
            ``log.integrity``: the sequenced entries do not continue the tree (nothing integrated).
        """
        with self.store.write() as db:
            return integrate_pending(db, self.store.path, limit)

    def status(self) -> LogStatus:
        """The tree's size, the next index to sequence and the largest signed checkpoint size,
        in one statement outside any transaction (:meth:`Store.query`)."""
        rows = self.store.query(STATUS_SQL)
        return status_of(rows[0] if rows else None)

    @property
    def next_index(self) -> int:
        """The index the next sequenced entry gets (the size once everything is integrated)."""
        with self.store.read() as db:
            return _next_index(db)

    # -- reading --------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of committed leaves (one statement, outside any transaction: one round
        trip on PostgreSQL; inside one, it joins it)."""
        rows = self.store.query("SELECT max(idx) FROM log_nodes WHERE level = 0")
        return 0 if not rows or rows[0][0] is None else int(rows[0][0]) + 1

    def latest_signed(self) -> tuple[RecordedHead | None, int]:
        """The checkpoint of the largest size recorded (its latest, cosigned copy), or None, and
        the tree's size, in one statement (what ``/tlog/checkpoint`` serves when they agree)."""
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
        seq, kind, tree_size, root, stamp, document = head
        return RecordedHead(
            int(seq), str(kind), int(tree_size), str(root), str(stamp), str(document)
        ), size

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (default: all), RFC 9162 §2.1.1.

        Raises:
            ``log.size_out_of_range``: ``size`` is negative or beyond the log.
        """
        with self.store.read() as db:
            n = check_size(db, size)
            return NodeReader(db, self.store.path).range_hash(0, n)

    def leaf_hash(self, index: int) -> bytes:
        """The leaf hash of leaf ``index``.

        Raises:
            ``log.index_out_of_range``: no such leaf.
        """
        with self.store.read() as db:
            check_index(index, stored_size(db))
            return NodeReader(db, self.store.path).node(0, index)

    def leaf(self, index: int) -> bytes:
        """The data of leaf ``index``.

        Raises:
            ``log.index_out_of_range``: no such leaf.
            ``log.no_entry_data``: the leaf was appended by hash only.
        """
        with self.store.read() as db:
            check_index(index, stored_size(db))
            return entry_data(db, index, index + 1)[0]

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
            size = stored_size(db)
            if not 0 <= start < end <= size:
                raise LogError(
                    "log.size_out_of_range",
                    f"entries [{start}, {end}) are not a non-empty range within size {size}",
                )
            return entry_data(db, start, end)

    # -- proofs ---------------------------------------------------------------------------------

    def inclusion_proof(self, index: int, size: int | None = None) -> InclusionProof:
        """The inclusion proof of leaf ``index`` in the tree of ``size`` leaves (default: all).

        Raises:
            ``log.size_out_of_range``, ``log.index_out_of_range``.
        """
        with self.store.read() as db:
            n = check_size(db, size)
            check_index(index, n)
            reader = NodeReader(db, self.store.path)
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
        """The RFC 9162 §2.1.3 inclusion paths of leaves ``indexes`` in the tree of ``size``
        leaves, leaf end first: one read transaction and one node read for all of them.

        Raises:
            ``log.size_out_of_range``, ``log.index_out_of_range``.
        """
        with self.store.read() as db:
            n = check_size(db, size)
            plans = []
            for index in indexes:
                check_index(index, n)
                plans.append(inclusion_ranges(index, n))
            reader = NodeReader(db, self.store.path)
            reader.prefetch_ranges(r for plan in plans for r in plan)
            return [tuple(reader.range_hash(a, b) for a, b in plan) for plan in plans]

    def consistency_proof(self, first: int, second: int | None = None) -> ConsistencyProof:
        """The consistency proof from size ``first`` to ``second`` (default: all).

        Needs ``0 < first <= second``.

        Raises:
            ``log.size_out_of_range``: a size is zero, beyond the log, or the two are out of order.
        """
        with self.store.read() as db:
            n = check_size(db, second)
            if not 0 < first <= n:
                raise LogError(
                    "log.size_out_of_range",
                    f"a consistency proof needs 0 < from ({first}) <= to ({n})",
                )
            reader = NodeReader(db, self.store.path)
            ranges = consistency_ranges(first, n)
            reader.prefetch_ranges([*ranges, (0, first), (0, n)])
            return ConsistencyProof(
                first_size=first,
                second_size=n,
                first_root=reader.range_hash(0, first),
                second_root=reader.range_hash(0, n),
                path=tuple(reader.range_hash(a, b) for a, b in ranges),
            )

    # -- heads ----------------------------------------------------------------------------------

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
        stamp = _format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signer = signing_entry(self.key_history(), key, stamp, "tree head", self.store.path)
            size, root = self._checked_head(db)
            root_hex = root.hex()
            message = sth_message(self.log_id, size, root_hex, stamp)
            head = IssuedTreeHead(
                log_id=self.log_id,
                tree_size=size,
                root_hash=root_hex,
                timestamp=stamp,
                signature=key.sign_b64(message),
                key_id=signer.key_id,
            )
            document = json.dumps(head.to_json(), separators=(",", ":"))
            record_head(db, RecordedHead(0, "sth", size, root_hex, stamp, document))
            self._advance_state(key, size, root_hex, stamp)
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
        name = origin if origin is not None else self.log_id
        stamp = _format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signing_entry(self.key_history(), key, stamp, "checkpoint", self.store.path)
            size, root = self._checked_head(db)
            body = checkpoint_body(name, size, root)  # docs/formats.md §6, c2sp.org/tlog-checkpoint
            key_id = key_id_c2sp(name, key.public_key.raw)
            line = note_signature_line(name, key_id, key.sign(body.encode("utf-8")))
            note = format_note(body, [line])
            record_head(db, RecordedHead(0, "checkpoint", size, root.hex(), stamp, note))
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
        name = origin if origin is not None else self.log_id
        stamp = _format_timestamp(timestamp if timestamp is not None else self._clock())
        with self.store.write() as db:
            signer = signing_entry(self.key_history(), key, stamp, "tree head", self.store.path)
            size, root = self._checked_head(db)
            root_hex = root.hex()
            body = checkpoint_body(name, size, root)  # docs/formats.md §6, c2sp.org/tlog-checkpoint
            key_id = key_id_c2sp(name, key.public_key.raw)
            note = format_note(body, [note_signature_line(name, key_id, key.sign(body.encode()))])
            message = sth_message(self.log_id, size, root_hex, stamp)  # docs/formats.md §4
            head = IssuedTreeHead(
                self.log_id, size, root_hex, stamp, key.sign_b64(message), signer.key_id
            )
            document = json.dumps(head.to_json(), separators=(",", ":"))
            record_head(db, RecordedHead(0, "checkpoint", size, root_hex, stamp, note))
            record_head(db, RecordedHead(0, "sth", size, root_hex, stamp, document))
            self._advance_state(key, size, root_hex, stamp)
        return note, head

    def recorded_head(self, kind: str, tree_size: int) -> RecordedHead | None:
        """The head of ``kind`` (``sth`` or ``checkpoint``) and exactly ``tree_size`` leaves
        recorded last, or None: what this log (or another process on its database) handed out."""
        with self.store.read() as db:
            return head_of_size(db, kind, tree_size)

    def largest_head(self, kind: str) -> RecordedHead | None:
        """The head of ``kind`` of the largest size recorded (its latest record), or None."""
        with self.store.read() as db:
            return largest_head(db, kind)

    def latest_checkpoint(self) -> RecordedHead | None:
        """The checkpoint recorded last (with the cosignatures added since, if any), or None."""
        with self.store.read() as db:
            return latest_head(db, "checkpoint")

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
            stamp = _format_timestamp(self._clock())
            root_hex = checkpoint.root_hash.hex()
            head = RecordedHead(0, "checkpoint", checkpoint.tree_size, root_hex, stamp, cosigned)
            record_head(db, head)
        return cosigned

    def heads(self, *, since_seq: int = 0, limit: int = MAX_ENTRIES_PER_CALL) -> list[RecordedHead]:
        """The heads handed out with ``seq > since_seq``, oldest first, at most ``limit``."""
        with self.store.read() as db:
            return heads_after(db, since_seq, max(0, min(limit, MAX_ENTRIES_PER_CALL)))

    # -- keys (docs/adr/0011) ---------------------------------------------------------------------

    def key_history(self) -> list[LogKey]:
        """Every key of the log with its window, oldest first (the last is :attr:`public_key`),
        read and verified now (each rotation signed by the key it replaced).

        Raises:
            ``log.key_history_invalid``: the recorded history does not verify.
        """
        with self.store.read() as db:
            return load_history(db, self.store.path, self.log_id, self._meta(), self._verified)

    def rotate_key(
        self,
        new_key: SigningKey,
        at: datetime | None = None,
        *,
        new_key_path: str | None = None,
        new_state_file: Path | None = None,
    ) -> LogKey:
        """Close the current key's window at ``at`` (default: now, whole seconds) and open
        ``new_key``'s at ``at``: ``[.., at)`` then ``[at, ..)``, no gap, no overlap. The log must
        be open with its current key (:meth:`set_key`), which signs the rotation; ``new_key``
        countersigns it.

        The rotation records the tree the old key hands over (proven to extend every head signed
        so far, RFC 9162 §2.1.4): later heads must extend it. With a bound state file the old
        key's state moves to that tree, and ``new_state_file`` (the new key's, beside it) starts
        from it, so the binding of docs/adr/0005 continues. ``new_key_path`` is recorded as the
        key path (``log head`` without ``--key``); without it the recorded path is dropped.
        Afterwards this log signs with ``new_key``.

        Raises:
            ``log.no_signing_key``: no key set.
            ``log.key_mismatch``: the key set is not the current key (only it may hand over).
            ``log.rotation_invalid``: ``new_key`` is already a key of the log (or its key ID is
                taken, or malformed); ``at`` is in the future, not after the current key's
                ``valid_from``, or not after a head already recorded (which would fall outside
                the old key's window).
            ``log.bad_timestamp``: ``at`` is naive.
            ``log.integrity``, ``log.state_invalid``, ``log.state_mismatch``: see
                :meth:`signed_tree_head`;
                ``new_state_file`` records a head this tree does not extend.
        """
        old = self._signing_key()
        # Default: now, to the second (the precision heads are signed with, docs/formats.md §4),
        # so a head signed in the same second is already the new key's.
        moment = self._clock().replace(microsecond=0) if at is None else at
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise LogError("log.bad_timestamp", "a rotation time must be timezone-aware")
        valid_from = rotation_time(moment)
        new_id = key_label(new_key)
        check_name(new_id)
        new_key = new_key.with_labels(key_id=new_id, publisher_id=new_key.publisher_id)
        with self.store.write() as db:
            history = self.key_history()
            check_rotation(history, old, new_key, moment, self._clock())
            latest = latest_head_time(db)
            if latest is not None and moment <= latest:
                raise LogError(
                    "log.rotation_invalid",
                    f"{self.store.path}: a head dated {format_utc(latest)} was already signed; "
                    f"a rotation at {valid_from} would leave it outside the window of the key "
                    "that signed it: rotate at a later time",
                )
            size, root = self._checked_head(db)
            rotation = Rotation(
                self.log_id,
                history[-1].seq + 1,
                old.public_key,
                new_key.public_key,
                new_id,
                valid_from,
                size,
                root.hex(),
            )
            entry = LogKey(
                rotation.seq,
                new_id,
                new_key.public_key,
                valid_from,
                None,
                size,
                root.hex(),
                rotation.sign(old, new_key),
            )
            insert_rotation(db, entry)
            meta = {"public_key": new_key.public_key.b64, "key_id": new_id}
            update_meta(db, {**meta, "key_path": new_key_path})
            stamp = _format_timestamp(self._clock())
            if new_state_file is not None:  # first: it may refuse (a fork under the new key)
                reader = NodeReader(db, self.store.path)
                state = LogState(self.log_id, size, root.hex(), new_key.public_key.b64, stamp)
                start_state(new_state_file, new_key, state, lambda n: reader.range_hash(0, n))
            self._advance_state(old, size, root.hex(), stamp)
        self.public_key, self.key_id, self.key_path = new_key.public_key, new_id, new_key_path
        self._key, self.state_file = new_key, new_state_file
        return entry

    def _signing_key(self) -> SigningKey:
        if self._key is None:
            raise LogError(
                "log.no_signing_key", f"{self.store.path}: opened without the log's signing key"
            )
        return self._key

    def _meta(self) -> dict[str, str]:
        with self.store.read() as db:
            return read_meta(db)
