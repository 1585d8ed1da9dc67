"""Step 3 of reading a dump (:mod:`affidavit.registry.dump`): its log, proven under the key the
operator trusts before anything is written.

The manifest is already authentic (signed by the trusted key); the log's rows are bound to it by
their files' hashes. What is proven here, so that not even a manifest the trusted key signed can
carry a log that key did not sign:

a. the log's current key is the trusted key, and its key history verifies (each rotation signed
   by the key it replaced, docs/adr/0011) (``registry.dump_key_mismatch``);
b. the level-0 hashes are exactly ``tree_size`` leaves and give the manifest's root (RFC 9162
   §2.1.1), every stored node is the hash of its children and every leaf hash the hash of its data
   (``registry.dump_root_mismatch``);
c. the manifest's checkpoint is the latest one the log recorded, verifies under a key of the
   history, and names the tree's root at its size (``registry.dump_checkpoint_invalid``);
d. every recorded head (tree heads inside their key's window, checkpoints) verifies under a key of
   the history and names the tree's root at its size, so the tree extends every head it handed
   out (``registry.dump_head_invalid``).

The rows are loaded into a scratch SQLite file in a temporary folder, so the log's own code reads
them (:class:`affidavit.attest.log.transparency.TransparencyLog`); the destination is not touched.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.keys import LogKey
from affidavit.attest.log.storage import COMPONENT as LOG_COMPONENT
from affidavit.attest.log.storage import MIGRATIONS as LOG_MIGRATIONS
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Connection, Store
from affidavit.registry.errors import RegistryError
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    parse_note,
    verify_checkpoint,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import EMPTY_ROOT, root_of
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.json.strict import load_object

__all__ = ["LOG_TABLES", "ProvenLog", "Rows", "bad_dump", "insert_rows", "prove_log", "refused"]

# table -> (columns, ORDER BY): the log's tables in a dump (attest/log/storage.py).
LOG_TABLES: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "log_meta": (("key", "value"), "key"),
    "log_keys": (
        ("seq", "key_id", "public_key", "valid_from", "tree_size", "root_hash", "statement"),
        "seq",
    ),
    "log_nodes": (("level", "idx", "hash"), "level, idx"),
    "log_entries": (("idx", "data"), "idx"),
    "log_heads": (("seq", "kind", "tree_size", "root_hash", "timestamp", "document"), "seq"),
    # entries sequenced (acknowledged, durable) and not integrated yet: the next start integrates
    "log_sequenced": (("idx", "hash", "data"), "idx"),
}
Rows = list[list[Any]]


@dataclass(frozen=True, slots=True)
class ProvenLog:
    """What :func:`prove_log` checked: the tree, and every recorded head (tree heads inside their
    key's window, checkpoints) verified under a key of the log."""

    tree_size: int
    root_hash: str
    heads_verified: int


def refused(code: str, message: str, **details: Any) -> RegistryError:
    """The error ``code`` of a dump that is not authentic, with ``details``."""
    return RegistryError(code, message, details=details)


def bad_dump(message: str, **details: Any) -> RegistryError:
    """``registry.dump_invalid`` (exit 2): the dump cannot be read as a dump."""
    return refused("registry.dump_invalid", message, **details)


def insert_rows(db: Connection, table: str, columns: Sequence[str], rows: Rows) -> None:
    """Insert a dump's ``rows`` of ``table`` (one of the fixed tables, its ``columns``)."""
    if rows:
        db.insert_rows(table, columns, rows)


def prove_log(
    summary: Mapping[str, Any], tables: Mapping[str, Rows], trusted_key: Ed25519PublicKey
) -> ProvenLog:
    """Prove the dump's log (``summary`` is the signed manifest's ``log``) under ``trusted_key``.

    Raises:
        ``registry.dump_key_mismatch``, ``registry.dump_root_mismatch``,
            ``registry.dump_checkpoint_invalid``, ``registry.dump_head_invalid`` (module
            docstring, a to d); ``registry.dump_invalid`` for rows that are not a log's.
    """
    size, root = summary.get("tree_size"), summary.get("root_hash")
    if not isinstance(size, int) or size < 0 or not isinstance(root, str):
        raise bad_dump("the manifest's log has no valid tree_size and root_hash")
    if not tables["log_meta"]:  # exported before the registry's first start: no log at all
        if size or root != EMPTY_ROOT.hex() or summary.get("checkpoint") is not None:
            raise refused("registry.dump_root_mismatch", "the manifest names a log the dump lacks")
        if any(tables[table] for table in LOG_TABLES):
            raise bad_dump("the dump holds log rows but no log")
        return ProvenLog(0, root, 0)
    meta = {str(row[0]): row[1] for row in tables["log_meta"]}
    for where, named in (
        ("log_meta", meta.get("public_key")),
        ("manifest", summary.get("public_key")),
    ):
        if named != trusted_key.b64:  # step a
            raise refused(
                "registry.dump_key_mismatch",
                f"the dump's {where} names log key {named}, not the trusted key {trusted_key.b64}",
                trusted_key=trusted_key.b64,
            )
    _check_leaves(tables["log_nodes"], size, root)  # step b, from the manifest alone
    with tempfile.TemporaryDirectory(prefix="affidavit-dump-") as scratch:
        store = Store.open(Path(scratch) / "log.db", create=True)
        try:
            log = _scratch_log(store, tables)
            return _prove(log, summary, tables["log_heads"], trusted_key, size, root)
        finally:
            store.close()


def _check_leaves(nodes: Rows, size: int, root: str) -> None:
    """The level-0 hashes give the signed size and root, and the stored nodes are exactly the
    complete subtrees of that size (attest/log/storage.py): ``size >> L`` nodes at level L."""
    leaves = [(row[1], row[2]) for row in nodes if row[0] == 0]
    hashes = [h for _, h in leaves]
    if (
        [i for i, _ in leaves] != list(range(len(leaves)))
        or any(not isinstance(h, bytes) or len(h) != 32 for h in hashes)
        or len(leaves) != size
        or root_of(hashes).hex() != root
    ):
        raise refused(
            "registry.dump_root_mismatch",
            f"the dump's {len(leaves)} leaf hashes do not give the signed tree "
            f"(size {size}, root {root[:16]}...)",
        )
    if not all(isinstance(row[0], int) and isinstance(row[1], int) for row in nodes):
        raise bad_dump("log_nodes.jsonl: a node's level or index is not an integer")
    expected = {(level, i) for level in range(size.bit_length()) for i in range(size >> level)}
    if len(nodes) != len(expected) or {(row[0], row[1]) for row in nodes} != expected:
        raise refused(
            "registry.dump_root_mismatch",
            f"the dump's stored nodes are not the complete subtrees of a tree of size {size}",
        )


def _scratch_log(store: Store, tables: Mapping[str, Rows]) -> TransparencyLog:
    """The dump's log rows in ``store``, opened (which verifies the key history, step a)."""
    store.migrate(LOG_COMPONENT, LOG_MIGRATIONS)
    try:
        with store.write() as db:
            db.execute("DELETE FROM log_keys")
            for table, (columns, _order) in LOG_TABLES.items():
                insert_rows(db, table, columns, tables[table])
    except errors.AffidavitError as e:
        raise bad_dump(f"the dump's log rows cannot be a log: {e}") from None
    try:
        return TransparencyLog(store, owns_store=False)
    except (LogError, errors.AffidavitError) as e:
        raise refused(
            "registry.dump_key_mismatch", f"the dump's log key history does not verify: {e}"
        ) from None


def _prove(  # noqa: PLR0917 - private, called once
    log: TransparencyLog,
    summary: Mapping[str, Any],
    heads: Rows,
    trusted_key: Ed25519PublicKey,
    size: int,
    root: str,
) -> ProvenLog:
    history = log.key_history()
    if history[-1].public_key != trusted_key:
        raise refused(
            "registry.dump_key_mismatch",
            f"the dump's key history ends with {history[-1].public_key.b64}, not the trusted key",
        )
    _check_checkpoint(log, history, summary.get("checkpoint"), heads, size)
    for row in heads:  # step d
        _check_head(log, history, row, size)
    try:  # step b: every stored node against its children, every leaf against its data
        log.verify_integrity(full=True)
    except LogError as e:
        raise refused("registry.dump_root_mismatch", f"the dump's tree: {e.message}") from None
    return ProvenLog(size, root, len(heads))


def _verified_checkpoint(note: object, history: Sequence[LogKey]) -> Checkpoint:
    """A checkpoint note verified under the keys of the log's history (its cosignatures, by
    witnesses, are not the log's and are ignored).

    Raises:
        ``checkpoint.*``: the note is not text, or does not verify under the log's keys.
    """
    if not isinstance(note, str):
        raise errors.SignatureError("checkpoint.malformed", "a checkpoint is a signed note (text)")
    signatures = parse_note(note).signatures
    name = signatures[0].name if signatures else ""
    verifiers = [
        NoteVerifier(name, key_id_c2sp(name, entry.public_key.raw), entry.public_key)
        for entry in history
    ]
    return verify_checkpoint(note, verifiers).checkpoint


def _check_checkpoint(
    log: TransparencyLog, history: Sequence[LogKey], claimed: object, heads: Rows, size: int
) -> None:
    """Step c."""
    recorded = [row[5] for row in heads if row[1] == "checkpoint"]
    if claimed != (recorded[-1] if recorded else None):
        raise refused(
            "registry.dump_checkpoint_invalid",
            "the manifest's checkpoint is not the latest checkpoint the dump's log recorded",
        )
    if claimed is None:
        return
    try:
        checkpoint = _verified_checkpoint(claimed, history)
    except (errors.AffidavitError, ValueError) as e:
        raise refused(
            "registry.dump_checkpoint_invalid",
            f"the dump's checkpoint does not verify under the trusted log key: {e}",
        ) from None
    _check_root(log, checkpoint.tree_size, checkpoint.root_hash.hex(), size, "checkpoint")


def _check_head(log: TransparencyLog, history: Sequence[LogKey], row: list[Any], size: int) -> None:
    """Step d: one recorded head, ``[seq, kind, tree_size, root_hash, timestamp, document]``."""
    seq, kind, tree_size, root_hash, timestamp, document = row
    what = f"recorded head {seq} ({kind})"
    try:
        if kind == "sth":
            unverified = load_object(str(document), what="tree head")
            entry = next((e for e in history if e.key_id == unverified.get("key_id")), None)
            if entry is None:
                raise errors.SignatureError(
                    "treehead.signature_bad", "signed by no key of the log's history"
                )
            sth = verify_sth(unverified, entry.public_key, windows=(entry.window,))
            signed = (sth.log_id, sth.tree_size, sth.root_hash, sth.timestamp)
            ok = signed == (log.log_id, tree_size, root_hash, timestamp)
        elif kind == "checkpoint":
            checkpoint = _verified_checkpoint(document, history)
            ok = (checkpoint.tree_size, checkpoint.root_hash.hex()) == (tree_size, root_hash)
        else:
            ok = False
    except (errors.AffidavitError, ValueError) as e:
        raise refused("registry.dump_head_invalid", f"{what}: {e}", seq=seq) from None
    if not ok:
        raise refused(
            "registry.dump_head_invalid",
            f"{what}: the signed head and its row disagree, or the kind is unknown",
            seq=seq,
        )
    _check_root(log, tree_size, root_hash, size, what, code="registry.dump_head_invalid")


def _check_root(
    log: TransparencyLog,
    tree_size: object,
    root_hash: object,
    size: int,
    what: str,
    *,
    code: str = "registry.dump_checkpoint_invalid",
) -> None:
    """The dump's tree has root ``root_hash`` at ``tree_size`` (so it extends that head)."""
    if not isinstance(tree_size, int) or not 0 <= tree_size <= size:
        raise refused(code, f"{what} covers {tree_size} leaves; the dump holds {size}")
    try:
        actual = log.root(tree_size).hex()
    except LogError as e:
        raise refused("registry.dump_root_mismatch", f"the dump's tree: {e.message}") from None
    if actual != root_hash:
        raise refused(
            code,
            f"{what} names root {str(root_hash)[:16]}... at size {tree_size}; the dump's tree "
            f"has {actual[:16]}... there",
        )
