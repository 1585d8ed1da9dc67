"""Anchor receipts: a signed tree head time-stamped by an RFC 3161 TSA, verified offline
(docs/formats.md §4; steps ``receipt_fields``, ``sth_match``, ``sth_digest``, ``tsa_status``,
``sth_signature``, ``timestamp_token``).

>>> result = verify_anchor_receipt({"receipt_version": "1.0"})
>>> result.verdict, result.code
('unreadable', 'anchor.malformed')

Fail closed (docs/adr/0010-rfc3161-tokens.md): the receipt's fields are claims anyone can write,
so without a trusted TSA certificate the verdict is ``unanchored`` (``anchor.token_unchecked``).
``cryptography`` loads only when certificates are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.crypto.treehead import verify_sth
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.results import Result, StepResult

if TYPE_CHECKING:
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.crypto.windows import KeyWindow

__all__ = ["RECEIPT_FIELDS", "STH_FIELDS", "anchor_result", "verify_anchor_receipt"]

# The fields the peer requires (aigentsy-verify 1.6.3, verify_anchor_receipt).
RECEIPT_FIELDS: Final = (
    "receipt_version", "anchor_id", "sth", "sth_digest", "sth_digest_algorithm",
    "anchor_method", "tsa_url", "tsa_status", "anchored_at",
)  # fmt: skip
STH_FIELDS: Final = ("tree_size", "root_hash", "timestamp", "signature")
MAX_TOKEN_BYTES: Final = 1 << 20
# Fail closed (docs/adr/0010): the verdict without a proven token.
_UNCHECKED: Final = (
    "anchor.token_unchecked",
    "the time-stamp token was not verified: give the TSA certificate you trust",
)
_NO_TSA: Final = "no trusted TSA certificate given: the RFC 3161 token is not proven"


def _peer(steps: Sequence[StepResult]) -> dict[str, bool]:
    """The peer's booleans for parity reports: it stops at its first failure (fields, digest,
    status), so each flag also needs every earlier check passed."""
    passed = {step.name for step in steps if step.status == "ok"}
    fields = next((s for s in steps if s.name == "receipt_fields"), None)
    digest = {"receipt_fields", "sth_digest"} <= passed
    return {
        "fields_present": "receipt_fields" in passed,
        "sth_digest_match": digest,
        "tsa_granted": digest and "tsa_status" in passed,
        "tsr_present": fields is not None and bool(fields.details.get("tsr_present")),
    }


def anchor_result(
    source: str | None,
    steps: Sequence[StepResult],
    receipt: Mapping[str, Any] | None = None,
    sth_digest: str | None = None,
    token: Mapping[str, Any] | None = None,
) -> Result:
    """The :class:`~affidavit.verify.results.Result` of a receipt's ``steps``: verified only
    with the time-stamp token proven (docs/adr/0010), its subject the receipt's fields."""

    def text(name: str) -> str | None:
        value = None if receipt is None else receipt.get(name)
        return value if isinstance(value, str) else None

    subject = {
        "anchor_id": text("anchor_id"),
        "anchored_at": text("anchored_at"),
        "tsa_url": text("tsa_url"),
        "sth_digest": sth_digest,  # recomputed, lowercase hex
        "token": None if token is None else dict(token),  # VerifiedToken.to_json()
        "peer": _peer(steps),
    }
    return Result("anchor", source, tuple(steps), subject, ("timestamp_token",), _UNCHECKED)


def verify_anchor_receipt(
    receipt: object,
    *,
    tsa_certs: Sequence[bytes] = (),
    ca_certs: Sequence[bytes] = (),
    log_key: Ed25519PublicKey | None = None,
    log_key_windows: Sequence[KeyWindow] = (),
    expected_sth: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> Result:
    """Verify an anchor receipt under trusted ``tsa_certs`` (PEM or DER; ``ca_certs`` they must
    chain to), ``log_key`` and ``expected_sth``; every problem in it is a step, never raised.

    Raises:
        ``anchor.tsa_cert_unreadable``: a certificate argument is not a certificate (caller error).
    """
    trusted: list[Any] = []
    anchors: list[Any] = []
    if tsa_certs or ca_certs:
        # Lazy: cryptography loads only with a TSA certificate (docs/adr/0003, test_anchor.py).
        from affidavit.verify.anchor import rfc3161  # noqa: PLC0415

        trusted = [rfc3161.load_certificate(c, "TSA certificate") for c in tsa_certs]
        anchors = [rfc3161.load_certificate(c, "CA certificate") for c in ca_certs]
    fields = _fields_step(receipt)
    if fields.status == "failed" or not isinstance(receipt, Mapping):
        return anchor_result(source, (fields,))
    sth: Mapping[str, Any] = receipt["sth"]
    steps: list[StepResult] = [fields]
    if expected_sth is not None:
        steps.append(_sth_match_step(sth, expected_sth))
    try:
        sth_bytes = py_compact(sth)
    except errors.CanonicalError as e:  # pragma: no cover - strict JSON cannot produce these
        return anchor_result(source, (StepResult.unreadable("receipt_fields", e),))
    computed = sha256_hex(sth_bytes)
    steps.append(_digest_step(receipt, computed))
    steps.append(_status_step(receipt))
    steps.append(_sth_signature_step(sth, log_key, log_key_windows))
    token: dict[str, Any] | None = None
    if tsa_certs:
        step, token = _token_step(receipt, sth_bytes, trusted, anchors)
    else:
        step = StepResult.not_checked("timestamp_token", _NO_TSA)
    steps.append(step)
    return anchor_result(source, steps, receipt, computed, token)


def _fields_step(receipt: object) -> StepResult:
    """Step ``receipt_fields``: the peer's fields are there and of their type (else unreadable)."""
    name = "receipt_fields"

    def malformed(message: str, **details: Any) -> StepResult:
        error = errors.ProofError("anchor.malformed", message)
        return StepResult.unreadable(name, error, **details)

    if not isinstance(receipt, Mapping):
        return malformed("receipt is not an object")
    missing = [f for f in RECEIPT_FIELDS if f not in receipt]
    if missing:
        return malformed(f"receipt lacks {', '.join(missing)}", missing=missing)
    sth = receipt["sth"]
    if not isinstance(sth, Mapping):
        return malformed("sth is not an object")
    missing = [f for f in STH_FIELDS if f not in sth]
    if missing:
        return malformed(f"sth lacks {', '.join(missing)}", missing=[f"sth.{f}" for f in missing])
    tsr = receipt.get("tsr_base64")
    strings = ["sth_digest", "sth_digest_algorithm", "tsa_status"]
    if tsr is not None:
        strings.append("tsr_base64")
    wrong = next((key for key in strings if not isinstance(receipt[key], str)), None)
    if wrong is not None:
        return malformed(f"{wrong} is not a string")
    return StepResult.ok(name, tsr_present=bool(tsr))


def _failed(name: str, code: str, message: str, **details: Any) -> StepResult:
    return StepResult.failed(name, errors.ProofError(code, message), **details)


def _sth_match_step(sth: Mapping[str, Any], expected: Mapping[str, Any]) -> StepResult:
    try:
        same = py_compact(sth) == py_compact(expected)
    except errors.CanonicalError as e:
        return _failed("sth_match", "anchor.sth_mismatch", e.message)
    if same:
        return StepResult.ok("sth_match")
    return _failed(
        "sth_match",
        "anchor.sth_mismatch",
        "the receipt anchors another tree head than the expected one",
        expected={k: expected.get(k) for k in ("tree_size", "root_hash")},
        actual={k: sth.get(k) for k in ("tree_size", "root_hash")},
    )


def _digest_step(receipt: Mapping[str, Any], computed: str) -> StepResult:
    algorithm, claimed = receipt["sth_digest_algorithm"], receipt["sth_digest"]
    if algorithm != "SHA-256":
        message = f"sth_digest_algorithm is {algorithm!r}, not 'SHA-256'"
        return _failed("sth_digest", "anchor.digest_algorithm_unsupported", message)
    if claimed != computed:  # exact text, as the peer compares (docs/formats.md: lowercase hex)
        message = "sth_digest is not H(py-compact(sth))"
        return _failed(
            "sth_digest", "anchor.digest_mismatch", message, expected=computed, actual=claimed
        )
    return StepResult.ok("sth_digest", sth_digest=computed)


def _status_step(receipt: Mapping[str, Any]) -> StepResult:
    status = receipt["tsa_status"]
    if status == "granted":
        return StepResult.ok("tsa_status")
    message = f"tsa_status is {status!r}, not 'granted'"
    return _failed("tsa_status", "anchor.tsa_not_granted", message, actual=status)


def _sth_signature_step(
    sth: Mapping[str, Any], log_key: Ed25519PublicKey | None, windows: Sequence[KeyWindow]
) -> StepResult:
    name = "sth_signature"
    if log_key is None:
        return StepResult.not_checked(
            name, "no log key given: the tree head's own signature is not checked"
        )
    try:
        verify_sth(sth, log_key, windows=windows)
    except errors.SignatureError as e:
        if not e.code.startswith("treehead."):
            raise
        return StepResult.failed(name, e)
    return StepResult.ok(name, key=log_key.b64)


def _token_step(
    receipt: Mapping[str, Any], sth_bytes: bytes, trusted: Sequence[Any], anchors: Sequence[Any]
) -> tuple[StepResult, dict[str, Any] | None]:
    from affidavit.verify.anchor import rfc3161  # noqa: PLC0415 - lazy, as above

    try:
        der = _token_der(receipt.get("tsr_base64"))
        parsed = rfc3161.parse_token(der)
        verified = rfc3161.verify_token(parsed, sth_bytes, trusted, anchors)
    except errors.ProofError as e:
        return StepResult.failed("timestamp_token", e), None
    summary = verified.to_json()
    shown = {k: summary[k] for k in ("gen_time", "tsa_subject", "imprint_algorithm")}
    return StepResult.ok("timestamp_token", **shown), summary


def _token_der(text: str | None) -> bytes:
    if not text:
        raise errors.ProofError("anchor.token_absent", "the receipt carries no tsr_base64 token")
    if len(text) > MAX_TOKEN_BYTES * 4 // 3 + 4:
        raise errors.ProofError("anchor.token_malformed", "tsr_base64 is larger than 1 MiB")
    try:
        return b64decode_strict(text)
    except (ValueError, UnicodeError) as e:
        raise errors.ProofError("anchor.token_malformed", f"tsr_base64: {e}") from None
