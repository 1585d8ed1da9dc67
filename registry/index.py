"""What a log entry is about: the hashes the lookup index files it under (issue 26).

>>> from affidavit.verify.json.canonical import py_compact
>>> leaf = py_compact({"deal_id": "deal-1", "event_hash": "ab" * 32, "event_id": "e1",
...                    "event_type": "OUTCOME_RECORDED", "timestamp": "2026-01-01T00:00:00Z"})
>>> [(s.field, s.digest[:8]) for s in subjects(leaf)]  # doctest: +NORMALIZE_WHITESPACE
[('leaf_hash', 'fcebf5a9'), ('data_sha256', '47d8ed65'), ('event_hash', 'abababab'),
 ('deal_id', 'b7ccaea5')]
>>> kind_of(leaf)
'bundle'

:func:`subjects` reads only the leaf's bytes, so the registry, a monitor replaying the tiles and
``affidavit lookup`` derive the same rows: every leaf is filed under its RFC 9162 leaf hash and
the SHA-256 of its bytes, then by its kind (the table of docs/formats.md §11). Hashes a leaf
claims for itself are recomputed, never copied; a leaf that is not what it claims is ``raw``; a
32-byte leaf's statement is supplied (``subjects(leaf, statement=...)``) and must hash to it.
A *name* is filed under the SHA-256 of its UTF-8 (docs/adr/0017). Filed is not vouched for
(docs/transparency.md "Lookup").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.bundles.events import FINALITY_EVENT_TYPES
from affidavit.verify.contracts.contract import contract_hash
from affidavit.verify.contracts.manifest import entry_hash
from affidavit.verify.dsse.envelope import parse_envelope
from affidavit.verify.dsse.statement import statement_of
from affidavit.verify.json.canonical import jcs, py_compact
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.json.strict import loads
from affidavit.verify.lineage.facts import parse_fact
from affidavit.verify.receipts.format import parse_receipt
from affidavit.verify.scitt.statement import SignedStatement, parse_statement

__all__ = [
    "CONTRACT_RECORD_TYPE",
    "FIELDS",
    "KINDS",
    "MAX_FIELDS",
    "Subject",
    "kind_of",
    "name_digest",
    "registered_subjects",
    "subjects",
]

# docs/formats.md §3: the record type of a contract's leaf (fixed forever).
CONTRACT_RECORD_TYPE: Final = "affidavit.registry.adapter_entry.v1"
# Every field a subject may be filed under, in the order they are derived.
FIELDS: Final = (
    "leaf_hash",
    "data_sha256",
    "contract_hash",
    "entry_hash",
    "adapter_id",
    "adapter_id@version",
    "event_hash",
    "deal_id",
    "receipt_hash",
    "source_sha256",
    "content_sha256",
    "fact_hash",
    "derived_from",
    "entity",
    "subject_sha256",
    "subject_name",
    "statement_hash",
    "subject",
    "issuer",
)
MAX_FIELDS: Final = len(FIELDS)  # one entry matches one hash under at most this many fields
_BUNDLE_LEAF_KEYS: Final = frozenset(
    {"deal_id", "event_hash", "event_id", "event_type", "timestamp"}
)
_COSE_SIGN1_TAG: Final = b"\xd2"  # CBOR major type 6, tag 18 (RFC 9052 §4.2): COSE_Sign1_Tagged
_DIGEST_BYTES: Final = 32
_MAX_DSSE_SUBJECTS: Final = 64  # a Statement with more is filed by its leaf only


@dataclass(frozen=True, slots=True)
class Subject:
    """One row of the index: the leaf's ``kind``, the ``field`` and the 64-hex ``digest``."""

    kind: str
    field: str
    digest: str


def name_digest(name: str) -> str:
    """How a name is filed: the hex SHA-256 of its UTF-8 (lone surrogates kept)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def kind_of(leaf_data: bytes) -> str:
    """What the leaf is (:data:`KINDS`, module docstring)."""
    return _classify(leaf_data)[0]


def subjects(leaf_data: bytes, *, statement: bytes | None = None) -> list[Subject]:
    """Every (kind, field, digest) the leaf is filed under, once each, in :data:`FIELDS` order:
    first its RFC 9162 leaf hash and the SHA-256 of its bytes. Never raises: what does not parse
    is ``raw``. ``statement``: the Signed Statement of a ``digest`` leaf; when
    :func:`registered_subjects` proves it, its ``subject`` and ``issuer`` too."""
    kind, found = _classify(leaf_data)
    if kind == "digest" and statement is not None:
        found = [*found, *registered_subjects(leaf_data, statement)]
    rows = [
        ("leaf_hash", hashlib.sha256(b"\x00" + leaf_data).hexdigest()),
        ("data_sha256", hashlib.sha256(leaf_data).hexdigest()),
        *found,
    ]
    order = {name: position for position, name in enumerate(FIELDS)}
    unique = dict.fromkeys(rows)  # the same (field, digest) twice is one row
    return [Subject(kind, f, d) for f, d in sorted(unique, key=lambda row: order[row[0]])]


Found = list[tuple[str, str]]


def _classify(leaf_data: bytes) -> tuple[str, Found]:
    """``(kind, [(field, digest), ...])`` beyond the two every leaf has."""
    if leaf_data.startswith(_COSE_SIGN1_TAG):
        found = _scitt(leaf_data)
        if found is not None:
            return "scitt", found
    if len(leaf_data) == _DIGEST_BYTES:  # docs/formats.md §10: the entry of a registration
        return "digest", [("statement_hash", leaf_data.hex())]
    if not leaf_data.startswith(b"{"):
        return "raw", []
    try:
        document = loads(leaf_data)
    except errors.AffidavitError:
        return "raw", []
    if not isinstance(document, dict):
        return "raw", []
    for kind, reader in _READERS:
        try:
            found = reader(leaf_data, document)
        except (errors.AffidavitError, KeyError, TypeError, ValueError, AttributeError):
            continue  # not this kind (a raw leaf need not be well formed as anything)
        if found is not None:
            return kind, found
    return "raw", []


def _scitt(data: bytes) -> Found | None:
    """docs/formats.md §10: a Signed Statement, filed under its leaf entry, recomputed."""
    try:
        statement = parse_statement(data)
    except errors.AffidavitError:
        return None
    return [("statement_hash", statement.leaf_entry.hex()), *_names(statement)]


def _names(statement: SignedStatement) -> Found:
    """A Signed Statement's CWT subject and issuer, as names are filed."""
    return [("subject", name_digest(statement.subject)), ("issuer", name_digest(statement.issuer))]


def registered_subjects(leaf_data: bytes, statement: bytes) -> Found:
    """``[("subject", ...), ("issuer", ...)]`` when ``statement``, as registered, is the Signed
    Statement whose leaf entry ``leaf_data`` is (docs/formats.md §10); else ``[]``."""
    if len(leaf_data) != _DIGEST_BYTES or hashlib.sha256(statement).digest() != leaf_data:
        return []
    try:
        parsed = parse_statement(statement)
    except errors.AffidavitError:
        return []
    if parsed.leaf_entry != leaf_data:
        return []
    return _names(parsed)


def _contract(_data: bytes, document: Mapping[str, Any]) -> Found | None:
    """docs/formats.md §3: ``jcs({record_type, entry, declaration})``."""
    if document.get("record_type") != CONTRACT_RECORD_TYPE:
        return None
    entry, declaration = document["entry"], document["declaration"]
    if not isinstance(entry, dict) or not isinstance(declaration, dict):
        return None
    adapter_id, version = declaration["adapter_id"], declaration["adapter_version"]
    if not isinstance(adapter_id, str) or not isinstance(version, str):
        return None
    return [
        ("contract_hash", contract_hash(declaration)),
        ("entry_hash", entry_hash(entry)),
        ("adapter_id", name_digest(adapter_id)),
        ("adapter_id@version", name_digest(f"{adapter_id}@{version}")),
    ]


def _bundle(data: bytes, document: Mapping[str, Any]) -> Found | None:
    """docs/formats.md §4 "Merkle log": exactly the finality leaf, byte for byte."""
    if set(document) != _BUNDLE_LEAF_KEYS or not all(isinstance(v, str) for v in document.values()):
        return None
    if document["event_type"] not in FINALITY_EVENT_TYPES or not is_hex64(document["event_hash"]):
        return None
    if py_compact(document) != data:
        return None
    return [("event_hash", document["event_hash"]), ("deal_id", name_digest(document["deal_id"]))]


def _receipt(data: bytes, document: Mapping[str, Any]) -> Found | None:
    """docs/formats.md §7 "Receipts in the log": ``jcs(receipt)``."""
    if "receipt_version" not in document:
        return None
    receipt = parse_receipt(document)
    if jcs(document) != data:
        return None
    return [
        ("receipt_hash", receipt.receipt_hash),
        ("source_sha256", receipt.source.sha256),
        ("content_sha256", receipt.content.sha256),
    ]


def _fact(_data: bytes, document: Mapping[str, Any]) -> Found | None:
    """docs/formats.md §5: a fact document (its FactHash recomputed)."""
    if "relation" not in document or "entity" not in document:
        return None
    fact = parse_fact(document)
    found = [("fact_hash", str(fact.hash))]
    found += [("derived_from", str(parent)) for parent in fact.derived_from]
    found.append(("entity", name_digest(fact.entity)))
    return found


def _dsse(data: bytes, document: Mapping[str, Any]) -> Found | None:
    """docs/formats.md §8: a DSSE envelope of an in-toto Statement v1."""
    if "payloadType" not in document:
        return None
    statement = statement_of(parse_envelope(data))
    if len(statement.subjects) > _MAX_DSSE_SUBJECTS:
        return []
    found: Found = []
    for subject in statement.subjects:
        digest = subject.digest.get("sha256")
        if is_hex64(digest):
            found.append(("subject_sha256", str(digest)))
        if subject.name:
            found.append(("subject_name", name_digest(subject.name)))
    return found


_READERS: Final[tuple[tuple[str, Callable[[bytes, Mapping[str, Any]], Found | None]], ...]] = (
    ("contract", _contract),
    ("bundle", _bundle),
    ("receipt", _receipt),
    ("fact", _fact),
    ("dsse", _dsse),
)
# Every kind a leaf may be (module docstring): the JSON documents' readers, then the rest.
KINDS: Final = (*(kind for kind, _ in _READERS), "scitt", "digest", "raw", "hash_only")
