"""Manifest entries and manifests: hashes and offline verification (docs/formats.md §3, seed 003).

>>> from affidavit.verify.contracts.manifest import entry_hash, verify_manifest
>>> entry = {"entry_schema_version": "1.0.0", "adapter_id": "acme.eval_suite.v0"}
>>> len(entry_hash(entry))
64
>>> report = verify_manifest({"contracts": []}, public_key=None)
>>> (report.ok, report.manifest_hash_status, report.manifest_signature_status)
(False, 'absent', 'absent')

Every hash is recomputed from what was received; signatures are Ed25519 over the hex string. An
unsigned manifest fails unless ``allow_unsigned=True``; a ``bad`` signature or a hash ``mismatch``
always fails. The statuses are the peer's JSON words.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from affidavit.verify import errors
from affidavit.verify.contracts.contract import LIFECYCLE_STATUSES
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.results import Problem, render_problems

__all__ = [
    "ENTRY_HASH_FIELDS",
    "ENTRY_SCHEMA_VERSION",
    "MANIFEST_SCHEMA_VERSION",
    "EntryReport",
    "HashStatus",
    "ManifestReport",
    "PublisherDocument",
    "SignatureStatus",
    "check_entry_text",
    "check_signature",
    "contracts_of",
    "entry_hash",
    "entry_hash_body",
    "manifest_hash",
    "manifest_hash_body",
    "parse_publisher_document",
    "verify_entry",
    "verify_manifest",
]

HashStatus = Literal["ok", "mismatch", "absent"]
SignatureStatus = Literal["ok", "bad", "absent", "no_public_key"]

ENTRY_SCHEMA_VERSION: Final = "1.0.0"
MANIFEST_SCHEMA_VERSION: Final = "1.0.0"
# docs/formats.md §3: the exact key set entry_hash covers, a missing key counting as "".
ENTRY_HASH_FIELDS: Final = (
    "entry_schema_version",
    "adapter_id",
    "adapter_version",
    "contract_hash",
    "input_schema_hash",
    "status",
    "distribution_channel",
    "published_at",
    "docs_url",
    "declaration_url",
    "release_notes",
    "supersedes",
    "replaced_by",
    "publisher_id",
    "publisher_key_id",
)


# C0 and C1 controls and DEL. release_notes may span lines (TAB, LF, CR); nothing else may hold one.
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def check_entry_text(entry: Mapping[str, Any]) -> None:
    """Refuse an entry whose hashed text holds a control character, before it is signed
    (docs/formats.md §3: a signed value must display as what it is); ``release_notes`` alone may
    hold TAB, LF and CR.

    Raises:
        ``entry.control_character``: the first field found holding one (exit 2).
    """
    for key in ENTRY_HASH_FIELDS:
        value = entry.get(key)
        if not isinstance(value, str):
            continue
        pattern = _CONTROL_BUT_LINES if key == "release_notes" else _CONTROL
        found = pattern.search(value)
        if found is not None:
            raise errors.ContractError(
                "entry.control_character",
                f"{key} holds control character U+{ord(found.group()):04X} at offset "
                f"{found.start()}; nothing is signed",
                details={"field": key, "offset": found.start()},
            )


def entry_hash_body(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``entry_hash`` covers (docs/formats.md §3)."""
    return {key: entry.get(key, "") for key in ENTRY_HASH_FIELDS}


def entry_hash(entry: Mapping[str, Any]) -> str:
    """Recompute ``entry_hash`` over the 15 hashed fields; extra keys are ignored."""
    return sha256_hex(py_compact(entry_hash_body(entry)))


def manifest_hash_body(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``manifest_hash`` covers (docs/formats.md §3), missing
    values filled in as the peer does.

    Raises:
        ``manifest.invalid``: ``contracts`` is not an array of objects.
    """
    return {
        "manifest_schema_version": manifest.get("manifest_schema_version", MANIFEST_SCHEMA_VERSION),
        "publisher_id": manifest.get("publisher_id", ""),
        "publisher_key_id": manifest.get("publisher_key_id", ""),
        "ordered_entry_hashes": [e.get("entry_hash", "") for e in contracts_of(manifest)],
    }


def manifest_hash(manifest: Mapping[str, Any]) -> str:
    """Recompute ``manifest_hash`` from the manifest's publisher fields and entry order."""
    return sha256_hex(py_compact(manifest_hash_body(manifest)))


def contracts_of(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The manifest's ``contracts`` array (missing or null: empty).

    Raises:
        ``manifest.invalid``: ``contracts`` is not an array, or an item is not an object.
    """
    contracts = manifest.get("contracts")
    if contracts is None:
        return []
    if not isinstance(contracts, list):
        raise errors.ContractError("manifest.invalid", "manifest 'contracts' must be an array")
    for index, item in enumerate(contracts):
        if not isinstance(item, dict):
            raise errors.ContractError(
                "manifest.invalid",
                f"manifest contracts[{index}] must be an object",
                details={"index": index},
            )
    return contracts


def check_signature(
    public_key: Ed25519PublicKey | None, hex_digest: Any, signature_b64: Any
) -> SignatureStatus:
    """Status of an Ed25519 signature over the UTF-8 bytes of ``hex_digest`` (docs/formats.md §3):
    a malformed one, or one over anything but a lowercase hex64 string, is ``bad``, never raised."""
    if signature_b64 is None:
        return "absent"
    if public_key is None:
        return "no_public_key"
    if not is_hex64(hex_digest):
        return "bad"
    if not isinstance(signature_b64, str):
        return "bad"
    try:
        verify_ed25519(public_key, hex_digest.encode("ascii"), decode_signature_b64(signature_b64))
    except errors.SignatureError as e:
        if not e.code.startswith("signature."):
            raise
        return "bad"
    return "ok"


@dataclasses.dataclass(frozen=True, slots=True)
class EntryReport:
    """What was checked for one entry. ``expected``/``recomputed`` are set on a hash mismatch."""

    index: int
    adapter_id: str
    adapter_version: str
    status: str
    entry_hash_status: HashStatus
    entry_signature_status: SignatureStatus
    status_valid: bool = True
    expected: str | None = None
    recomputed: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The peer's per-entry report shape."""
        out: dict[str, Any] = {
            "index": self.index,
            "adapter_id": self.adapter_id,
            "adapter_version": self.adapter_version,
            "status": self.status,
            "entry_hash_status": self.entry_hash_status,
        }
        if self.expected is not None:
            out["expected"] = self.expected
            out["recomputed"] = self.recomputed
        out["entry_signature_status"] = self.entry_signature_status
        if not self.status_valid:
            out["status_validity"] = "invalid"
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class ManifestReport:
    """The result of :func:`verify_manifest`. (adapter_id, adapter_version) pairs listed twice are
    ``loud_collisions`` with different contract hashes, else ``duplicate_keys`` (both fail)."""

    ok: bool
    manifest_hash_status: HashStatus
    manifest_signature_status: SignatureStatus
    loud_collisions: tuple[tuple[str, str], ...]
    duplicate_keys: tuple[tuple[str, str], ...]
    publisher_document_used: str | None
    public_key_supplied: bool
    allow_unsigned: bool
    entries: tuple[EntryReport, ...]
    manifest_hash_expected: str | None = None
    manifest_hash_recomputed: str | None = None

    @property
    def entry_count(self) -> int:
        """Number of entries checked."""
        return len(self.entries)

    def problems(self) -> tuple[Problem, ...]:
        """One problem per failed check (empty when ``ok``)."""
        reasons: list[str] = []
        if self.manifest_hash_status != "ok":
            reasons.append(f"manifest_hash {self.manifest_hash_status}")
        if not _signature_acceptable(self.manifest_signature_status, self.allow_unsigned):
            reasons.append(f"manifest_signature {self.manifest_signature_status}")
        reasons.extend(f"loud collision {i}@{v}" for i, v in self.loud_collisions)
        reasons.extend(f"duplicate entry {i}@{v}" for i, v in self.duplicate_keys)
        for e in self.entries:
            where = f"entry[{e.index}] {e.adapter_id}@{e.adapter_version}"
            if e.entry_hash_status != "ok":
                reasons.append(f"{where} entry_hash {e.entry_hash_status}")
            if not _signature_acceptable(e.entry_signature_status, self.allow_unsigned):
                reasons.append(f"{where} entry_signature {e.entry_signature_status}")
            if not e.status_valid:
                reasons.append(f"{where} status {e.status!r} invalid")
        return tuple(Problem(reason) for reason in reasons)

    def failures(self) -> list[str]:
        """One short reason per failed check (empty when ``ok``): the problems' sentences."""
        return render_problems(self.problems())

    def to_json(self) -> dict[str, Any]:
        """The peer's report fields, in the peer's order, plus Affidavit's extras."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "manifest_hash_status": self.manifest_hash_status,
            "manifest_signature_status": self.manifest_signature_status,
            "loud_collisions": [list(k) for k in self.loud_collisions],
            "publisher_document_used": self.publisher_document_used,
            "public_key_supplied": self.public_key_supplied,
            "entry_count": self.entry_count,
            "entries": [e.to_json() for e in self.entries],
            "duplicate_keys": [list(k) for k in self.duplicate_keys],
            "allow_unsigned": self.allow_unsigned,
            "failures": self.failures(),
        }
        if self.manifest_hash_expected is not None:
            out["manifest_hash_expected"] = self.manifest_hash_expected
            out["manifest_hash_recomputed"] = self.manifest_hash_recomputed
        return out


def _signature_acceptable(status: SignatureStatus, allow_unsigned: bool) -> bool:
    # Fail closed: only "ok" passes, unless the caller explicitly accepts unsigned input.
    return status == "ok" or (allow_unsigned and status in ("absent", "no_public_key"))


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key, "")
    return value if isinstance(value, str) else str(value)


def _hash_status(claimed: Any, recomputed: str) -> tuple[HashStatus, str | None, str | None]:
    if claimed is None:
        return "absent", None, None
    if claimed == recomputed:
        return "ok", None, None
    return "mismatch", str(claimed), recomputed


def verify_entry(
    unverified_entry: Mapping[str, Any], public_key: Ed25519PublicKey | None, *, index: int = 0
) -> EntryReport:
    """Recompute one entry's hash and check its ``entry_signature`` (docs/formats.md §3); never
    raises for a wrong value: that is a status."""
    recomputed = entry_hash(unverified_entry)
    hash_status, expected, got = _hash_status(unverified_entry.get("entry_hash"), recomputed)
    # As the peer does, the signature is checked over the claimed hash; a tampered body then
    # shows as entry_hash "mismatch" (the verdict fails either way).
    signature_status = check_signature(
        public_key, unverified_entry.get("entry_hash"), unverified_entry.get("entry_signature")
    )
    status = unverified_entry.get("status", "active")
    return EntryReport(
        index=index,
        adapter_id=_text(unverified_entry, "adapter_id"),
        adapter_version=_text(unverified_entry, "adapter_version"),
        status=status if isinstance(status, str) else str(status),
        entry_hash_status=hash_status,
        entry_signature_status=signature_status,
        status_valid=status in LIFECYCLE_STATUSES,
        expected=expected,
        recomputed=got,
    )


def _collisions(
    entries: Sequence[Mapping[str, Any]],
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    # docs/formats.md §3: a repeated (adapter_id, adapter_version), another contract_hash: loud.
    first_hash: dict[tuple[str, str], Any] = {}
    loud: dict[tuple[str, str], None] = {}
    duplicate: dict[tuple[str, str], None] = {}
    for entry in entries:
        key = (_text(entry, "adapter_id"), _text(entry, "adapter_version"))
        if key not in first_hash:
            first_hash[key] = entry.get("contract_hash")
        elif first_hash[key] != entry.get("contract_hash"):
            loud[key] = None
        else:
            duplicate[key] = None
    return tuple(loud), tuple(k for k in duplicate if k not in loud)


def verify_manifest(
    unverified_manifest: Mapping[str, Any],
    *,
    public_key: Ed25519PublicKey | None,
    allow_unsigned: bool = False,
    publisher_document_used: str | None = None,
) -> ManifestReport:
    """Verify a parsed manifest offline under the caller's ``public_key`` (never the manifest's
    own) and return what was checked (docs/formats.md §3).

    Raises:
        ``manifest.invalid``: the manifest is not an object or ``contracts`` is malformed.
    """
    if not isinstance(unverified_manifest, Mapping):
        raise errors.ContractError("manifest.invalid", "a manifest must be a JSON object")
    entries = contracts_of(unverified_manifest)
    reports = tuple(verify_entry(e, public_key, index=i) for i, e in enumerate(entries))
    loud, duplicate = _collisions(entries)
    recomputed = manifest_hash(unverified_manifest)
    claimed = unverified_manifest.get("manifest_hash")
    hash_status, expected, got = _hash_status(claimed, recomputed)
    signature_status = check_signature(
        public_key, claimed, unverified_manifest.get("manifest_signature")
    )
    partial = ManifestReport(
        ok=False,
        manifest_hash_status=hash_status,
        manifest_signature_status=signature_status,
        loud_collisions=loud,
        duplicate_keys=duplicate,
        publisher_document_used=publisher_document_used,
        public_key_supplied=public_key is not None,
        allow_unsigned=allow_unsigned,
        entries=reports,
        manifest_hash_expected=expected,
        manifest_hash_recomputed=got,
    )
    if partial.problems():
        return partial
    return dataclasses.replace(partial, ok=True)


@dataclasses.dataclass(frozen=True, slots=True)
class PublisherDocument:
    """A parsed publisher document (docs/formats.md §3): who publishes, under which key."""

    publisher_id: str
    publisher_key_id: str
    public_key: Ed25519PublicKey
    manifest_url: str | None

    def check_matches(self, unverified_manifest: Mapping[str, Any]) -> None:
        """Refuse a manifest that names another publisher or key id than this document.

        Raises:
            ``manifest.publisher_mismatch``: ``publisher_id`` or ``publisher_key_id`` differ.
        """
        for key, want in (
            ("publisher_id", self.publisher_id),
            ("publisher_key_id", self.publisher_key_id),
        ):
            got = unverified_manifest.get(key)
            if got != want:
                raise errors.ContractError(
                    "manifest.publisher_mismatch",
                    f"the manifest's {key} is {got!r}, the publisher document's is {want!r}",
                    details={"field": key, "manifest": got, "publisher_document": want},
                )


def parse_publisher_document(document: Any) -> PublisherDocument:
    """Validate a publisher document: string ids and a valid 32-byte Ed25519 public key.

    Raises:
        ``manifest.publisher_document_invalid``: a field is missing or not a string, or the key is
            malformed.
    """
    if not isinstance(document, Mapping):
        raise errors.ContractError(
            "manifest.publisher_document_invalid", "a publisher document must be a JSON object"
        )
    values: dict[str, str] = {}
    for key in ("publisher_id", "publisher_key_id", "public_key_base64"):
        value = document.get(key)
        if not isinstance(value, str) or not value:
            raise errors.ContractError(
                "manifest.publisher_document_invalid",
                f"publisher document: {key} missing or not a string",
            )
        values[key] = value
    manifest_url = document.get("manifest_url")
    if manifest_url is not None and not isinstance(manifest_url, str):
        raise errors.ContractError(
            "manifest.publisher_document_invalid",
            "publisher document: manifest_url must be a string",
        )
    try:
        public_key = Ed25519PublicKey.from_b64(values["public_key_base64"])
    except errors.KeyMaterialError as e:
        raise errors.ContractError(
            "manifest.publisher_document_invalid",
            f"publisher document: public_key_base64: {e.message}",
            details={"cause": e.code},
        ) from None
    return PublisherDocument(
        publisher_id=values["publisher_id"],
        publisher_key_id=values["publisher_key_id"],
        public_key=public_key,
        manifest_url=manifest_url,
    )
