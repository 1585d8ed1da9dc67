"""Integrity checks of a stored log against the heads it signed (private to
:mod:`affidavit.attest.log.transparency`; docs/adr/0005-log-state-binding.md).

- :func:`check_extends`: before a new head is signed, the tree of the current size must extend
  every earlier reference head (the latest recorded head, the signed state file): an RFC 9162
  §2.1.4 consistency proof computed from the stored nodes must verify with
  :func:`affidavit.verify.crypto.merkle.verify_consistency` from the reference root to the new root.
- :func:`audit_nodes`: every stored interior node must be the hash of its two children
  (RFC 9162 §2.1.1) and every stored leaf hash the leaf hash of its data: O(n), for start-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from affidavit.attest.errors import LogError
from affidavit.attest.log.tree import EMPTY_ROOT, NodeReader
from affidavit.attest.stores.store import Connection
from affidavit.verify import errors
from affidavit.verify.crypto.merkle import leaf_hash, node_hash, verify_consistency
from affidavit.verify.crypto.tree_ranges import consistency_ranges

__all__ = ["Reference", "audit_nodes", "check_extends", "latest_recorded"]


class Reference(NamedTuple):
    """A head the log signed earlier: its size, root (hex) and where it was recorded."""

    tree_size: int
    root_hash: str
    source: str


def latest_recorded(db: Connection) -> Reference | None:
    """The most recently recorded head (any kind), or None."""
    row = db.execute(
        "SELECT tree_size, root_hash FROM log_heads ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    return None if row is None else Reference(int(row[0]), str(row[1]), "the latest recorded head")


def check_extends(
    reader: NodeReader, path: Path | str, size: int, root: bytes, references: list[Reference]
) -> None:
    """Prove the tree of ``size`` leaves and root ``root`` extends every reference head.

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
            except errors.AffidavitError:
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
    """Check every stored node against its children and every leaf against its data; returns
    the number of nodes checked.

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
