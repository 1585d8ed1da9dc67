"""Auditing a fact store (docs/formats.md §5 "Lineage"): every stored body checked again, serially
or split over worker processes, and the edge index compared with the edges the bodies declare.

With ``jobs > 1`` worker processes each open the SQLite file read-only and check their key ranges
(cut at two-byte prefixes); this process joins their results in key order, so the report is the
serial one, byte for byte. PostgreSQL is read serially.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from affidavit.attest.errors import StoreError
from affidavit.attest.stores.fact_rows import BATCH, Bound, raw_rows
from affidavit.attest.stores.sqlite import SqliteConnection
from affidavit.verify import errors
from affidavit.verify.lineage.audit import (
    AuditReport,
    Checked,
    EdgeDigest,
    EdgeIndex,
    audit_checked,
    check_records,
    with_edge_index_check,
)

__all__ = ["audit_store", "range_bounds"]


def audit_store(  # noqa: PLR0917 - the store's parts
    db: Any, path: str, edges: EdgeIndex, count: Callable[[], int], jobs: int, ranges: int | None
) -> AuditReport:
    """Audit every fact stored in ``db`` (the file ``path``; ``edges`` its edge index), with
    ``jobs`` worker processes over ``ranges`` key ranges (default: 8 per job, more for big
    stores). Each range is its own transaction: a concurrent write may be seen by some only.

    Raises:
        ``lineage.store_invalid``: the store cannot be read.
    """
    digest = EdgeDigest()
    if db.dialect != "sqlite":
        jobs = 1  # the worker processes open the SQLite file; PostgreSQL reads serially
    try:
        if jobs <= 1:
            rows = raw_rows(db, None)
            batches = iter(lambda: list(itertools.islice(rows, BATCH)), [])
            report = audit_checked(
                digest.add_checked(item) for batch in batches for item in check_records(batch)
            )
            return with_edge_index_check(report, edges, digest)
        bounds = range_bounds(ranges if ranges is not None else _default_ranges(count(), jobs))
    except StoreError as e:
        raise errors.LineageError("lineage.store_invalid", f"{path}: {e}") from None

    where = os.path.abspath(path)
    with ProcessPoolExecutor(jobs) as pool:  # a worker's LineageStoreInvalid is raised here
        shares = pool.map(_check_range, [where] * len(bounds), bounds)
        report = audit_checked(digest.add_checked(item) for share in shares for item in share)
    return with_edge_index_check(report, edges, digest)


def _default_ranges(count: int, jobs: int) -> int:
    # Enough ranges to keep every worker busy and this process joining as results arrive, each
    # at most ~25,000 facts (memory per result), at most 4,096 (two-byte key prefixes).
    return max(8 * jobs, min(4096, count // 25_000 + 1))


def range_bounds(count: int) -> list[Bound]:
    """``count`` contiguous key ranges cut at two-byte prefixes, the first open below (where
    keys that are not 32-byte blobs sort, in a tampered store) and the last open above."""
    count = max(1, min(count, 4096))
    cuts = [(i * 65536 // count).to_bytes(2, "big") for i in range(1, count)]
    lows: list[bytes | None] = [None, *cuts]
    highs: list[bytes | None] = [*cuts, None]
    return list(zip(lows, highs, strict=True))


def _check_range(path: str, bound: Bound) -> list[Checked]:
    """Check the records in one key range (runs in a worker process; docs/formats.md §5)."""
    try:
        db = SqliteConnection.open(path, mode="ro", timeout=5.0)
    except StoreError as e:
        raise errors.LineageError("lineage.store_invalid", f"{path}: {e}") from None
    try:
        return check_records(raw_rows(db, bound))
    except StoreError as e:
        raise errors.LineageError("lineage.store_invalid", f"{path}: {e}") from None
    finally:
        db.close()
