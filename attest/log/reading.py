"""Reading a stored log: its size, roots, leaves, entries, inclusion and consistency proofs
(RFC 9162 §2.1.3, §2.1.4), and the heads it recorded.

:class:`TreeReads` is that half of :class:`affidavit.attest.log.transparency.TransparencyLog`, kept
here so the log's module holds appending, sequencing and keys, and :mod:`.heads` the signing. Every
answer is read inside one read transaction (:meth:`Store.read`), or in one statement outside any
(:meth:`Store.query`), so a concurrent append cannot mix two sizes into one answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.storage import (
    entry_data,
    head_of_size,
    head_row,
    heads_after,
    largest_head,
    latest_head,
)
from affidavit.attest.log.tree import NodeReader, check_index, check_size, stored_size
from affidavit.attest.log.types import ConsistencyProof, InclusionProof, RecordedHead
from affidavit.attest.stores.store import Store
from affidavit.verify.crypto.tree_ranges import consistency_ranges, inclusion_ranges

__all__ = ["MAX_ENTRIES_PER_CALL", "TreeReads"]

MAX_ENTRIES_PER_CALL: Final = 1000


class TreeReads:
    """Reads and proofs over the log in :attr:`store`."""

    store: Store

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
        return head_row(head), size

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

    def heads(self, *, since_seq: int = 0, limit: int = MAX_ENTRIES_PER_CALL) -> list[RecordedHead]:
        """The heads handed out with ``seq > since_seq``, oldest first, at most ``limit``."""
        with self.store.read() as db:
            return heads_after(db, since_seq, max(0, min(limit, MAX_ENTRIES_PER_CALL)))
