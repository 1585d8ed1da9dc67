"""Shared makings of the SCITT tests: TEST-ONLY keys, a log with a registered statement, and
one-field edits of COSE messages."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cbor2
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.scitt import sign_receipt, sign_statement
from affidavit.verify.scitt.cbor import decode, encode
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.statement import parse_statement

ISSUER = derive_test_key("TEST-ONLY scitt tests: issuer")
LOG_KEY = derive_test_key("TEST-ONLY scitt tests: log")
OTHER = derive_test_key("TEST-ONLY scitt tests: another key")
ISSUER_COSE = CoseKey.from_ed25519(ISSUER.public_key, "issuer").bound_to(["https://issuer.example"])
LOG_COSE = CoseKey.from_ed25519(LOG_KEY.public_key, "log")
WHEN = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)


def statement(payload: bytes = b'{"artefact": 1}', subject: str = "pkg:demo@1") -> bytes:
    return sign_statement(
        payload,
        ISSUER,
        issuer="https://issuer.example",
        subject=subject,
        content_type="application/json",
    )


def transparent(
    signed: bytes | None = None, *, before: int = 3, after: int = 2
) -> tuple[bytes, bytes]:
    """A Transparent Statement (the statement logged among other leaves, one receipt attached)
    and its receipt."""
    signed = signed if signed is not None else statement()
    parsed = parse_statement(signed)
    log = TransparencyLog.create(Path(tempfile.mkdtemp()) / "log.db", LOG_KEY, "scitt.test/log")
    try:
        log.append([bytes([i]) * 32 for i in range(before)])
        (index,) = log.append([parsed.leaf_entry])
        log.append([bytes([100 + i]) * 32 for i in range(after)])
        proof = log.inclusion_proof(index, log.size)
        receipt = sign_receipt(
            LOG_KEY,
            leaf_index=index,
            tree_size=log.size,
            path=proof.path,
            root=proof.root_hash,
            issuer="scitt.test/log",
            subject=parsed.subject,
            issued_at=WHEN,
        )
    finally:
        log.close()
    return with_receipts(signed, [receipt]), receipt


def with_receipts(signed: bytes, receipts: list[bytes]) -> bytes:
    """``signed`` with ``receipts`` at unprotected 394."""
    body = decode(signed, what="s").value
    return encode(cbor2.CBORTag(18, [body[0], {394: receipts}, body[2], body[3]]))


def edit(message: bytes, change: Any) -> bytes:
    """``message`` (a COSE_Sign1) with ``change(body)`` applied to its 4-element body, where the
    protected header is given decoded (and re-encoded unless ``change`` returns bytes there)."""
    body = decode(message, what="m").value
    protected = decode(body[0], what="p") if body[0] else {}
    parts = [protected, body[1], body[2], body[3]]
    change(parts)
    header = parts[0] if isinstance(parts[0], bytes) else encode(parts[0])
    return encode(cbor2.CBORTag(18, [header, parts[1], parts[2], parts[3]]))
