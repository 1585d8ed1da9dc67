"""Receipts as facts (docs/formats.md §5 and "Transformation receipts"): the fact ``receipt fact``
records (*content <- transformations <- source*, :func:`receipt_fact_document`), and the check
``facts audit --receipts DIR`` runs on each such fact (:func:`check_receipt_fact`), finding its
receipt by ``receipt_hash`` among a folder's ``*.json`` files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.lineage.facts import Fact
from affidavit.verify.receipts.format import Receipt, load_receipt
from affidavit.verify.receipts.verify import signature_step

__all__ = [
    "CONTENT_URN",
    "RECEIPT_URN",
    "RELATION",
    "ReceiptFactCheck",
    "ReceiptIndex",
    "check_receipt_fact",
    "describe",
    "receipt_fact_document",
    "receipt_hash_named",
]

RELATION: Final = "affidavit:transformed_by"
CONTENT_URN: Final = "urn:affidavit:content:sha256:"
RECEIPT_URN: Final = "urn:affidavit:receipt:"


def describe(receipt: Receipt) -> str:
    """The fact's value text: ``"<adapter> <version>: <t1> -> <t2>"`` in the declared order."""
    chain = " -> ".join(receipt.transformations) or receipt.capability
    return f"{receipt.adapter_name} {receipt.adapter_version}: {chain}"


def receipt_fact_document(
    receipt: Receipt, *, source_fact: str, ts: str, scope: str = "local"
) -> dict[str, Any]:
    """The fact that records ``receipt`` as derived from the fact ``source_fact``
    (docs/formats.md "Transformation receipts").

    Raises:
        ``usage.invalid``: ``source_fact`` is not a FactHash.
    """
    if not is_hex64(source_fact):
        raise errors.UsageError(f"source fact {source_fact!r} is not a FactHash (64 hex)")
    return {
        "entity": CONTENT_URN + receipt.content.sha256,
        "relation": RELATION,
        "value": {"type": "text", "v": describe(receipt)},
        "source": RECEIPT_URN + receipt.receipt_hash,
        "scope": scope,
        "confidence": 1,
        "ts": ts,
        "derived_from": [source_fact],
    }


def receipt_hash_named(fact: Fact) -> str | None:
    """The receipt_hash a receipt fact rests on; ``None`` for any other fact."""
    if fact.relation != RELATION or not fact.source.startswith(RECEIPT_URN):
        return None
    named = fact.source[len(RECEIPT_URN) :]
    return named if is_hex64(named) else None


@dataclass(frozen=True, slots=True)
class ReceiptIndex:
    """The receipt files of a folder: parsed ones by receipt_hash, and every file by name stem
    (the parse error of those that did not parse)."""

    folder: str
    by_hash: Mapping[str, tuple[str, Receipt]] = field(default_factory=dict)
    by_name: Mapping[str, tuple[str, Receipt | errors.AffidavitError]] = field(default_factory=dict)

    @classmethod
    def of_files(
        cls, folder: str, files: Iterable[tuple[str, bytes | errors.AffidavitError]]
    ) -> ReceiptIndex:
        """Index ``(path, bytes or read error)`` of each ``*.json`` under ``folder``, in path
        order."""
        by_hash: dict[str, tuple[str, Receipt]] = {}
        by_name: dict[str, tuple[str, Receipt | errors.AffidavitError]] = {}
        for path, data in files:
            stem = os.path.basename(path).removesuffix(".json").removesuffix(".receipt")
            item = _load(data, path) if isinstance(data, bytes) else data
            if not isinstance(item, errors.AffidavitError):
                by_hash.setdefault(item.receipt_hash, (path, item))
            by_name.setdefault(stem, (path, item))
        return cls(folder, by_hash, by_name)


def _load(data: bytes, path: str) -> Receipt | errors.AffidavitError:
    try:
        return load_receipt(data, what=path)
    except (errors.ReceiptError, errors.ParseError, errors.CanonicalError) as e:
        return e


@dataclass(frozen=True, slots=True)
class ReceiptFactCheck:
    """How one receipt fact fared: ``ok``, else the code and a sentence."""

    fact: str
    receipt_hash: str
    file: str | None
    code: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        """True when the fact is backed by its unaltered receipt."""
        return self.code is None

    def to_json(self) -> dict[str, Any]:
        out = {
            "fact": self.fact,
            "receipt_hash": self.receipt_hash,
            "file": self.file,
            "ok": self.ok,
        }
        if self.code is not None:
            out |= {"code": self.code, "message": self.message}
        return out


def check_receipt_fact(
    fact: Fact, index: ReceiptIndex, trusted_keys: Sequence[Ed25519PublicKey] = ()
) -> ReceiptFactCheck | None:
    """Check a receipt fact against the receipts of ``index`` (docs/formats.md §5); ``None`` when
    ``fact`` is not a receipt fact."""
    wanted = receipt_hash_named(fact)
    if wanted is None:
        return None
    found = index.by_hash.get(wanted)
    if found is None:
        return _not_found(fact, wanted, index)
    path, receipt = found
    mismatch = _disagreement(fact, receipt)
    if mismatch is not None:
        return ReceiptFactCheck(fact.hash, wanted, path, "receipt.fact_mismatch", mismatch)
    if trusted_keys:
        step = signature_step(receipt, trusted_keys)
        if step.status != "ok":
            return ReceiptFactCheck(fact.hash, wanted, path, step.code, step.message)
    return ReceiptFactCheck(fact.hash, wanted, path)


def _not_found(fact: Fact, wanted: str, index: ReceiptIndex) -> ReceiptFactCheck:
    named = index.by_name.get(wanted)
    if named is None:
        message = f"no receipt under {index.folder} hashes to {wanted}: it is missing or altered"
        return ReceiptFactCheck(fact.hash, wanted, None, "receipt.not_found", message)
    path, item = named
    if isinstance(item, errors.AffidavitError):
        return ReceiptFactCheck(fact.hash, wanted, path, item.code, item.message)
    message = f"{path} now hashes to {item.receipt_hash}, not {wanted}: it was altered"
    return ReceiptFactCheck(fact.hash, wanted, path, "receipt.hash_mismatch", message)


def _disagreement(fact: Fact, receipt: Receipt) -> str | None:
    if fact.entity != CONTENT_URN + receipt.content.sha256:
        return f"the fact's entity {fact.entity} is not the receipt's content"
    expected = describe(receipt)
    if fact.value.type != "text" or fact.value.v != expected:
        return f"the fact's value is not the receipt's adapter and transformations ({expected!r})"
    return None
