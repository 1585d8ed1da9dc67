"""Codes of the receipts room (``receipt.*``), raised through
:class:`affidavit.verify.errors.ReceiptError`.

Exit codes: 2 (``INPUT``) a receipt or a bulk layout that cannot be read as one; 1 (``FAILED``) a
receipt that was read and does not verify (or a receipt ``receipt make`` refuses to sign). Each
tamper case has its own code (docs/formats.md "Transformation receipts").
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

RECEIPT: Final[tuple[Code, ...]] = (
    Code(
        "receipt.capability_inconsistent",
        INPUT,
        "capability is byte_preserving with transformations declared, or declared_lossy with "
        "none (RFC 002 §1.4: byte_preserving iff the declared set is empty).",
    ),
    Code(
        "receipt.chunk_mismatch",
        FAILED,
        "The chunks are not the receipt's: a chunk's hash or size differs, their number or order "
        "differs, or they do not concatenate to the content (RFC 002 §7.2/§7.3).",
    ),
    Code(
        "receipt.content_mismatch",
        FAILED,
        "The content bytes do not hash to the receipt's content.sha256 and size.",
    ),
    Code(
        "receipt.fact_mismatch",
        FAILED,
        "A receipt fact disagrees with its receipt (content hash, adapter or transformations).",
    ),
    Code(
        "receipt.hash_mismatch",
        FAILED,
        "The receipt file named after a receipt_hash hashes to another receipt_hash: altered.",
    ),
    Code(
        "receipt.key_untrusted",
        FAILED,
        "The signature verifies under none of the trusted keys, and its key_id names none of "
        "them: signed by a key the caller does not trust.",
    ),
    Code(
        "receipt.layout_invalid",
        INPUT,
        "Bulk verification cannot locate a receipt's files: source.uri is absent, not a "
        "relative path, or leaves the source root.",
    ),
    Code("receipt.malformed", INPUT, "Not a transformation receipt of the documented shape."),
    Code(
        "receipt.not_found",
        FAILED,
        "No receipt file in the receipts folder hashes to the receipt_hash a fact names.",
    ),
    Code(
        "receipt.replay_mismatch",
        FAILED,
        "Replaying the declared transformations, in order, on the source does not give the "
        "receipt's content: a transformation was applied that was not declared (RFC 002 §7.3).",
    ),
    Code(
        "receipt.signature_bad",
        FAILED,
        "The signature does not verify under the trusted key its key_id names: the receipt was "
        "edited after signing, or the signature is forged.",
    ),
    Code(
        "receipt.source_mismatch",
        FAILED,
        "The source bytes do not hash to the receipt's source.sha256 and size.",
    ),
    Code(
        "receipt.unanchored",
        FAILED,
        "No trusted key was given: the signature was not checked, so the receipt is not verified.",
    ),
    Code(
        "receipt.version_unsupported",
        INPUT,
        "The receipt_version is not one this verifier reads.",
    ),
)

__all__ = ["FAILED", "INPUT", "RECEIPT"]
