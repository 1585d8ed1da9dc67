"""The fact store's rows as stored (docs/formats.md §5): ``facts(hash, scope, body)`` and
``edges(source, derived)``, read as they are, whatever a tampered table holds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

from affidavit.attest.stores.store import numbered

__all__ = ["BATCH", "CHUNK", "Bound", "by_hash", "raw_rows", "row_body", "row_key"]

CHUNK: Final = 500  # keys per statement
BATCH: Final = 2048  # rows per page or audit batch

Bound = tuple[bytes | None, bytes | None]


def row_key(value: object) -> str:
    """A stored key as hex (a key that is not a blob, in a forged table, as its text)."""
    return value.hex() if isinstance(value, bytes) else str(value)


def row_body(value: bytes | str) -> bytes:
    """A stored body as bytes (PostgreSQL or a forged table may hand back text)."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)


def by_hash(
    db: Any, select: str, keys: Sequence[str], where: str = "", extra: Sequence[Any] = ()
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``SELECT <select> IN (...)<where>`` for the hex ``keys``, one statement per
    :data:`CHUNK` keys (``select``: ``"hash, body FROM facts WHERE hash"``); ``extra`` are the
    parameters of ``where``, numbered first."""
    for offset in range(0, len(keys), CHUNK):
        chunk = [bytes.fromhex(h) for h in keys[offset : offset + CHUNK]]
        marks = numbered(len(extra) + 1, len(chunk))
        yield from db.execute(
            f"SELECT {select} IN ({marks}){where}", [*extra, *chunk]
        )  # marks and fixed SQL only


def raw_rows(db: Any, bound: Bound | None) -> Iterator[tuple[str, bytes, str]]:
    """``(hex key, body bytes, where)`` for the facts in ``bound`` (all when None), key order."""
    low, high = bound if bound is not None else (None, None)
    query = "SELECT hash, body FROM facts"
    if low is not None and high is not None:
        rows = db.execute(f"{query} WHERE hash >= $1 AND hash < $2 ORDER BY hash", (low, high))
    elif low is not None:
        rows = db.execute(f"{query} WHERE hash >= $1 ORDER BY hash", (low,))
    elif high is not None:  # NULL sorts first (only in a forged table: the key is NOT NULL)
        rows = db.execute(f"{query} WHERE hash < $1 OR hash IS NULL ORDER BY hash", (high,))
    else:
        rows = db.execute(f"{query} ORDER BY hash")
    for key, body in rows:
        hex_key = row_key(key)
        yield hex_key, row_body(body), f"fact {hex_key}"
