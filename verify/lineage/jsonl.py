"""A read-only fact store over the bytes of a JSON Lines file.

Each non-blank line is one of:

* an export record ``{"fact_hash": H, "fact": {...}}`` (what ``FactStore.export_jsonl`` writes):
  the fact is filed under ``H``, which an audit compares with the recomputed FactHash;
* a plain fact document, filed under its recomputed FactHash.

The caller reads the file (nothing here opens one): the bytes, or a read-only ``mmap`` of the
file, which the command line passes so that a large export costs no memory (``facts walk``,
``facts audit``). The first use indexes the lines in one pass (FactHash -> byte offset); a fact
is parsed again, from its bytes, when it is asked for, so memory holds offsets rather than facts.
Audits go over the lines and never build the index.

>>> from affidavit.verify.lineage.jsonl import JsonlFactSource
>>> data = (b'{"entity": "urn:x:a", "relation": "memory:role", '
...     b'"value": {"type": "null", "v": null}, "source": "urn:s:1", "scope": "public", '
...     b'"confidence": 0.5, "ts": "2026-01-01T00:00:00Z"}\\n')
>>> [record.where for record in JsonlFactSource(data, "facts.jsonl").records()]
['line 1']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import Fact, FactHash, is_fact_hash, parse_fact
from affidavit.verify.lineage.walk import StoredRecord

__all__ = ["JsonlFactSource", "split_record"]

_MAX_LINE: Final = 4 * 1024 * 1024


class Lines(Protocol):
    """What :class:`JsonlFactSource` reads: ``bytes``, or a read-only ``mmap.mmap`` of a file."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., /) -> int: ...


def split_record(document: Any) -> tuple[str | None, Any]:
    """Split one parsed line into ``(stored key or None, fact document)``."""
    if isinstance(document, dict) and set(document) == {"fact_hash", "fact"}:
        return document["fact_hash"], document["fact"]
    return None, document


class JsonlFactSource:
    """A :class:`~affidavit.verify.lineage.walk.FactSource` over the bytes of a JSON Lines file
    (read-only); ``name`` (the file's path) starts every error message.

    Raises (from :meth:`get` and :meth:`children`, which build the index on first use):
        ``lineage.store_invalid``: a line is not a fact or export record (the walk refuses to
            guess), or longer than 4 MiB.
    """

    def __init__(self, data: Lines, name: str) -> None:
        self.data = data
        self.path = name
        self._index: dict[str, tuple[int, int]] | None = None
        self._children: dict[str, list[FactHash]] | None = None

    def get(self, fact_hash: FactHash) -> Fact | None:
        """See :class:`~affidavit.verify.lineage.walk.FactSource`."""
        index = self._ensure_index()
        where = index.get(fact_hash)
        if where is None:
            return None
        offset, length = where
        line = self.data[offset : offset + length]
        return self._parse_line(line, where=f"offset {offset}")[1]

    def get_many(self, fact_hashes: Sequence[FactHash]) -> Mapping[FactHash, Fact]:
        """See :class:`~affidavit.verify.lineage.walk.FactSource`."""
        found: dict[FactHash, Fact] = {}
        for fact_hash in fact_hashes:
            fact = self.get(fact_hash)
            if fact is not None:
                found[fact_hash] = fact
        return found

    def children(self, fact_hash: FactHash) -> Iterable[FactHash]:
        """See :class:`~affidavit.verify.lineage.walk.FactSource`."""
        if self._children is None:
            children: dict[str, list[FactHash]] = {}
            for key, fact in self._facts():
                for parent in fact.derived_from:
                    children.setdefault(parent, []).append(FactHash(key))
            self._children = children
        return tuple(self._children.get(fact_hash, ()))

    def records(self) -> Iterator[StoredRecord]:
        """Stream every line as a raw record; the key is ``fact_hash`` when the line has one.

        A line that is not JSON is still yielded (key ``None``) so that an audit reports it.
        """
        for number, _offset, line in self._lines():
            key: str | None = None
            body = line
            try:
                key_value, document = split_record(loads(line))
            except errors.ParseError:
                yield StoredRecord(key=None, body=line, where=f"line {number}")
                continue
            if key_value is not None:
                key = key_value if isinstance(key_value, str) else repr(key_value)
                try:
                    body = jcs(document)
                except errors.CanonicalError:
                    body = line
            yield StoredRecord(key=key, body=body, where=f"line {number}")

    # --------------------------------------------------------------------------------------

    def _lines(self) -> Iterator[tuple[int, int, bytes]]:
        data, offset, number = self.data, 0, 0
        while offset < len(data):
            end = data.find(b"\n", offset) + 1 or len(data)
            number += 1
            if end - offset > _MAX_LINE:
                raise errors.LineageError(
                    "lineage.store_invalid", f"{self.path}: line {number} is too long"
                )
            line = data[offset:end]
            if line.strip():
                yield number, offset, line
            offset = end

    def _parse_line(self, line: bytes, *, where: str) -> tuple[str, Fact]:
        try:
            key, document = split_record(loads(line))
            fact = parse_fact(document, what=f"{self.path} {where}")
        except (errors.ParseError, errors.LineageError, errors.CanonicalError) as e:
            raise errors.LineageError(
                "lineage.store_invalid",
                f"{self.path} {where}: {e.message}",
                details={"cause": e.code},
            ) from e
        if key is None:
            return fact.hash, fact
        if not is_fact_hash(key):
            raise errors.LineageError(
                "lineage.store_invalid", f"{self.path} {where}: fact_hash is not a FactHash"
            )
        return str(key), fact

    def _facts(self) -> Iterator[tuple[str, Fact]]:
        for number, _offset, line in self._lines():
            yield self._parse_line(line, where=f"line {number}")

    def _ensure_index(self) -> dict[str, tuple[int, int]]:
        if self._index is None:
            index: dict[str, tuple[int, int]] = {}
            for number, offset, line in self._lines():
                key, _fact = self._parse_line(line, where=f"line {number}")
                index.setdefault(key, (offset, len(line)))
            self._index = index
        return self._index
