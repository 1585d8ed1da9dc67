"""What goes into the log's write path and what comes out of it (docs/adr/0024): a :class:`Job`
(a write run in a group-commit transaction), the one limit of an entry (:func:`check_entry`), the
heads an integration signed (:class:`SignedHeads`) and an entry proven under them
(:class:`Integrated`). The path itself is :class:`affidavit.registry.writer.LogWriter`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from affidavit.attest.log.sequencing import Sequenced
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import parse_note
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.json.strict import load_object

__all__ = [
    "MAX_ENTRY_BYTES",
    "Batch",
    "Integrated",
    "Job",
    "SignedHeads",
    "check_entry",
    "largest_signed",
    "proven",
    "signed_by_current_key",
]

P = TypeVar("P")
T = TypeVar("T")

# tlog-tiles "Log entries": an entry bundle holds each entry behind a big-endian uint16 length,
# so 65,535 bytes (64 KiB less one) is the largest entry a mirror can read from the tiles.
MAX_ENTRY_BYTES: Final = 65_535


Batch = dict[str, Any]
"""Scratch space shared by the jobs of one batch (what their ``finish`` needs)."""


@dataclass(frozen=True, slots=True)
class Job(Generic[P, T]):
    """A write run inside a group-commit transaction on the database thread.

    ``prepare`` reads and checks (an :class:`AffidavitError` refuses this item only);
    ``apply(prepared, batch)`` writes. ``finish(batch)`` runs once per batch per function, before
    COMMIT; what it returns runs after COMMIT. ``aborted`` runs when the batch rolled back.
    """

    prepare: Callable[[], P]
    apply: Callable[[P, Batch], T]
    finish: Callable[[Batch], Callable[[], None] | None] | None = None
    aborted: Callable[[], None] | None = None
    leaf: Callable[[T], Sequenced | None] | None = None  # the leaf a waiting caller proves
    # The log entries ``apply`` will sequence, checked by the writer first (docs/adr/0018)
    entries: Callable[[P], Sequence[bytes]] | None = None
    # Before any job of the batch prepares: note what it will read, so the batch reads it once
    gather: Callable[[Batch], None] | None = None


@dataclass(frozen=True, slots=True)
class SignedHeads:
    """What an integration signed: the checkpoint note and the tree head (JSON) of one size."""

    tree_size: int
    checkpoint: str
    signed_tree_head: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Integrated:
    """An entry under a signed checkpoint, with its RFC 9162 §2.1.3 inclusion path at
    ``tree_size``, leaf end first."""

    index: int
    leaf_hash: bytes
    tree_size: int
    checkpoint: str
    signed_tree_head: dict[str, Any] | None
    path: tuple[bytes, ...]

    def to_json(self) -> dict[str, Any]:
        """``{index, leaf_hash, checkpoint, inclusion_proof: {tree_size, hashes}}`` (hex), plus
        ``signed_tree_head`` when there is one."""
        body: dict[str, Any] = {
            "index": self.index,
            "leaf_hash": self.leaf_hash.hex(),
            "checkpoint": self.checkpoint,
            "inclusion_proof": {
                "tree_size": self.tree_size,
                "hashes": [h.hex() for h in self.path],
            },
        }
        if self.signed_tree_head is not None:
            body["signed_tree_head"] = self.signed_tree_head
        return body


def check_entry(data: bytes) -> None:
    """The one check of a log entry's size, for every entry the registry makes.

    Raises:
        ``usage.invalid``: ``data`` is empty.
        ``registry.entry_too_large``: over :data:`MAX_ENTRY_BYTES` (docs/adr/0018; 422).
    """
    if not data:
        raise errors.UsageError("a log entry is 1 to 65,535 bytes, not empty")
    if len(data) > MAX_ENTRY_BYTES:
        raise RegistryError(
            "registry.entry_too_large",
            f"the log entry this makes is {len(data):,} bytes; the limit is {MAX_ENTRY_BYTES:,}"
            " (tlog-tiles entry bundles, docs/adr/0018): nothing was written",
            details={"entry_bytes": len(data), "limit": MAX_ENTRY_BYTES},
        )


def proven(
    log: TransparencyLog, placed: Sequence[Sequenced], heads: SignedHeads
) -> list[Integrated]:
    """Every entry of ``placed`` under ``heads``: their inclusion paths at its size, in one read."""
    size = heads.tree_size
    paths = log.inclusion_paths([p.index for p in placed], size)
    return [
        Integrated(p.index, p.leaf_hash, size, heads.checkpoint, heads.signed_tree_head, path)
        for p, path in zip(placed, paths, strict=True)
    ]


def largest_signed(log: TransparencyLog) -> SignedHeads | None:
    """The largest recorded checkpoint (its latest, cosigned copy) and the tree head of its
    size, if recorded."""
    recorded = log.largest_head("checkpoint")
    if recorded is None:
        return None
    sth = log.recorded_head("sth", recorded.tree_size)
    document = load_object(sth.document, what="recorded head") if sth is not None else None
    return SignedHeads(recorded.tree_size, recorded.document, document)


def signed_by_current_key(log: TransparencyLog, note: str) -> bool:
    """Whether the log's own signature line on ``note`` is by its current key (not a key it
    rotated away from, docs/adr/0011)."""
    signatures = parse_note(note).signatures
    own = signatures[0] if signatures else None
    return own is not None and own.key_id == key_id_c2sp(own.name, log.public_key.raw)
