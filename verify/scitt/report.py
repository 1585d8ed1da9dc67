"""Verifying a Transparent Statement (RFC 9943 §7.1): one :class:`~affidavit.verify.results.Result`
of kind ``scitt`` (``affidavit verify scitt``), with steps ``parse``, ``statement_signature`` and
``receipts``. Nothing is verified without a receipt proven under a log key the caller trusts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.results import Result, StepResult
from affidavit.verify.scitt.keys import CoseKey
from affidavit.verify.scitt.receipt import verify_receipt
from affidavit.verify.scitt.statement import LEAF_RULE, SignedStatement, parse_statement

__all__ = ["KIND", "verify_transparent_statement"]

KIND: Final = "scitt"
_REQUIRED: Final = ("parse", "receipts")


def verify_transparent_statement(
    data: bytes,
    *,
    log_keys: Sequence[CoseKey],
    issuer_keys: Sequence[CoseKey] = (),
    source: str = "statement",
) -> Result:
    """Verify the Transparent Statement in ``data`` (module docstring) under the caller's keys.

    Raises:
        ``usage.invalid``: no trusted log key (fail closed).
    """
    if not log_keys:
        raise errors.UsageError("a Transparent Statement verifies only under a trusted log key")
    try:
        statement = _transparent(data, source)
    except errors.ScittError as e:
        step = StepResult.unreadable("parse", e)
        return Result(KIND, source, (step,), {"statement": None, "receipts": []}, _REQUIRED)
    receipts: list[dict[str, Any]] = []
    steps = (
        StepResult.ok("parse", receipts=len(statement.receipts)),
        _statement_signature(statement, issuer_keys),
        _receipts(statement, log_keys, receipts, source),
    )
    subject = {"statement": _statement_json(statement), "receipts": receipts}
    return Result(KIND, source, steps, subject, _REQUIRED)


def _transparent(data: bytes, source: str) -> SignedStatement:
    statement = parse_statement(data, what=source)
    if not statement.receipts:
        raise errors.ScittError(
            "scitt.receipts_missing", f"{source}: no receipt at unprotected header 394"
        )
    return statement


def _statement_json(statement: SignedStatement) -> dict[str, Any]:
    return {
        "issuer": statement.issuer,
        "subject": statement.subject,
        "content_type": statement.content_type,
        "alg": statement.alg_name,
        "payload_attached": statement.sign1.payload is not None,
        "entry_id": statement.entry_id,
        "leaf_entry": statement.leaf_entry.hex(),
        "leaf_rule": LEAF_RULE,
    }


def _statement_signature(statement: SignedStatement, keys: Sequence[CoseKey]) -> StepResult:
    name = "statement_signature"
    if not keys:
        return StepResult.not_checked(name, "no issuer key given: the receipts alone are relied on")
    if statement.sign1.payload is None:
        return StepResult.not_checked(name, "the payload is detached: its signature is unchecked")
    try:
        key = statement.verify_issuer(keys)  # RFC 9943 §5.1.1.1: the named issuer's key
    except errors.ScittError as e:
        return StepResult.failed(name, e)
    return StepResult.ok(name, alg=statement.alg_name, kid=key.thumbprint.hex())


def _receipts(
    statement: SignedStatement,
    keys: Sequence[CoseKey],
    out: list[dict[str, Any]],
    source: str,
) -> StepResult:
    # Every receipt must prove the leaf under a trusted key: none is skipped.
    for number, receipt in enumerate(statement.receipts):
        try:
            check = verify_receipt(
                receipt, statement.leaf_entry, keys, what=f"{source} receipt {number}"
            )
        except errors.ScittError as e:
            out.append({"index": number, "verified": False, "code": e.code})
            return StepResult.failed("receipts", e, receipt=number)
        out.append({"index": number, "verified": True, **check.to_json()})
    return StepResult.ok("receipts", count=len(statement.receipts))
