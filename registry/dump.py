"""A registry dump: its files, its signed manifest, and the checks an import runs before it
writes anything (docs/formats.md §9, docs/postgresql.md).

A dump is a folder: one JSON Lines file per table (:data:`TABLES`), ``manifest.json`` naming each
file's SHA-256 and row count, the schema versions and the log's id, key, size, root and latest
checkpoint, and ``manifest.sig``, the registry key's Ed25519 signature over
``"affidavit.registry-export/v1\\n" || manifest.json`` (:func:`signed_message`).

:func:`read_dump` trusts nothing in the folder until it is proven under ``trusted_key``, the key
the operator gives: step 1 the manifest's signature (``registry.dump_unsigned``,
``registry.dump_signature_invalid``); step 2 each file's hash and row count
(``registry.dump_file_mismatch``, ``registry.dump_count_mismatch``); step 3 the log
(:mod:`affidavit.registry.dump_log`); step 4 each fact's hash recomputed from its body
(``registry.dump_fact_mismatch``); step 5 each SCITT row and sequenced entry against the log
(``registry.dump_entry_mismatch``). Those are exit 1: the dump was read and is not authentic. A
dump that cannot be read at all (a file missing, not JSON, a schema newer than this Affidavit's)
is ``registry.dump_invalid``, exit 2.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from affidavit.attest.keyring import SigningKey
from affidavit.attest.log.storage import COMPONENT as LOG_COMPONENT
from affidavit.attest.log.storage import MIGRATIONS as LOG_MIGRATIONS
from affidavit.registry.db import REGISTRY_MIGRATIONS
from affidavit.registry.dump_log import LOG_TABLES, ProvenLog, Rows, bad_dump, prove_log, refused
from affidavit.registry.scitt import COMPONENT as SCITT_COMPONENT
from affidavit.registry.scitt import MIGRATIONS as SCITT_MIGRATIONS
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.json.strict import load_object, loads
from affidavit.verify.lineage.facts import parse_fact

__all__ = [
    "COMPONENTS",
    "FORMAT",
    "MANIFEST",
    "SIGNATURE",
    "SIGNATURE_FORMAT",
    "TABLES",
    "VerifiedDump",
    "encode_row",
    "read_dump",
    "signature_document",
    "signed_message",
]

FORMAT: Final = "affidavit.registry-export/v1"
SIGNATURE_FORMAT: Final = "affidavit.registry-export-signature/v1"
MANIFEST: Final = "manifest.json"
SIGNATURE: Final = "manifest.sig"
_MAX_MANIFEST_BYTES: Final = 1 << 20
# component -> migrations: the schemas a dump's store holds (the fact store has none of its own).
COMPONENTS: Final = {
    LOG_COMPONENT: LOG_MIGRATIONS,
    "registry": REGISTRY_MIGRATIONS,
    SCITT_COMPONENT: SCITT_MIGRATIONS,
}

# table -> (columns, ORDER BY): every table of the three components, in an order that inserts
# cleanly (no foreign keys between them).
TABLES: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    **LOG_TABLES,
    "registry_meta": (("key", "value"), "key"),
    "registry_contracts": (
        (
            "adapter_id",
            "adapter_version",
            "contract_hash",
            "declaration",
            "entry",
            "leaf_index",
            "seq",
        ),
        "seq",
    ),
    "registry_api_keys": (
        ("key_id", "token_sha256", "scopes", "label", "created_at", "revoked", "publishers"),
        "key_id",
    ),
    "registry_fact_index": (
        ("seq", "hash", "entity", "relation", "scope", "confidence"),
        "seq",
    ),
    "meta": (("key", "value"), "key"),  # the fact store's format marker
    "facts": (("hash", "scope", "body"), "hash"),
    "edges": (("source", "derived"), "source, derived"),
    "scitt_entries": (
        ("entry_id", "leaf_index", "statement", "issuer", "subject", "registered_at"),
        "entry_id",
    ),
}
# Tables a dump written before they were exported may lack (issue 31): read as empty. Every
# other table must be listed (a dump is the whole store: tests/registry/test_export_tables.py).
ADDED_LATER: Final = frozenset({"log_sequenced", "scitt_entries"})


@dataclass(frozen=True, slots=True)
class VerifiedDump:
    """A dump proven under ``trusted_key``: its rows, and what was checked of its log."""

    tables: Mapping[str, Rows]
    trusted_key: Ed25519PublicKey
    log: ProvenLog

    def summary(self) -> dict[str, Any]:
        """``{tree_size, root_hash, counts, trusted_key, heads_verified}``: what an import says
        (``counts``: rows per table)."""
        return {
            "tree_size": self.log.tree_size,
            "root_hash": self.log.root_hash,
            "counts": {table: len(rows) for table, rows in self.tables.items()},
            "trusted_key": self.trusted_key.b64,
            "heads_verified": self.log.heads_verified,
        }


# -- writing ----------------------------------------------------------------------------------


def encode_row(row: Sequence[Any]) -> bytes:
    """A row as its line of a table file (read back by :func:`_decode_row`): a JSON array of
    the column values, bytes as ``{"b64": ...}``, everything else as it is."""
    values = [
        {"b64": base64.b64encode(bytes(v)).decode("ascii")}
        if isinstance(v, bytes | bytearray | memoryview)
        else v
        for v in row
    ]
    return (json.dumps(values, ensure_ascii=False) + "\n").encode("utf-8")


def signed_message(manifest: bytes) -> bytes:
    """The bytes ``manifest.sig`` signs: ``"affidavit.registry-export/v1\\n"`` then the manifest
    file's bytes as stored (docs/formats.md §9). The context line keeps the signature from ever
    reading as another message the registry key signs: a tree head (no newline), a checkpoint
    (whose second line is a number) or a state file (``affidavit.log_state.v1|``)."""
    return FORMAT.encode("ascii") + b"\n" + manifest


def signature_document(key: SigningKey, manifest: bytes) -> bytes:
    """The bytes of ``manifest.sig`` for ``manifest`` signed by ``key``."""
    document = {
        "format": SIGNATURE_FORMAT,
        "algorithm": "Ed25519",
        "public_key": key.public_key.b64,  # informative: the import trusts its own key
        "signature": key.sign_b64(signed_message(manifest)),
    }
    return (json.dumps(document, indent=2) + "\n").encode("ascii")


# -- reading and proving ------------------------------------------------------------------------


def read_dump(directory: str | Path, trusted_key: Ed25519PublicKey) -> VerifiedDump:
    """Read the dump in ``directory`` and prove it under ``trusted_key`` (module docstring).

    Raises:
        ``registry.dump_invalid`` (exit 2): a file is missing or unreadable, or the
            dump's schema is newer than this Affidavit's.
        ``registry.dump_unsigned``, ``registry.dump_signature_invalid``,
            ``registry.dump_file_mismatch``, ``registry.dump_count_mismatch``,
            ``registry.dump_fact_mismatch`` and the log's codes
            (:func:`affidavit.registry.dump_log.prove_log`) (exit 1): it is not authentic.
    """
    folder = Path(directory)
    unverified_manifest = _read_bytes(folder / MANIFEST, "no manifest.json (not an export)")
    _check_signature(folder, unverified_manifest, trusted_key)  # step 1
    manifest = _parse_manifest(unverified_manifest)
    tables = {table: _read_table(folder, table, manifest) for table in TABLES}  # step 2
    _check_schema(manifest)
    proven = prove_log(manifest["log"], tables, trusted_key)  # step 3
    _check_facts(tables["facts"])  # step 4
    _check_entries(tables, proven.tree_size)  # step 5
    return VerifiedDump(tables, trusted_key, proven)


def _read_bytes(path: Path, missing: str, limit: int | None = None) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except FileNotFoundError:
        raise bad_dump(f"{path.parent}: {missing}", file=path.name) from None
    except OSError as e:
        raise bad_dump(f"{path}: {e.strerror or e}", file=path.name) from None
    if limit is not None and len(data) > limit:
        raise bad_dump(f"{path}: larger than {limit} bytes", file=path.name)
    return data


def _check_signature(folder: Path, manifest: bytes, trusted_key: Ed25519PublicKey) -> None:
    """Step 1: ``manifest.sig`` is an Ed25519 signature of the manifest by ``trusted_key``."""
    path = folder / SIGNATURE
    if len(manifest) > _MAX_MANIFEST_BYTES:
        raise bad_dump(f"{folder / MANIFEST}: larger than {_MAX_MANIFEST_BYTES} bytes")
    if not path.exists() and not path.is_symlink():
        raise refused(
            "registry.dump_unsigned",
            f"{folder}: the manifest is not signed (no {SIGNATURE}); an unsigned dump cannot be "
            "told from an edited one",
        )
    unverified = _read_bytes(path, f"no {SIGNATURE}", _MAX_MANIFEST_BYTES)
    try:
        document = load_object(unverified, what=SIGNATURE)
        if document.get("format") != SIGNATURE_FORMAT or document.get("algorithm") != "Ed25519":
            raise bad_dump(f"{path}: not a {SIGNATURE_FORMAT} Ed25519 signature")
        signature = decode_signature_b64(str(document.get("signature")))
        claimed = document.get("public_key")
        signer = Ed25519PublicKey.from_b64(claimed) if isinstance(claimed, str) else None
    except errors.AffidavitError as e:
        if e.code == "registry.dump_invalid":
            raise
        raise bad_dump(f"{path}: {e.message}") from None
    try:
        verify_ed25519(trusted_key, signed_message(manifest), signature)
    except errors.SignatureError:
        by = "" if signer is None else f" (it names key {signer.b64})"
        raise refused(
            "registry.dump_signature_invalid",
            f"{folder}: the manifest's signature does not verify under the trusted key "
            f"{trusted_key.b64}{by}",
            trusted_key=trusted_key.b64,
        ) from None


def _parse_manifest(unverified: bytes) -> dict[str, Any]:
    """The manifest (signed, so authentic), strictly parsed; a malformed one is exit 2."""
    try:
        manifest = load_object(unverified, what="manifest")
    except errors.AffidavitError as e:
        raise bad_dump(f"manifest.json: {e.message}") from None
    listed = (
        set(manifest.get("counts") or ()) if isinstance(manifest.get("counts"), dict) else set()
    )
    present = set(TABLES) - (ADDED_LATER - listed)  # an older dump may lack what came later
    names = {f"{t}.jsonl" for t in present}
    if (
        manifest.get("format") != FORMAT
        or not isinstance(manifest.get("files"), dict)
        or not isinstance(manifest.get("counts"), dict)
        or not isinstance(manifest.get("log"), dict)
        or not isinstance(manifest.get("schema"), dict)
    ):
        raise bad_dump(f"manifest.json is not a {FORMAT} manifest")
    if set(manifest["files"]) != names or set(manifest["counts"]) != present:
        raise bad_dump("the manifest does not list exactly the store's tables")
    return manifest


def _read_table(folder: Path, table: str, manifest: Mapping[str, Any]) -> Rows:
    """Step 2: one table file, its hash and its row count as the signed manifest names them."""
    name = f"{table}.jsonl"
    if table in ADDED_LATER and table not in manifest["counts"]:
        return []  # a dump written before this table was exported (ADDED_LATER)
    data = _read_bytes(folder / name, f"{name} is missing")
    if hashlib.sha256(data).hexdigest() != manifest["files"][name]:
        raise refused(
            "registry.dump_file_mismatch",
            f"{name}: SHA-256 differs from the signed manifest (edited or truncated)",
            file=name,
        )
    width = len(TABLES[table][0])
    try:
        rows = [loads(line) for line in data.decode("utf-8").splitlines()]
        decoded = [_decode_row(row, width) for row in rows]
    except (errors.AffidavitError, UnicodeError, ValueError) as e:
        message = e.message if isinstance(e, errors.AffidavitError) else str(e)
        raise bad_dump(f"{name}: {message}", file=name) from None
    if manifest["counts"][table] != len(decoded):
        raise refused(
            "registry.dump_count_mismatch",
            f"{name}: {len(decoded)} rows, the signed manifest counts {manifest['counts'][table]}",
            file=name,
        )
    return decoded


def _decode_row(row: Any, width: int) -> list[Any]:
    if not isinstance(row, list) or len(row) != width:
        raise ValueError(f"a row is not a list of {width} values")
    return [_decode(v) for v in row]


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) != {"b64"}:
            raise ValueError("a value object is not {b64}")
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, TypeError) as e:
            raise ValueError(f"bad base64: {e}") from None
    return value


def _check_schema(manifest: Mapping[str, Any]) -> None:
    for component, version in manifest["schema"].items():
        if not isinstance(version, int) or version > len(COMPONENTS.get(component, ())):
            raise bad_dump(
                f"the dump's {component} schema {version} is newer than this Affidavit's"
            )


def _check_facts(rows: Rows) -> None:
    """Step 4: each fact's hash recomputed from its body (docs/formats.md §5); the body is the
    stored JSON, text or bytes."""
    for key, _scope, body in rows:
        if not isinstance(key, bytes) or not isinstance(body, str | bytes):
            raise bad_dump("facts.jsonl: a fact row is not (hash, scope, body)")
        try:
            fact = parse_fact(loads(body), what="exported fact")
        except errors.AffidavitError as e:
            raise bad_dump(f"facts.jsonl: fact {key.hex()}: {e.message}") from None
        if fact.hash != key.hex():
            raise refused(
                "registry.dump_fact_mismatch",
                f"exported fact {key.hex()} hashes to {fact.hash}",
                fact=key.hex(),
            )


def _check_entries(tables: Mapping[str, Rows], tree_size: int) -> None:
    """Step 5: each SCITT row's entry ID is the SHA-256 of its statement and the log's leaf at its
    index is that entry (docs/formats.md §10); each sequenced entry's hash is its data's leaf
    hash (RFC 9162 §2.1.1), at an index past the tree.

    Raises:
        ``registry.dump_entry_mismatch``: a row is not what its log says (exit 1).
    """
    leaves = {int(index): data for index, data in tables["log_entries"]}
    for entry_id, leaf_index, statement, *_ in tables["scitt_entries"]:
        if not isinstance(statement, bytes) or not isinstance(leaf_index, int):
            raise bad_dump("scitt_entries.jsonl: a row is not (entry_id, leaf_index, statement...)")
        entry = hashlib.sha256(statement).digest()
        if entry.hex() != entry_id or leaves.get(leaf_index) != entry:
            raise refused(
                "registry.dump_entry_mismatch",
                f"SCITT entry {str(entry_id)[:64]}: not the SHA-256 of its statement, or not the"
                f" log's leaf {leaf_index}",
                entry_id=str(entry_id)[:64],
            )
    for index, digest, data in tables["log_sequenced"]:
        if not isinstance(index, int) or not isinstance(data, bytes):
            raise bad_dump("log_sequenced.jsonl: a row is not (idx, hash, data)")
        if index < tree_size or digest != leaf_hash(data):
            raise refused(
                "registry.dump_entry_mismatch",
                f"sequenced entry {index}: inside the tree, or its hash is not its data's",
                index=index,
            )
