"""Publication: attest entries, sign them, build and sign manifests, write pin files.

>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.publishing.publish import attest_document
>>> contract = {"adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0"}
>>> doc = attest_document(contract, publisher_id="demo.publisher.v1", publisher_key_id="demo_k1",
...                       published_at="2025-01-01T00:00:00Z", signing_key=None)
>>> (doc["ok"], doc["signed"], "entry_signature" in doc)
(True, False, False)

Shapes follow the peer (docs/formats.md §3): an attest document is ``{ok, entry_hash, entry,
next_steps}`` plus ``entry_signature`` when signed; a manifest entry is the 15 hashed fields plus
``entry_hash`` and ``entry_signature``; a manifest orders entries by (adapter_id, semver
adapter_version) and signs ``manifest_hash``. Signatures are Ed25519 over the UTF-8 bytes of the
hex hash, standard base64. Time is an argument: nothing here reads the clock.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from affidavit.attest.files import atomic_write
from affidavit.verify import errors
from affidavit.verify.contracts.contract import (
    DISTRIBUTION_CHANNELS,
    LIFECYCLE_STATUSES,
    contract_hash,
    input_schema_hash,
)
from affidavit.verify.contracts.lifecycle import parse_adapter_ref, parse_semver
from affidavit.verify.contracts.manifest import (
    ENTRY_HASH_FIELDS,
    ENTRY_SCHEMA_VERSION,
    MANIFEST_SCHEMA_VERSION,
    check_entry_text,
    check_signature,
    entry_hash,
    manifest_hash,
)
from affidavit.verify.contracts.pin_file import PinFile, parse_pin_file
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json.strict import loads

__all__ = [
    "DISTRIBUTION_CHANNELS",
    "PIN_FILE_NOTE",
    "Signer",
    "attest_document",
    "build_entry",
    "build_manifest",
    "entry_from_document",
    "merge_pin",
    "read_pin_file",
    "render_pin_file",
    "set_lifecycle",
    "sign_entry",
    "write_pin",
]

PIN_FILE_NOTE: Final = (
    "Written by `affidavit adapter pin`. Each pin records (adapter_id, adapter_version, "
    "contract_hash); when pinned against a manifest it also records entry_hash, publisher_id and "
    "the entry hash and signature statuses seen at pin time. `affidavit adapter pins check` "
    "recomputes every pinned contract_hash in CI. Bundle replay does not need this file."
)


class Signer(Protocol):
    """What publication needs from a private key (``attest.keyring.SigningKey`` fits)."""

    def sign(self, message: bytes) -> bytes:
        """Return the 64-byte Ed25519 signature of ``message``."""
        ...

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The matching public key."""
        ...


def _sign_hex(signer: Signer, hex_digest: str) -> str:
    # docs/formats.md §3: Ed25519 over the UTF-8 bytes of the 64-char hex string, standard base64.
    return base64.b64encode(signer.sign(hex_digest.encode("ascii"))).decode("ascii")


def _from_declaration(
    given: str | None, declaration: Mapping[str, Any], key: str, default: str
) -> str:
    # seed 003: lifecycle fields live on the declaration (outside its hashes); a flag overrides.
    if given is not None:
        return given
    value = declaration.get(key)
    return value if isinstance(value, str) and value else default


def build_entry(
    declaration: Mapping[str, Any],
    *,
    publisher_id: str,
    publisher_key_id: str,
    published_at: str,
    status: str | None = None,
    distribution_channel: str | None = None,
    docs_url: str | None = None,
    declaration_url: str | None = None,
    release_notes: str | None = None,
    supersedes: str | None = None,
    replaced_by: str | None = None,
) -> dict[str, Any]:
    """The 15 hashed entry fields for a declaration, in the peer's order (docs/formats.md §3),
    its hashes recomputed. Lifecycle values not given default to the declaration's own, else
    active, third_party and "".

    Raises:
        ``entry.lifecycle_invalid``: unknown status or channel, or a malformed adapter_id@semver
            pointer.
        ``entry.control_character``: a field would sign a control character (docs/formats.md §3).
    """
    status = _from_declaration(status, declaration, "status", "active")
    channel = _from_declaration(
        distribution_channel, declaration, "distribution_channel", "third_party"
    )
    supersedes = _from_declaration(supersedes, declaration, "supersedes", "")
    replaced_by = _from_declaration(replaced_by, declaration, "replaced_by", "")
    for what, value, allowed in (
        ("status", status, LIFECYCLE_STATUSES),
        ("channel", channel, DISTRIBUTION_CHANNELS),
    ):
        if value not in allowed:
            raise errors.ContractError(
                "entry.lifecycle_invalid", f"{what} must be one of {allowed}"
            )
    for pointer in (supersedes, replaced_by):
        if pointer:
            parse_adapter_ref(pointer)
    values = {
        "entry_schema_version": ENTRY_SCHEMA_VERSION,
        "adapter_id": declaration.get("adapter_id", ""),
        "adapter_version": declaration.get("adapter_version", ""),
        "contract_hash": contract_hash(declaration),
        "input_schema_hash": input_schema_hash(declaration),
        "status": status,
        "distribution_channel": channel,
        "published_at": published_at,
        "docs_url": docs_url or "",
        "declaration_url": declaration_url or "",
        "release_notes": release_notes or "",
        "supersedes": supersedes,
        "replaced_by": replaced_by,
        "publisher_id": publisher_id,
        "publisher_key_id": publisher_key_id,
    }
    entry = {key: values[key] for key in ENTRY_HASH_FIELDS}
    check_entry_text(entry)  # every door that signs an entry refuses control characters
    return entry


def sign_entry(entry: Mapping[str, Any], signer: Signer) -> dict[str, Any]:
    """The entry's 15 fields plus ``entry_hash`` and ``entry_signature`` (one it carries is
    kept if it verifies under the signer's key).

    Raises:
        ``entry.hash_mismatch``: the entry carries an ``entry_hash`` that does not recompute.
        ``entry.signature_invalid``: it carries an ``entry_signature`` that is not the signer's.
    """
    recomputed = entry_hash(entry)
    claimed = entry.get("entry_hash")
    if claimed is not None and claimed != recomputed:
        raise errors.ContractError(
            "entry.hash_mismatch",
            f"{_label(entry)}: entry_hash {claimed} does not recompute ({recomputed})",
            details={"expected": claimed, "recomputed": recomputed},
        )
    existing = entry.get("entry_signature")
    if existing is not None and check_signature(signer.public_key, recomputed, existing) != "ok":
        raise errors.ContractError(
            "entry.signature_invalid",
            f"{_label(entry)}: existing entry_signature does not verify under the signing key",
        )
    signed = {key: entry.get(key, "") for key in ENTRY_HASH_FIELDS}
    signed["entry_hash"] = recomputed
    signed["entry_signature"] = existing if existing is not None else _sign_hex(signer, recomputed)
    return signed


def attest_document(
    declaration: Mapping[str, Any],
    *,
    publisher_id: str,
    publisher_key_id: str,
    published_at: str,
    signing_key: Signer | None,
    **entry_fields: str | None,
) -> dict[str, Any]:
    """The attest document for a (linted) declaration (module docstring); ``entry_fields`` are
    :func:`build_entry`'s optional keywords. Unsigned documents say so in ``next_steps``.
    """
    entry = build_entry(
        declaration,
        publisher_id=publisher_id,
        publisher_key_id=publisher_key_id,
        published_at=published_at,
        **entry_fields,
    )
    digest = entry_hash(entry)
    document: dict[str, Any] = {"ok": True, "entry_hash": digest, "entry": entry}
    ident = f"--id {entry['adapter_id']} --version {entry['adapter_version']}"
    pin_step = f"Pin it: affidavit adapter pin {ident} --hash {entry['contract_hash']}"
    if signing_key is not None:
        document["entry_signature"] = _sign_hex(signing_key, digest)
        document["signed"] = True
        steps = [
            "Add it to a manifest: affidavit adapter manifest build ENTRY... --key KEYFILE "
            "--out adapter-contracts.manifest.json",
            pin_step + " --manifest MANIFEST --public-key-base64 KEY",
        ]
    else:
        document["signed"] = False
        steps = [
            "UNSIGNED: this entry carries no entry_signature and proves nothing about its "
            "publisher. Sign it with --key KEYFILE, or let `affidavit adapter manifest "
            "build --key KEYFILE` sign it.",
            pin_step,
        ]
    document["next_steps"] = steps
    return document


def entry_from_document(document: Mapping[str, Any], *, source: str = "entry") -> dict[str, Any]:
    """The entry of an attest document (with its top-level ``entry_hash`` and
    ``entry_signature``) or a bare entry.

    Raises:
        ``entry.invalid``: not an object, or an identifying field is missing or not a string.
    """
    if not isinstance(document, Mapping):
        raise errors.ContractError("entry.invalid", f"{source}: an entry must be a JSON object")
    inner = document.get("entry")
    if isinstance(inner, Mapping):
        entry = dict(inner)
        for key in ("entry_hash", "entry_signature"):
            if key in document and key not in entry:
                entry[key] = document[key]
    else:
        entry = dict(document)
    for key in ENTRY_HASH_FIELDS:
        if key in entry and not isinstance(entry[key], str):
            raise errors.ContractError("entry.invalid", f"{source}: {key} must be a string")
    for key in ("adapter_id", "adapter_version", "contract_hash"):
        if not entry.get(key):
            raise errors.ContractError("entry.invalid", f"{source}: {key} is missing")
    for key in ("entry_hash", "entry_signature"):
        if key in entry and not isinstance(entry[key], str):
            raise errors.ContractError("entry.invalid", f"{source}: {key} must be a string")
    return entry


def _label(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('adapter_id', '?')}@{entry.get('adapter_version', '?')}"


def _order_key(entry: Mapping[str, Any]) -> tuple[str, tuple[int, int, int]]:
    try:
        version = parse_semver(entry["adapter_version"])
    except errors.ContractError as e:
        if e.code != "pin.invalid_argument":
            raise
        raise errors.ContractError(
            "entry.invalid", f"{_label(entry)}: adapter_version is not semver"
        ) from None
    return entry["adapter_id"], version


def build_manifest(
    entries: Iterable[Mapping[str, Any]],
    signer: Signer,
    *,
    publisher_id: str,
    publisher_key_id: str,
    generated_at: str,
    manifest_version: str = "1",
) -> dict[str, Any]:
    """Sign each entry, order them, hash and sign the manifest (docs/formats.md §3).

    Raises:
        ``entry.invalid``: an entry's adapter_version is not semver.
        ``entry.publisher_mismatch``: an entry names another publisher_id or publisher_key_id.
        ``manifest.duplicate_entry``: two entries share (adapter_id, adapter_version).
        ``entry.hash_mismatch``, ``entry.signature_invalid``: as :func:`sign_entry`.
    """
    signed: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        for key, want in (("publisher_id", publisher_id), ("publisher_key_id", publisher_key_id)):
            if entry.get(key, "") != want:
                raise errors.ContractError(
                    "entry.publisher_mismatch",
                    f"{_label(entry)}: {key} is {entry.get(key, '')!r}, the manifest's is {want!r}",
                )
        ident = (entry["adapter_id"], entry["adapter_version"])
        if ident in seen:
            raise errors.ContractError(
                "manifest.duplicate_entry", f"{_label(entry)} is given twice"
            )
        seen.add(ident)
        signed.append(sign_entry(entry, signer))
    # docs/formats.md §3 "Manifest": by (adapter_id, semver adapter_version)
    signed.sort(key=_order_key)
    manifest: dict[str, Any] = {
        "manifest_schema_version": MANIFEST_SCHEMA_VERSION,
        "manifest_version": manifest_version,
        "generated_at": generated_at,
        "publisher_id": publisher_id,
        "publisher_key_id": publisher_key_id,
        "public_key_base64": signer.public_key.b64,
        "contracts": signed,
    }
    digest = manifest_hash(manifest)
    manifest["manifest_hash"] = digest
    manifest["manifest_signature"] = _sign_hex(signer, digest)
    return manifest


def set_lifecycle(
    declaration: Mapping[str, Any],
    *,
    status: str,
    replaced_by: str | None = None,
    supersedes: str | None = None,
) -> dict[str, Any]:
    """A copy of the declaration with new lifecycle fields (seed 003: outside both hashes).
    ``superseded`` is stored as ``active`` with ``replaced_by`` (required); a pointer of ``""``
    removes the field.

    Raises:
        ``entry.lifecycle_invalid``: unknown status, a bad pointer, a pointer to itself, or
            superseded without ``replaced_by``.
    """
    stored = "active" if status == "superseded" else status
    if stored not in LIFECYCLE_STATUSES:
        raise errors.ContractError(
            "entry.lifecycle_invalid",
            f"status must be active, superseded, deprecated or revoked, not {status!r}",
        )
    if status == "superseded" and not replaced_by:
        raise errors.ContractError(
            "entry.lifecycle_invalid", "superseded needs --replaced-by adapter_id@semver"
        )
    own = f"{declaration.get('adapter_id', '')}@{declaration.get('adapter_version', '')}"
    updated = dict(declaration)
    updated["status"] = stored
    for key, pointer in (("replaced_by", replaced_by), ("supersedes", supersedes)):
        if pointer is None:
            continue
        if pointer == "":
            updated.pop(key, None)
            continue
        parse_adapter_ref(pointer)
        if pointer == own:
            raise errors.ContractError(
                "entry.lifecycle_invalid", f"{key} cannot point at the contract itself"
            )
        updated[key] = pointer
    if stored == "active" and status != "superseded" and replaced_by is None:
        updated.pop("replaced_by", None)  # plain "active" clears a stale supersession pointer
    return updated


# -- pin files (docs/formats.md §3): sorted, atomic, existing pins kept -----------------------


def merge_pin(existing: PinFile | None, pin: Mapping[str, Any]) -> dict[str, Any]:
    """The pin-file document with ``pin`` added or replacing the same (id, version), other pins
    and keys kept, pins sorted by (adapter_id, adapter_version) as strings (as the peer does).
    """
    kept = [
        dict(p.raw)
        for p in (existing.pins if existing else ())
        if (p.adapter_id, p.adapter_version) != (pin["adapter_id"], pin["adapter_version"])
    ]
    kept.append(dict(pin))
    kept.sort(key=lambda p: (p["adapter_id"], p["adapter_version"]))
    document: dict[str, Any] = dict(existing.extra) if existing else {}
    document["pinned_adapters"] = kept
    document.setdefault("_note", PIN_FILE_NOTE)
    return document


def render_pin_file(document: Mapping[str, Any]) -> bytes:
    """Pin-file bytes: two-space indented JSON and a newline (the peer's layout)."""
    return (json.dumps(document, indent=2) + "\n").encode("ascii")


def read_pin_file(path: Path) -> PinFile | None:
    """Parse the pin file at ``path``; None when it does not exist.

    Raises:
        ``json.*``: the file is not strict JSON.
        ``pin.file_invalid``: the file is not a valid pin file (it is left untouched).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return parse_pin_file(loads(data))
    except errors.AffidavitError as e:
        e.message = f"{path}: {e.message}"
        raise


def write_pin(path: Path, pin: Mapping[str, Any]) -> dict[str, Any]:
    """Add or replace ``pin`` in the pin file at ``path``, atomically; returns the document.

    Raises:
        ``json.*``, ``pin.file_invalid``: the existing file is malformed.
        OSError: the file cannot be written.
    """
    document = merge_pin(read_pin_file(path), pin)
    atomic_write(path, render_pin_file(document))
    return document
