"""Verify a transformation receipt against the bytes it speaks of, offline (docs/formats.md
"Transformation receipts"; seed 004, RFC 002 §7.2/§7.3).

>>> from affidavit.verify.receipts.verify import verify_receipt
>>> verify_receipt({"receipt_version": "9"}, b"", b"", None, ()).verdict
'unreadable'

Steps ``signature``, ``source_hash``, ``replay``, ``chunks``, ``content_hash``: every step runs,
and the verdict is ``verified`` only when each is ``ok``, ``unanchored`` when none failed but one
could not run. The replay is compared with the receipt's content hash, not the content file, so
an altered file and a claim that does not replay are each reported alone.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.receipts.format import Digest, Receipt, key_id_of, parse_receipt
from affidavit.verify.results import Result, StepResult
from affidavit.verify.transforms.chain import Transforms, apply_chain

__all__ = ["receipt_result", "signature_step", "unreadable_receipt", "verify_receipt"]

_UNANCHORED: Final = "no trusted key was given: the signature is not checked"
_NOT_THE_SOURCE: Final = "the source is not the receipt's: nothing to replay"
# A declared transformation with no implementation here, or plugins that cannot be loaded.
_CANNOT_REPLAY: Final = frozenset(
    {"transform.unimplemented", "transform.plugin_invalid", "transform.plugin_conflict"}
)


def verify_receipt(  # noqa: PLR0917 - the receipt and the bytes it names
    receipt: Receipt | Any,
    source: bytes,
    content: bytes | None,
    chunks: Sequence[bytes] | None,
    trusted_keys: Iterable[Ed25519PublicKey],
    transforms: Transforms | None = None,
    *,
    label: str | None = None,
    files: tuple[tuple[str, str], ...] = (),
) -> Result:
    """Verify ``receipt`` (a :class:`Receipt` or a parsed JSON value; unparsable is
    ``unreadable``) against ``source`` and ``content`` and/or ``chunks``. ``transforms`` defaults
    to the reference ones (plugins: :func:`affidavit.attest.plugins.transforms_for`); ``label``
    names the receipt, ``files`` where its bytes were read from.

    Raises:
        ``usage.invalid``: neither content nor chunks were given.
    """
    if content is None and chunks is None:
        raise errors.UsageError("give the content bytes, its chunks, or both")
    if not isinstance(receipt, Receipt):
        try:
            receipt = parse_receipt(receipt, what=label or "receipt")
        except (errors.ReceiptError, errors.ParseError, errors.CanonicalError) as e:
            return unreadable_receipt(label, e, files)
    source_digest = Digest.of(source)
    whole = content if content is not None else b"".join(chunks or ())
    content_digest = Digest.of(whole)
    steps = (
        signature_step(receipt, tuple(trusted_keys)),
        _digest_step(
            "source_hash", "receipt.source_mismatch", "the source", source_digest, receipt.source
        ),
        _replay_step(receipt, source, source_digest, whole, content_digest, transforms),
        *_chunks_step(receipt, content, chunks, content_digest),
        _digest_step(
            "content_hash",
            "receipt.content_mismatch",
            "the chunks concatenated" if content is None else "the content",
            content_digest,
            receipt.content,
        ),
    )
    return receipt_result(label, steps, receipt, files)


def receipt_result(
    label: str | None,
    steps: Iterable[StepResult],
    receipt: Receipt | None = None,
    files: tuple[tuple[str, str], ...] = (),
) -> Result:
    """The result of a receipt's ``steps``: its subject the receipt's hash, adapter, chain and
    ``files``."""
    subject: dict[str, Any] = {
        "receipt_hash": None if receipt is None else receipt.receipt_hash,
        "adapter": None
        if receipt is None
        else {"name": receipt.adapter_name, "version": receipt.adapter_version},
        "transformations": [] if receipt is None else list(receipt.transformations),
        "capability": None if receipt is None else receipt.capability,
    }
    if files:
        subject["files"] = dict(files)
    return Result("receipt", label, tuple(steps), subject)


def unreadable_receipt(
    label: str | None, error: errors.AffidavitError, files: tuple[tuple[str, str], ...] = ()
) -> Result:
    """The result for a receipt (or a file it names) that ``error`` kept from being read."""
    return receipt_result(label, (StepResult.unreadable("parse", error),), files=files)


def signature_step(receipt: Receipt, trusted: Sequence[Ed25519PublicKey]) -> StepResult:
    """Step 1 (module docstring): the signature under the trusted keys."""
    if not trusted:
        return StepResult("signature", "not_checked", "receipt.unanchored", _UNANCHORED)
    message = receipt.signing_message
    for key in trusted:
        try:
            verify_ed25519(key, message, receipt.signature.raw)
        except errors.SignatureError:
            continue
        return StepResult.ok("signature", key=key.b64)
    named = [key for key in trusted if key_id_of(key.raw) == receipt.signature.key_id]
    if named:
        error = errors.ReceiptError(
            "receipt.signature_bad",
            f"the signature does not verify under the trusted key {named[0].b64} its key_id "
            "names: the receipt was changed after signing, or the signature is forged",
            details={"key_id": receipt.signature.key_id},
        )
    else:
        error = errors.ReceiptError(
            "receipt.key_untrusted",
            f"the signature verifies under none of the {len(trusted)} trusted key(s), and its "
            f"key_id {receipt.signature.key_id} names none of them",
            details={"key_id": receipt.signature.key_id},
        )
    return StepResult.failed("signature", error)


def _replay_step(  # noqa: PLR0917 - what a replay compares
    receipt: Receipt,
    source: bytes,
    source_digest: Digest,
    content: bytes,
    content_digest: Digest,
    transforms: Transforms | None,
) -> StepResult:
    if not _same(source_digest, receipt.source):
        return StepResult.not_checked("replay", _NOT_THE_SOURCE)
    names = receipt.transformations
    try:  # plugins are loaded only when the chain names one (apply_chain)
        replayed = apply_chain(names, source, transforms=transforms)
    except errors.ReceiptError as e:
        if e.code in _CANNOT_REPLAY:  # this verifier's lack, not the receipt's fault
            return StepResult(
                "replay",
                "not_checked",
                e.code,
                f"{e.message}: the replay cannot run here, so the receipt is not verified",
                details=e.details,
            )
        return StepResult.failed("replay", e)  # transform.not_utf8: the chain cannot read it
    actual = Digest.of(replayed)
    if _same(actual, receipt.content):
        return StepResult.ok("replay", transformations=len(names))
    details: dict[str, Any] = {}
    if _same(content_digest, receipt.content):  # where the replay leaves the stored content
        details["first_difference"] = _first_difference(replayed, content)
    chain = ", ".join(names) or "the identity (byte_preserving)"
    error = errors.ReceiptError(
        "receipt.replay_mismatch",
        f"replaying {chain} on the source gives {actual.size} bytes (sha256 {actual.sha256}), "
        f"not the receipt's content: a transformation was applied that was not declared",
    )
    return StepResult.failed(
        "replay", error, expected=receipt.content.to_json(), actual=actual.to_json(), **details
    )


def _chunks_step(
    receipt: Receipt,
    content: bytes | None,
    chunks: Sequence[bytes] | None,
    content_digest: Digest,
) -> tuple[StepResult, ...]:
    declared = receipt.chunks
    if declared is None and chunks is None:
        return ()
    if declared is None:
        return (_chunk_failure(f"the receipt declares no chunks, but {len(chunks or ())} given"),)
    if chunks is None:  # the content alone: cut it at the declared sizes
        assert content is not None
        if not _same(content_digest, receipt.content):
            reason = "the content is not the receipt's: its chunks cannot be located"
            return (StepResult.not_checked("chunks", reason),)
        pieces: list[bytes] = []
        offset = 0
        for chunk in declared:
            pieces.append(content[offset : offset + chunk.size])
            offset += chunk.size
        return (_compare_chunks(declared, pieces, given="cut from the content"),)
    if len(chunks) != len(declared):
        return (
            _chunk_failure(
                f"{len(chunks)} chunk(s) given, the receipt declares {len(declared)}",
                expected=len(declared),
                actual=len(chunks),
            ),
        )
    step = _compare_chunks(declared, chunks, given="given")
    if step.status == "ok" and content is not None and b"".join(chunks) != content:
        return (_chunk_failure("the chunks do not concatenate to the content (RFC 002 §7.2)"),)
    return (step,)


def _compare_chunks(
    declared: Sequence[Digest], pieces: Sequence[bytes], *, given: str
) -> StepResult:
    for index, (want, piece) in enumerate(zip(declared, pieces, strict=True)):
        got = Digest.of(piece)
        if not _same(got, want):
            moved = next(
                (i for i, other in enumerate(declared) if i != index and _same(got, other)), None
            )
            where = (
                f"; it is the receipt's chunk {moved} (out of order)" if moved is not None else ""
            )
            return _chunk_failure(
                f"chunk {index} ({given}) is not the receipt's chunk {index}{where}",
                expected=want.to_json(),
                actual=got.to_json(),
                index=index,
            )
    return StepResult.ok("chunks", count=len(declared))


def _chunk_failure(
    message: str, *, expected: Any = None, actual: Any = None, **details: Any
) -> StepResult:
    error = errors.ReceiptError("receipt.chunk_mismatch", message)
    return StepResult.failed("chunks", error, expected=expected, actual=actual, **details)


def _digest_step(step: str, code: str, what: str, actual: Digest, want: Digest) -> StepResult:
    """Steps 2 and 5: ``actual`` is the digest the receipt declares (``want``), else ``code``."""
    if _same(actual, want):
        return StepResult.ok(step, sha256=actual.sha256, size=actual.size)
    theirs = "the receipt's content" if step == "content_hash" else "the receipt's"
    error = errors.ReceiptError(
        code,
        f"{what} ({actual.size} bytes, sha256 {actual.sha256}) is not {theirs} "
        f"({want.size} bytes, sha256 {want.sha256})",
    )
    return StepResult.failed(step, error, expected=want.to_json(), actual=actual.to_json())


def _same(a: Digest, b: Digest) -> bool:
    return a.size == b.size and hmac.compare_digest(a.sha256, b.sha256)


def _first_difference(a: bytes, b: bytes) -> int:
    """The first offset at which ``a`` and ``b`` differ (the shorter length if one is a prefix)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        mid = (low + high) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid
    return low
