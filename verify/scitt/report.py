"""Verifying a Transparent Statement (RFC 9943 §7.1): one :class:`~affidavit.verify.results.Result`
of kind ``scitt`` (``affidavit verify scitt``).

Steps, in order:

1. ``parse``                strict CBOR, a tagged COSE_Sign1, a Signed Statement (CWT claims with
                            iss and sub, alg EdDSA or ES256), receipts at 394; a failure is
                            unreadable input (exit 2);
2. ``statement_signature``  the issuer's signature under the issuer keys the caller gives,
                            under one bound to the statement's ``iss``
                            (``scitt.issuer_mismatch`` when only another issuer's verifies);
                            ``not_checked`` without one (RFC 9943 §7.1: a Relying Party MAY rely on
                            a receipt alone), or when the payload is detached;
3. ``receipts``             every receipt, each proving the leaf entry recomputed from the
                            statement (``SignedStatement.leaf_entry``) under a trusted log key
                            (:func:`affidavit.verify.scitt.receipt.verify_receipt`).

The verdict is the one rule of :class:`~affidavit.verify.results.Result`; the steps it needs are
``parse`` and ``receipts`` (``statement_signature`` counts when it ran: a failed one fails).
Nothing is verified without a receipt proven under a key the caller trusts (fail closed).

The subject's fields: ``statement`` (iss, sub, content type, alg, whether the payload is attached,
the entry ID and leaf entry, and the rule that gives it) and ``receipts`` (each receipt's tree
size, leaf index, root, kid, alg, iss and sub when it verified, else its code).
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
    """Verify the Transparent Statement in ``data`` (module docstring). Reads nothing else: the
    keys are the caller's.

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
    """Every receipt must prove the statement's leaf under a trusted key: a receipt under a key
    the caller does not trust, or altered, is a failure, never skipped."""
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
