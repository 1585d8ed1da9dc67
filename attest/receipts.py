"""Make and sign transformation receipts (docs/formats.md "Transformation receipts"; seed 004,
RFC 002 §1.4 and §7).

>>> from affidavit.attest.keyring import derive_test_key
>>> key = derive_test_key("doctest receipts")
>>> receipt = make_receipt(b"a\\r\\nb", b"a\\nb", adapter="demo", adapter_version="1",
...                        transformations=["newline_normalize"], key=key,
...                        issued_at="2026-01-01T00:00:00Z")
>>> receipt["capability"], receipt["signature"]["alg"]
('declared_lossy', 'Ed25519')

The signer refuses, with no override, a content the declared transformations replayed on the
source do not produce (RFC 002 §7.3): :func:`make_receipt`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from affidavit.attest.keyring import SigningKey
from affidavit.verify import errors
from affidavit.verify.receipts.format import (
    key_id_of,
    parse_receipt,
    receipt_body,
    receipt_hash_of,
    signing_message,
)
from affidavit.verify.transforms.chain import Transforms, apply_chain

__all__ = ["make_receipt", "sign_receipt_body"]


def make_receipt(
    source: bytes,
    content: bytes | None,
    *,
    adapter: str,
    adapter_version: str,
    transformations: Sequence[str],
    key: SigningKey,
    chunks: Sequence[bytes] | None = None,
    source_uri: str | None = None,
    issued_at: str | None = None,
    transforms: Transforms | None = None,
) -> dict[str, Any]:
    """A signed receipt saying ``adapter`` turned ``source`` into ``content`` (default: the
    ``chunks`` concatenated) by ``transformations`` in order.

    Raises:
        ``usage.invalid``: neither content nor chunks.
        ``receipt.malformed``, ``transform.name_invalid``: a field is not well formed (exit 2).
        ``transform.unimplemented``: a declared transformation has no implementation here.
        ``transform.not_utf8``: the chain cannot read the source (not UTF-8, and the chain does
            not start with utf8_replace_invalid).
        ``receipt.chunk_mismatch``: the chunks do not concatenate to the content.
        ``receipt.replay_mismatch``: the replay does not give the content.
    """
    if content is None:
        if chunks is None:
            raise errors.UsageError("give the content, its chunks, or both")
        content = b"".join(chunks)
    elif chunks is not None and b"".join(chunks) != content:
        raise errors.ReceiptError(
            "receipt.chunk_mismatch",
            f"the {len(chunks)} chunk(s) do not concatenate to the content (RFC 002 §7.2)",
        )
    body = receipt_body(
        source=source,
        content=content,
        adapter=adapter,
        adapter_version=adapter_version,
        transformations=transformations,
        chunks=chunks,
        source_uri=source_uri,
        issued_at=issued_at,
    )
    try:
        replayed = apply_chain(tuple(transformations), source, transforms=transforms)
    except errors.ReceiptError as e:  # transform.unimplemented, not_utf8, plugin_*: no receipt
        e.message = f"refusing to sign: {e.message}"
        raise
    if replayed != content:
        chain = ", ".join(transformations) or "the identity (byte_preserving)"
        raise errors.ReceiptError(
            "receipt.replay_mismatch",
            f"replaying {chain} on the source does not give the content: the adapter applied a "
            "transformation it does not declare; refusing to sign",
        )
    return sign_receipt_body(body, key)


def sign_receipt_body(body: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """``body`` with its ``signature``, with no replay (:func:`make_receipt` checks).

    Raises:
        ``receipt.malformed``, ``canonical.*``: the signed document would not parse.
    """
    unsigned = {k: v for k, v in body.items() if k != "signature"}
    receipt_hash = receipt_hash_of(unsigned)
    signed = {
        **unsigned,
        "signature": {
            "alg": "Ed25519",
            "key_id": key_id_of(key.public_key.raw),
            "sig": key.sign_b64(signing_message(receipt_hash)),
        },
    }
    parse_receipt(signed)  # what is signed always reads back
    return signed
