"""OutcomeAttestation verification (docs/formats.md §4, the peer's ``sample_attestation.json``).

>>> result = verify_attestation({"attestation": {}, "payload_hash": "", "signature": "",
...                              "algorithm": "Ed25519"})
>>> result.verdict, result.code
('failed', 'attestation.payload_hash_mismatch')

Fail closed: the embedded ``public_key_base64`` proves nothing (anyone can embed their own key),
so ``verified`` needs the signature to verify under a key the caller trusts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import decode_signature_b64, verify_ed25519
from affidavit.verify.json.canonical import py_compact, sha256_hex
from affidavit.verify.json.forms import same_digest
from affidavit.verify.results import Result, StepResult

__all__ = ["verify_attestation"]

_UNANCHORED: Final = (
    "no trusted key given (the key embedded in the attestation is not trusted on its own)"
)


def _parse(unverified: Any) -> tuple[dict[str, Any], str, str]:
    def malformed(message: str) -> errors.BundleError:
        return errors.BundleError("attestation.malformed", message)

    if not isinstance(unverified, dict):
        raise malformed("an OutcomeAttestation must be a JSON object")
    body = unverified.get("attestation")
    if not isinstance(body, dict):
        raise malformed("attestation must be an object")
    claimed, signature = unverified.get("payload_hash"), unverified.get("signature")
    if not isinstance(claimed, str) or not isinstance(signature, str):
        raise malformed("payload_hash and signature must be strings")
    if unverified.get("algorithm", "Ed25519") != "Ed25519":
        raise malformed(f"unsupported algorithm {unverified.get('algorithm')!r}")
    return body, claimed, signature


def verify_attestation(
    unverified_attestation: Any,
    trusted_keys: Iterable[Ed25519PublicKey] = (),
    *,
    source: str | None = None,
) -> Result:
    """Verify an OutcomeAttestation (steps ``parse``, ``payload_hash``, ``signature``); never
    raises for any JSON value."""
    try:
        body, claimed, signature_text = _parse(unverified_attestation)
    except errors.AffidavitError as e:
        return Result.unreadable_input("attestation", source, e)
    message = py_compact(body)
    recomputed = sha256_hex(message)
    steps = [StepResult.ok("parse")]
    if same_digest(recomputed, claimed):
        steps.append(StepResult.ok("payload_hash"))
    else:
        mismatch = errors.BundleError(
            "attestation.payload_hash_mismatch", "payload_hash does not match the attestation"
        )
        steps.append(
            StepResult.failed("payload_hash", mismatch, expected=recomputed, actual=claimed)
        )
    steps.append(_signature_step(message, signature_text, tuple(trusted_keys)))
    # Verified only under a key the caller trusts (style.md §7).
    subject = {"payload_hash": recomputed}
    unproven = ("attestation.unanchored", _UNANCHORED)
    return Result("attestation", source, tuple(steps), subject, ("signature",), unproven)


def _signature_step(
    message: bytes, signature_text: str, trusted: tuple[Ed25519PublicKey, ...]
) -> StepResult:
    try:
        signature = decode_signature_b64(signature_text)
    except errors.AffidavitError as e:
        return StepResult.failed("signature", e)
    if not trusted:
        return StepResult.not_checked("signature", _UNANCHORED)
    for key in trusted:
        try:
            verify_ed25519(key, message, signature)
        except errors.AffidavitError:
            continue
        return StepResult.ok("signature", key=key.b64)
    bad = errors.BundleError(
        "attestation.signature_bad",
        f"the signature verifies under none of the {len(trusted)} trusted key(s)",
    )
    return StepResult.failed("signature", bad)
