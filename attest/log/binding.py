"""The log's binding to the signed state file of its key (docs/adr/0005-log-state-binding.md).

Before a head is signed, the current tree is proven consistent (RFC 9162 §2.1.4) with the latest
recorded head, the tree the last key rotation handed over, and the signed state file beside the
key (:mod:`affidavit.attest.log.state`): a damaged node is never signed over (``log.integrity``),
and a store that does not extend the state's head is refused (``log.state_mismatch``).

:class:`StateBinding` is that half of :class:`affidavit.attest.log.transparency.TransparencyLog`,
kept here so the log's module holds appending, proofs, heads and keys.
"""

from __future__ import annotations

import os
from pathlib import Path

from affidavit.attest.errors import LogError
from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.check import Reference, audit_nodes, check_extends, latest_recorded
from affidavit.attest.log.keys import LogKey
from affidavit.attest.log.state import LogState, read_state_of, write_state
from affidavit.attest.log.tree import NodeReader, stored_size
from affidavit.attest.stores.store import Connection, Store
from affidavit.verify.crypto.tree_ranges import consistency_ranges

__all__ = ["StateBinding"]


class StateBinding:
    """Integrity checks of a log against the heads it signed and its key's state file."""

    store: Store
    log_id: str
    state_file: Path | None
    _state_seen: tuple[tuple[object, ...], LogState | None]  # the state file last read, by stat

    def key_history(self) -> list[LogKey]:  # pragma: no cover - provided by the log
        """Every key of the log with its window (the log's own, verified)."""
        raise NotImplementedError

    def state(self) -> LogState | None:
        """The verified signed state beside the key (None: unbound, or no head signed yet).

        Raises:
            ``log.state_invalid``: the file is malformed or not signed by a key of this log.
        """
        if self.state_file is None:
            return None
        keys = [entry.public_key for entry in self.key_history()]
        try:  # read again only when the file was replaced (an atomic write: a new inode)
            info = os.stat(self.state_file)
            stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
            seen: tuple[object, ...] | None = (*stamp, *(k.b64 for k in keys))
        except OSError:
            seen = None
        cached: tuple[tuple[object, ...], LogState | None] | None = getattr(
            self, "_state_seen", None
        )
        if seen is not None and cached is not None and cached[0] == seen:
            return cached[1]
        state = read_state_of(self.state_file, keys, self.log_id)
        if seen is not None:
            self._state_seen = (seen, state)
        return state

    def _references(self, db: Connection, state: LogState | bool | None = False) -> list[Reference]:
        """The heads the tree must extend: the latest recorded, the last rotation's, the state
        file's (``state``: as read before the caller's snapshot, or False to read it now)."""
        references = []
        recorded = latest_recorded(db)
        if recorded is not None:
            references.append(recorded)
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

    def _checked_head(self, db: Connection) -> tuple[int, bytes]:
        """The current size and root, proven to extend every earlier head (RFC 9162 §2.1.4).

        Raises:
            ``log.integrity``: a stored node contradicts a head this log signed.
        """
        size = stored_size(db)
        reader = NodeReader(db, self.store.path)
        references = self._references(db)
        _prefetch(reader, size, references)
        root = reader.range_hash(0, size)
        check_extends(reader, self.store.path, size, root, references)
        return size, root

    def _advance_state(self, key: SigningKey, size: int, root_hex: str, stamp: str) -> None:
        """Record the head in the state file when it is of a new size (inside the head's write
        transaction: the database lock serialises every signer of this log)."""
        if self.state_file is None:
            return
        current = self.state()
        if current is not None and current.tree_size >= size:
            return
        state = LogState(self.log_id, size, root_hex, key.public_key.b64, stamp)
        write_state(self.state_file, key, state)

    def bind_state(self, state_file: Path) -> None:
        """Bind this log to the signed state file of its key (after :meth:`open`), checking that
        the store extends the head recorded there; signing keeps it current from now on.

        Raises:
            ``log.state_invalid``, ``log.state_mismatch``.
        """
        self.state_file = state_file
        self._check_state()

    def _check_state(self) -> None:
        """Refuse a store that does not extend the head the state file records."""
        state = self.state()
        if state is None:
            return
        with self.store.read() as db:
            size = stored_size(db)
            ok = size >= state.tree_size
            if ok:
                root = NodeReader(db, self.store.path).range_hash(0, state.tree_size)
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
        # What only grows is read first: the state file, then the tree in one snapshot (a state
        # read after the snapshot could cover leaves integrated since: issue 31). A signer writes
        # the state inside its write transaction, before COMMIT, so a state ahead of the snapshot
        # can still be seen outside the writer lock: registry/startup.py checks again under it.
        state = self.state()
        with self.store.read() as db:
            size = stored_size(db)
            reader = NodeReader(db, self.store.path)
            references = self._references(db, state)
            _prefetch(reader, size, references)
            check_extends(reader, self.store.path, size, reader.range_hash(0, size), references)
            if full:
                audit_nodes(db, self.store.path)


def _prefetch(reader: NodeReader, size: int, references: list[Reference]) -> None:
    """Read every node the root and the consistency proofs from ``references`` fold, at once."""
    ranges = [(0, size)]
    for ref in references:
        if 0 < ref.tree_size <= size:
            ranges += consistency_ranges(ref.tree_size, size)
    reader.prefetch_ranges(ranges)
