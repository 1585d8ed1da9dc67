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

Storage: :mod:`affidavit.attest.log.storage` (tables, one row per complete subtree). Reading and
proofs: :mod:`affidavit.attest.log.reading`; signing heads: :mod:`affidavit.attest.log.heads`.

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

import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from affidavit.attest.errors import LogError
from affidavit.attest.host import utc_now
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.heads import HeadSigning, format_timestamp
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
)
from affidavit.attest.log.reading import MAX_ENTRIES_PER_CALL, TreeReads
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
    insert_entries,
    insert_meta,
    insert_nodes,
    read_meta,
    store_for,
    update_meta,
)
from affidavit.attest.log.tree import NodeReader, extend, frontier, stored_size
from affidavit.attest.log.types import (
    ConsistencyProof,
    InclusionProof,
    IssuedTreeHead,
    RecordedHead,
)
from affidavit.attest.stores.store import Store
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.merkle import leaf_hash
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
]

_LOG_ID = re.compile(r"^[\x21-\x7b\x7d\x7e]{1,200}$")  # printable ASCII, no space, no '|'


class TransparencyLog(TreeReads, HeadSigning):
    """An append-only Merkle log in one SQLite database; build it with :meth:`create`/:meth:`open`.

    Append (:meth:`append`), read (:attr:`size`, :meth:`root`, :meth:`leaf`, :meth:`entries`),
    prove (:meth:`inclusion_proof`, :meth:`consistency_proof`; :class:`.reading.TreeReads`), sign
    heads (:meth:`checkpoint`, :meth:`signed_tree_head`; :class:`.heads.HeadSigning`) and manage
    keys (:meth:`key_history`, :meth:`rotate_key`).
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
            if cls._holds(path, log_id, key):  # issue 33: an existing log is not a fork
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
            stamp = format_timestamp(self._clock())
            if new_state_file is not None:  # first: it may refuse (a fork under the new key)
                reader = NodeReader(db, self.store.path)
                state = LogState(self.log_id, size, root.hex(), new_key.public_key.b64, stamp)
                start_state(new_state_file, new_key, state, lambda n: reader.range_hash(0, n))
            self._advance_state(old, size, root.hex(), stamp)
        self.public_key, self.key_id, self.key_path = new_key.public_key, new_id, new_key_path
        self._key, self.state_file = new_key, new_state_file
        return entry

    def _meta(self) -> dict[str, str]:
        with self.store.read() as db:
            return read_meta(db)
