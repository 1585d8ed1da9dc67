"""C2SP tlog-proofs from our log: leaf index, inclusion path, and the latest recorded checkpoint.

>>> import tempfile, pathlib
>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.log.transparency import TransparencyLog
>>> key = derive_test_key("proofs doctest")                 # TEST-ONLY key
>>> log = TransparencyLog.create(pathlib.Path(tempfile.mkdtemp()) / "log.db", key, "example.com/l")
>>> log.append([b"a", b"b", b"c"])
[0, 1, 2]
>>> note = log.checkpoint()
>>> proof = build_proof(log, 1)
>>> proof.index, len(proof.path), proof.checkpoint == note
(1, 2, True)
>>> log.close()

A proof (https://c2sp.org/tlog-proof) uses the checkpoint recorded last, with any witness
cosignatures, and the inclusion path at exactly its size. Nothing is signed here.
:func:`attach_proof` puts it in a bundle's top-level ``tlog_proof`` (outside ``bundle_hash``,
docs/formats.md §4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.verify import errors
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.tlog.proof import TlogProof

__all__ = ["TLOG_PROOF_FIELD", "attach_proof", "build_proof", "bundle_leaf"]

TLOG_PROOF_FIELD: Final = "tlog_proof"
_AFTER: Final = ("bundle_hash", "signed_tree_head")  # tlog_proof goes after these when present


def build_proof(log: TransparencyLog, index: int, *, extra: bytes | None = None) -> TlogProof:
    """The tlog-proof of leaf ``index`` under the latest recorded checkpoint.

    Raises:
        ``log.index_out_of_range``: the log has no leaf ``index``.
        ``log.no_checkpoint``: no checkpoint was recorded, or the latest one is older than the leaf.
        ``log.integrity``: the recorded checkpoint's root is not the log's root at its size.
    """
    size = log.size
    if not 0 <= index < size:
        raise LogError(
            "log.index_out_of_range",
            f"the log has {size} leaves; there is no leaf {index}",
            details={"index": index, "size": size},
        )
    head = log.latest_checkpoint()
    if head is None or head.tree_size <= index:
        recorded = (
            f"the latest checkpoint covers {head.tree_size} leaves"
            if head
            else "no checkpoint is recorded"
        )
        raise LogError(
            "log.no_checkpoint",
            f"{recorded}, not leaf {index}: sign a checkpoint first "
            "(affidavit log head DB --checkpoint), then collect its cosignatures",
            details={"index": index, "checkpoint_size": None if head is None else head.tree_size},
        )
    inclusion = log.inclusion_proof(index, head.tree_size)
    if inclusion.root_hash.hex() != head.root_hash:
        raise LogError(
            "log.integrity",
            f"the recorded checkpoint of size {head.tree_size} has another root than the log's",
        )
    return TlogProof(index, inclusion.path, head.document, extra)


def bundle_leaf(bundle: Any) -> tuple[int, bytes]:
    """The (leaf index, leaf hash) a stamped bundle's ``merkle_inclusion`` claims.

    Raises:
        ``bundle.malformed``: not a bundle object with a ``merkle_inclusion`` object.
        ``bundle.inclusion_malformed``: its ``leaf_index`` or ``leaf_hash`` is malformed.
    """
    inclusion = bundle.get("merkle_inclusion") if isinstance(bundle, dict) else None
    if not isinstance(inclusion, dict):
        raise errors.BundleError(
            "bundle.malformed", "the bundle carries no merkle_inclusion object: no logged leaf"
        )
    index, leaf = inclusion.get("leaf_index"), inclusion.get("leaf_hash")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0 or not is_hex64(leaf):
        raise errors.BundleError(
            "bundle.inclusion_malformed",
            "merkle_inclusion needs a non-negative leaf_index and a 64-hex leaf_hash",
        )
    return index, bytes.fromhex(str(leaf))


def attach_proof(
    log: TransparencyLog, bundle: Mapping[str, Any], *, extra: bytes | None = None
) -> dict[str, Any]:
    """A copy of ``bundle`` with the tlog-proof of its leaf (this log's, at its index) in
    ``tlog_proof``.

    Raises:
        ``bundle.malformed``, ``bundle.inclusion_malformed``: see :func:`bundle_leaf`.
        ``log.leaf_mismatch``: the leaf, index or log is not this log's.
        everything :func:`build_proof` raises.
    """
    index, leaf = bundle_leaf(bundle)
    log_id = bundle["merkle_inclusion"].get("log_id")
    if log_id is not None and log_id != log.log_id:
        raise LogError(
            "log.leaf_mismatch",
            f"the bundle's leaf is in log {log_id!r}, not in this log ({log.log_id!r})",
        )
    size = log.size
    if index >= size or log.leaf_hash(index) != leaf:
        where = f"has only {size} leaves" if index >= size else "holds another leaf there"
        raise LogError(
            "log.leaf_mismatch",
            f"the bundle's leaf {leaf.hex()} at index {index} is not this log's: the log {where}",
            details={"index": index, "leaf_hash": leaf.hex()},
        )
    text = build_proof(log, index, extra=extra).to_text()
    kept = {name: value for name, value in bundle.items() if name != TLOG_PROOF_FIELD}
    return _placed(kept, text)


def _placed(bundle: dict[str, Any], text: str) -> dict[str, Any]:
    """``bundle`` with ``tlog_proof`` after the last of :data:`_AFTER` present (else last)."""
    anchor = max((list(bundle).index(name) for name in _AFTER if name in bundle), default=None)
    if anchor is None:
        return {**bundle, TLOG_PROOF_FIELD: text}
    items = list(bundle.items())
    return dict([*items[: anchor + 1], (TLOG_PROOF_FIELD, text), *items[anchor + 1 :]])
