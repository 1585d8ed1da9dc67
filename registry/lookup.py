"""The lookup index kept in step with the log, and what ``GET /v1/lookup/{hash}`` answers
(issue 26; docs/transparency.md "Lookup").

:func:`catch_up` is the log writer's after-integration hook (docs/adr/0024): it files the leaves
an integration adds, from the index's size to the tree's, in the same transaction, so no row
names a rolled-back leaf. A 32-byte leaf the SCITT service registered is also filed under its
statement's subject and issuer (:func:`refile` when it was in the log already), so the index is
always what :func:`reindex` builds. :func:`answer` pages every entry filed under a hash below
the checkpoint's size, each with its inclusion proof; no answer proves absence.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from typing import Any, Final

from affidavit.attest.errors import LogError
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Store
from affidavit.registry.db import REGISTRY_MIGRATIONS, RegistryTables
from affidavit.registry.index import MAX_FIELDS, subjects

__all__ = [
    "CHUNK",
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "answer",
    "catch_up",
    "catch_up_all",
    "refile",
    "registered_statement",
    "reindex",
]

_LOG = logging.getLogger("affidavit.registry")
CHUNK: Final = 1000  # leaves per read of the log (TransparencyLog.entries' own limit)
MAX_PAGE: Final = 100  # entries per answer, each with its proof
DEFAULT_PAGE: Final = 100
Row = tuple[bytes, int, str, str]  # (hash, leaf_index, field, kind)
_SCITT: Final = "scitt"  # registry/scitt.py COMPONENT (not imported: scitt sits above the index)
_STATEMENT_BYTES: Final = 32  # a registration's leaf entry (docs/formats.md §10)


def registered_statement(store: Store, index: int, data: bytes | None) -> bytes | None:
    """The Signed Statement registered as leaf ``index`` (``data``: its bytes), else None."""
    if data is None or len(data) != _STATEMENT_BYTES:
        return None
    if store.schema_version(_SCITT) < 1:  # no statement was ever registered here
        return None
    with store.read() as db:
        row = db.execute(
            "SELECT leaf_index, statement FROM scitt_entries WHERE entry_id = $1", (data.hex(),)
        ).fetchone()
    if row is None or int(row[0]) != index:
        return None
    return bytes(row[1])


def _rows(log: TransparencyLog, start: int, end: int) -> Iterator[Row]:
    """The index rows of leaves ``[start, end)`` (at most :data:`CHUNK`)."""
    try:
        leaves: list[bytes | None] = list(log.entries(start, end))
    except LogError as e:
        if e.code != "log.no_entry_data":
            raise
        leaves = [_data_or_none(log, index) for index in range(start, end)]
    for index, data in enumerate(leaves, start):
        if data is None:  # appended by hash only: found by its leaf hash alone
            yield log.leaf_hash(index), index, "leaf_hash", "hash_only"
            continue
        statement = registered_statement(log.store, index, data)
        for subject in subjects(data, statement=statement):
            yield bytes.fromhex(subject.digest), index, subject.field, subject.kind


def _data_or_none(log: TransparencyLog, index: int) -> bytes | None:
    try:
        return log.leaf(index)
    except LogError as e:
        if e.code != "log.no_entry_data":
            raise
        return None


def catch_up(tables: RegistryTables, log: TransparencyLog, *, limit: int | None = None) -> int:
    """Index the leaves from the index's size to the tree's (at most ``limit``) in one
    transaction, the caller's when it holds one; returns how many."""
    with tables.transaction():
        start = tables.lookup_size()
        end = log.size if limit is None else min(log.size, start + limit)
        for first in range(start, end, CHUNK):
            last = min(end, first + CHUNK)
            tables.add_lookup_rows(list(_rows(log, first, last)), last)
    return max(0, end - start)


def refile(tables: RegistryTables, log: TransparencyLog, index: int) -> None:
    """File leaf ``index`` again, if already indexed, as the log and SCITT store say now (a
    leaf appended before its registration gains the subject and issuer, as :func:`reindex`
    would file it: issue 31), in the caller's transaction."""
    with tables.transaction():
        indexed = tables.lookup_size()
        if index < indexed:
            tables.add_lookup_rows(list(_rows(log, index, index + 1)), indexed)


def catch_up_all(tables: RegistryTables, log: TransparencyLog) -> int:
    """:func:`catch_up` to the tree's size, :data:`CHUNK` leaves per transaction (never holding
    the writer long); returns how many."""
    total = 0
    while done := catch_up(tables, log, limit=CHUNK):
        total += done
    if total:
        _LOG.info("indexed %d log entries for lookups", total)
    return total


def reindex(store: Store) -> dict[str, Any]:
    """Rebuild the lookup index in ``store`` from its log: ``{entries, rows, tree_size}``.

    Raises:
        ``log.not_found``: the store holds no log.
    """
    store.migrate("registry", REGISTRY_MIGRATIONS)
    tables = RegistryTables(store)
    log = TransparencyLog(store, owns_store=False)
    tables.clear_lookup()
    entries = catch_up_all(tables, log)
    with store.read() as conn:
        rows = int(conn.execute("SELECT count(*) FROM registry_lookup").fetchall()[0][0])
    return {"entries": entries, "rows": rows, "tree_size": log.size}


def answer(
    tables: RegistryTables,
    log: TransparencyLog,
    digest: str,
    *,
    cursor: int,
    limit: int,
    checkpoint: str,
    tree_size: int,
) -> dict[str, Any]:
    """The ``GET /v1/lookup/{hash}`` document (specs/registry-v1.yaml ``Lookup``): at most
    ``limit`` entries filed under ``digest`` in ``[cursor, tree_size)``, each with its inclusion
    proof at ``tree_size``; ``next_cursor`` when more follow."""
    rows = tables.lookup(
        bytes.fromhex(digest), after=cursor - 1, below=tree_size, limit=(limit + 1) * MAX_FIELDS
    )
    grouped: dict[int, tuple[str, list[str]]] = {}
    for index, kind, field in rows:
        grouped.setdefault(index, (kind, []))[1].append(field)
    # Rows come in leaf order; past ``limit`` entries the first ``limit`` are whole (a later
    # entry started), and with fewer the row limit was never reached.
    indexes = list(grouped)[:limit]
    entries = []
    for index in indexes:
        kind, fields = grouped[index]
        proof = log.inclusion_proof(index, tree_size)
        entry: dict[str, Any] = {
            "index": index,
            "leaf_hash": proof.leaf_hash.hex(),
            "kind": kind,
            "matched": fields,
            "inclusion_proof": {
                "tree_size": tree_size,
                "hashes": [node.hex() for node in proof.path],
            },
        }
        if kind == "digest":  # a registered statement's entry: the statement, to check it by
            statement = registered_statement(tables.store, index, _data_or_none(log, index))
            if statement is not None:
                entry["statement"] = base64.b64encode(statement).decode("ascii")
        entries.append(entry)
    more = len(grouped) > limit
    return {
        "hash": digest,
        "entries": entries,
        "checkpoint": checkpoint,
        "next_cursor": indexes[-1] + 1 if more else None,
    }
