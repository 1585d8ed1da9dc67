"""The transformation receipt document (docs/formats.md "Transformation receipts"; seed 004,
RFC 002 §1.4 and §7): parsed strictly, hashed, and the exact bytes its signature covers.

>>> body = receipt_body(source=b"a\\r\\nb", content=b"a\\nb", adapter="demo", adapter_version="1",
...                     transformations=["newline_normalize"])
>>> body["capability"], body["content"]["size"]
('declared_lossy', 3)
>>> signing_message("ab" * 32)[:21]
b'affidavit-receipt-v1\\n'

A receipt says: this adapter, at this version, turned source bytes S into content bytes C by
applying exactly these declared transformations, in this order. ``receipt_hash = H(jcs(receipt
without "signature"))``; the Ed25519 signature covers :func:`signing_message`, whose
domain-separating prefix no other Affidavit signature starts with. Strict (docs/formats.md §1):
anything but the documented form is ``receipt.malformed`` (exit 2).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.signature import decode_signature_b64
from affidavit.verify.json.canonical import MAX_SAFE_INTEGER, jcs, sha256_hex
from affidavit.verify.json.forms import is_hex64, parse_utc
from affidavit.verify.json.strict import loads
from affidavit.verify.transforms.chain import check_name

__all__ = [
    "BYTE_PRESERVING",
    "CAPABILITIES",
    "DECLARED_LOSSY",
    "MAX_CHUNKS",
    "MAX_RECEIPT_BYTES",
    "MAX_TRANSFORMATIONS",
    "RECEIPT_VERSION",
    "SIGNING_PREFIX",
    "Digest",
    "Receipt",
    "ReceiptSignature",
    "capability_of",
    "key_id_of",
    "load_receipt",
    "parse_receipt",
    "receipt_body",
    "receipt_hash_of",
    "signing_message",
]

RECEIPT_VERSION: Final = "1.0.0"
SIGNING_PREFIX: Final = b"affidavit-receipt-v1\n"
BYTE_PRESERVING: Final = "byte_preserving"
DECLARED_LOSSY: Final = "declared_lossy"
CAPABILITIES: Final = (BYTE_PRESERVING, DECLARED_LOSSY)
MAX_RECEIPT_BYTES: Final = 4 * 1024 * 1024
MAX_TRANSFORMATIONS: Final = 64
MAX_CHUNKS: Final = 65_536
_MAX_URI: Final = 2048

_TOP_KEYS: Final = frozenset({"receipt_version", "source", "adapter", "transformations",
                              "capability", "content", "issued_at", "signature"})  # fmt: skip
_OPTIONAL_TOP: Final = frozenset({"issued_at"})
_ADAPTER_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_ADAPTER_VERSION: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Digest:
    """The SHA-256 (64 lowercase hex) and length of some bytes."""

    sha256: str
    size: int

    @classmethod
    def of(cls, data: bytes) -> Digest:
        return cls(hashlib.sha256(data).hexdigest(), len(data))

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "size": self.size}


@dataclass(frozen=True, slots=True)
class ReceiptSignature:
    """``{alg: "Ed25519", key_id, sig}``; ``raw`` is the decoded 64-byte signature."""

    key_id: str
    sig: str
    raw: bytes = field(repr=False)
    alg: str = "Ed25519"


@dataclass(frozen=True, slots=True)
class Receipt:
    """One parsed receipt. ``receipt_hash`` is recomputed from the document, never read."""

    source: Digest
    source_uri: str | None
    adapter_name: str
    adapter_version: str
    transformations: tuple[str, ...]
    capability: str
    content: Digest
    chunks: tuple[Digest, ...] | None
    issued_at: str | None
    signature: ReceiptSignature
    receipt_hash: str
    document: Mapping[str, Any] = field(compare=False, repr=False)

    @property
    def signing_message(self) -> bytes:
        return signing_message(self.receipt_hash)

    def to_json(self) -> dict[str, Any]:
        return dict(self.document)


def capability_of(transformations: Sequence[str]) -> str:
    """``byte_preserving`` for the empty list, else ``declared_lossy`` (RFC 002 §1.4)."""
    return DECLARED_LOSSY if transformations else BYTE_PRESERVING


def key_id_of(public_key_raw: bytes) -> str:
    """A receipt signature's ``key_id``: ``H(raw 32-byte Ed25519 public key)``."""
    return sha256_hex(public_key_raw)


def signing_message(receipt_hash: str) -> bytes:
    """``b"affidavit-receipt-v1\\n" + receipt_hash`` (ASCII hex): what the signature covers."""
    return SIGNING_PREFIX + receipt_hash.encode("ascii")


def receipt_hash_of(document: Mapping[str, Any]) -> str:
    """``H(jcs(document without "signature"))`` (docs/formats.md §1 ``jcs``).

    Raises:
        ``canonical.*``: a value has no RFC 8785 form.
    """
    return sha256_hex(jcs({k: v for k, v in document.items() if k != "signature"}))


def receipt_body(
    *,
    source: bytes,
    content: bytes,
    adapter: str,
    adapter_version: str,
    transformations: Sequence[str],
    chunks: Sequence[bytes] | None = None,
    source_uri: str | None = None,
    issued_at: str | None = None,
) -> dict[str, Any]:
    """The unsigned receipt of ``source`` -> ``content``, checked as a parsed one is (the signer,
    :func:`affidavit.attest.receipts.make_receipt`, replays and signs).

    Raises:
        ``receipt.malformed``, ``transform.name_invalid``: a field is not well formed.
    """
    src: dict[str, Any] = Digest.of(source).to_json()
    if source_uri is not None:
        src["uri"] = source_uri
    out: dict[str, Any] = Digest.of(content).to_json()
    if chunks is not None:
        out["chunks"] = [Digest.of(chunk).to_json() for chunk in chunks]
    body: dict[str, Any] = {
        "receipt_version": RECEIPT_VERSION,
        "source": src,
        "adapter": {"name": adapter, "version": adapter_version},
        "transformations": list(transformations),
        "capability": capability_of(transformations),
        "content": out,
    }
    if issued_at is not None:
        body["issued_at"] = issued_at
    _check_body(body)
    return body


def load_receipt(data: bytes, *, what: str = "receipt") -> Receipt:
    """Parse a receipt file's bytes (strict JSON, at most :data:`MAX_RECEIPT_BYTES`).

    Raises:
        ``json.*``: not strict JSON; ``receipt.*`` / ``transform.name_invalid``: see
        :func:`parse_receipt`.
    """
    return parse_receipt(loads(data, max_bytes=MAX_RECEIPT_BYTES), what=what)


def parse_receipt(value: Any, *, what: str = "receipt") -> Receipt:
    """Validate a parsed JSON value as a receipt (module docstring) and hash it.

    Raises:
        ``receipt.malformed``: a key missing, unknown or of the wrong form.
        ``receipt.version_unsupported``: another ``receipt_version``.
        ``receipt.capability_inconsistent``: capability and transformations disagree.
        ``transform.name_invalid``: a transformation name is not well formed.
    """
    _check_body(value, what=what, signed=True)
    signature = _signature(value["signature"], what)
    src, out = value["source"], value["content"]
    chunks = out.get("chunks")
    return Receipt(
        source=Digest(src["sha256"], src["size"]),
        source_uri=src.get("uri"),
        adapter_name=value["adapter"]["name"],
        adapter_version=value["adapter"]["version"],
        transformations=tuple(value["transformations"]),
        capability=value["capability"],
        content=Digest(out["sha256"], out["size"]),
        chunks=None if chunks is None else tuple(Digest(c["sha256"], c["size"]) for c in chunks),
        issued_at=value.get("issued_at"),
        signature=signature,
        receipt_hash=receipt_hash_of(value),
        document=value,
    )


def _malformed(what: str, message: str) -> errors.ReceiptError:
    return errors.ReceiptError("receipt.malformed", f"{what}: {message}")


def _check_keys(
    value: Any, where: str, what: str, required: frozenset[str], optional: frozenset[str]
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _malformed(what, f"{where} must be an object")
    missing = sorted(required - value.keys())
    if missing:
        raise _malformed(what, f"{where} lacks {', '.join(missing)}")
    unknown = sorted(value.keys() - required - optional)
    if unknown:
        raise _malformed(what, f"{where} has unknown key(s) {', '.join(unknown)}")
    return value


def _check_digest(value: Any, where: str, what: str, optional: frozenset[str]) -> dict[str, Any]:
    digest = _check_keys(value, where, what, frozenset({"sha256", "size"}), optional)
    if not is_hex64(digest["sha256"]):
        raise _malformed(what, f"{where}.sha256 must be 64 lowercase hex characters")
    size = digest["size"]
    if type(size) is not int or not 0 <= size <= MAX_SAFE_INTEGER:
        raise _malformed(what, f"{where}.size must be an integer in [0, 2^53-1]")
    return digest


def _check_body(value: Any, *, what: str = "receipt", signed: bool = False) -> None:
    required = _TOP_KEYS - _OPTIONAL_TOP - (set() if signed else {"signature"})
    optional = _OPTIONAL_TOP | (set() if signed else {"signature"})
    document = _check_keys(value, "the receipt", what, frozenset(required), frozenset(optional))
    version = document["receipt_version"]
    if not isinstance(version, str):
        raise _malformed(what, "receipt_version must be a string")
    if version != RECEIPT_VERSION:
        raise errors.ReceiptError(
            "receipt.version_unsupported",
            f"{what}: receipt_version {version!r} is not {RECEIPT_VERSION!r}",
            details={"receipt_version": version},
        )
    source = _check_digest(document["source"], "source", what, frozenset({"uri"}))
    if "uri" in source:
        uri = source["uri"]
        if not isinstance(uri, str) or not 0 < len(uri) <= _MAX_URI or _CONTROL.search(uri):
            raise _malformed(what, f"source.uri must be 1..{_MAX_URI} characters, no controls")
    adapter = _check_keys(
        document["adapter"], "adapter", what, frozenset({"name", "version"}), frozenset()
    )
    name, version_text = adapter["name"], adapter["version"]
    if not isinstance(name, str) or not _ADAPTER_NAME.fullmatch(name):
        raise _malformed(what, "adapter.name must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}")
    if not isinstance(version_text, str) or not _ADAPTER_VERSION.fullmatch(version_text):
        raise _malformed(what, "adapter.version must match [A-Za-z0-9][A-Za-z0-9.+_-]{0,63}")
    transformations = _check_transformations(document["transformations"], what)
    _check_capability(document["capability"], transformations, what)
    content = _check_digest(document["content"], "content", what, frozenset({"chunks"}))
    if "chunks" in content:
        _check_chunks(content["chunks"], content["size"], what)
    if "issued_at" in document and parse_utc(document["issued_at"]) is None:
        raise _malformed(what, "issued_at must be a UTC time YYYY-MM-DDTHH:MM:SSZ")


def _check_transformations(value: Any, what: str) -> list[str]:
    if not isinstance(value, list):
        raise _malformed(what, "transformations must be an array of names")
    if len(value) > MAX_TRANSFORMATIONS:
        raise _malformed(what, f"more than {MAX_TRANSFORMATIONS} transformations")
    seen: set[str] = set()
    for index, name in enumerate(value):
        if not isinstance(name, str):
            raise _malformed(what, f"transformations[{index}] must be a string")
        check_name(name)
        if name in seen:  # RFC 002 §1.4: the declared transformations are a set
            raise _malformed(what, f"transformation {name!r} is declared twice")
        seen.add(name)
    return value


def _check_capability(value: Any, transformations: list[str], what: str) -> None:
    if value not in CAPABILITIES:
        raise _malformed(what, f"capability must be one of {', '.join(CAPABILITIES)}")
    expected = capability_of(transformations)
    if value != expected:  # RFC 002 §1.4: byte_preserving iff the declared set is empty
        raise errors.ReceiptError(
            "receipt.capability_inconsistent",
            f"{what}: capability {value} with {len(transformations)} transformation(s) declared;"
            f" it must be {expected}",
            details={"capability": value, "expected": expected},
        )


def _check_chunks(value: Any, total: int, what: str) -> None:
    if not isinstance(value, list) or not 0 < len(value) <= MAX_CHUNKS:
        raise _malformed(what, f"content.chunks must be an array of 1..{MAX_CHUNKS} digests")
    sizes = 0
    for index, chunk in enumerate(value):
        sizes += _check_digest(chunk, f"content.chunks[{index}]", what, frozenset())["size"]
    if sizes != total:  # RFC 002 §7.2/§7.3: the chunks concatenate to the content
        raise _malformed(what, f"the chunk sizes add up to {sizes}, not content.size {total}")


def _signature(value: Any, what: str) -> ReceiptSignature:
    signature = _check_keys(
        value, "signature", what, frozenset({"alg", "key_id", "sig"}), frozenset()
    )
    if signature["alg"] != "Ed25519":
        raise _malformed(what, "signature.alg must be Ed25519")
    if not is_hex64(signature["key_id"]):
        raise _malformed(what, "signature.key_id must be 64 lowercase hex characters")
    sig = signature["sig"]
    if not isinstance(sig, str):
        raise _malformed(what, "signature.sig must be a string")
    try:
        raw = decode_signature_b64(sig)
    except errors.SignatureError as e:
        raise _malformed(what, f"signature.sig: {e.message}") from None
    return ReceiptSignature(signature["key_id"], sig, raw)
