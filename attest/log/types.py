"""The wire objects of the transparency log: proofs and heads (private to
:mod:`affidavit.attest.log.transparency`, which re-exports them; docs/formats.md §4, RFC 9162
§2.1.3-§2.1.4)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ConsistencyProof", "InclusionProof", "IssuedTreeHead", "RecordedHead"]


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """An RFC 9162 §2.1.3 inclusion proof: ``path`` runs from the leaf's sibling up to the root."""

    leaf_index: int
    tree_size: int
    leaf_hash: bytes
    root_hash: bytes
    path: tuple[bytes, ...]
    sides: tuple[str, ...]  # "left" / "right": where each path hash sits (informative only)

    def to_json(self, log_id: str) -> dict[str, Any]:
        """The bundle's ``merkle_inclusion`` object (docs/formats.md §4)."""
        return {
            "leaf_hash": self.leaf_hash.hex(),
            "leaf_index": self.leaf_index,
            "tree_size": self.tree_size,
            "merkle_root": self.root_hash.hex(),
            "proof": [
                {"position": side, "hash": h.hex()}
                for side, h in zip(self.sides, self.path, strict=True)
            ],
            "log_id": log_id,
        }


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    """An RFC 9162 §2.1.4 consistency proof between two sizes of this log."""

    first_size: int
    second_size: int
    first_root: bytes
    second_root: bytes
    path: tuple[bytes, ...]

    def to_json(self) -> dict[str, Any]:
        """``{first_size, second_size, first_root, second_root, proof}``, hashes as hex."""
        return {
            "first_size": self.first_size,
            "second_size": self.second_size,
            "first_root": self.first_root.hex(),
            "second_root": self.second_root.hex(),
            "proof": [h.hex() for h in self.path],
        }


@dataclass(frozen=True, slots=True)
class IssuedTreeHead:
    """A signed tree head this log issued, in the peer's format (docs/formats.md §4)."""

    log_id: str
    tree_size: int
    root_hash: str  # lowercase hex
    timestamp: str  # YYYY-MM-DDTHH:MM:SSZ (verify/json/forms.py, docs/formats.md §4)
    signature: str  # b64 Ed25519 over "{log_id}|{tree_size}|{root_hash}|{timestamp}"
    key_id: str
    algorithm: str = "Ed25519"

    def to_json(self) -> dict[str, Any]:
        """The wire object, keys in the peer's order (the fields')."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RecordedHead:
    """A head the log handed out: ``kind`` is ``sth`` (document = JSON) or ``checkpoint`` (note)."""

    seq: int
    kind: str
    tree_size: int
    root_hash: str
    timestamp: str
    document: str
