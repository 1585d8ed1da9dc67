"""Threshold verification of a DSSE envelope's signatures under keys the caller trusts.

DSSE protocol.md, "Protocol": a signature is over ``PAE(payloadType, payload)``
(:meth:`~affidavit.verify.dsse.envelope.Envelope.signed_bytes`), never over the payload alone.
DSSE envelope.md, "Multiple signatures": "The verification policy on multiple signatures is
application-specific"; Affidavit's is the threshold of TUF and in-toto:

* every signature is tried under every trusted key: the envelope's ``keyid`` is an
  unauthenticated hint and decides nothing (protocol.md: "KEYID ... MUST NOT be used for
  security decisions"); only Ed25519 keys are trusted, verified strictly
  (:func:`affidavit.verify.crypto.signature.verify_ed25519`);
* what counts toward the threshold is the number of *distinct trusted keys* under which at least
  one signature verifies: a key counts once however many signatures it made, so one key cannot
  meet a threshold of two by signing twice;
* a threshold below 1, or above the number of distinct trusted keys (a threshold nobody could
  ever meet), is a usage error, never a silent "not verified".

Fail closed: :attr:`DsseVerification.error` is None only when the threshold is met.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.dsse.envelope import Envelope

__all__ = ["DsseVerification", "SignatureCheck", "check_threshold", "verify_envelope"]


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """One envelope signature: its index, its (unauthenticated) keyid, and the trusted keys it
    verifies under (empty: under none)."""

    index: int
    keyid: str
    verified_by: tuple[Ed25519PublicKey, ...]


@dataclass(frozen=True, slots=True)
class DsseVerification:
    """The signatures of one envelope checked against the trusted keys, and the threshold."""

    signatures: tuple[SignatureCheck, ...]
    keys_verified: tuple[Ed25519PublicKey, ...]  # distinct, in trusted-key order
    threshold: int
    trusted_key_count: int

    @property
    def met(self) -> bool:
        """True when at least ``threshold`` distinct trusted keys verified a signature."""
        return len(self.keys_verified) >= self.threshold

    @property
    def error(self) -> errors.EnvelopeError | None:
        """Why the envelope does not verify (None when the threshold is met).

        ``dsse.signature_unverified`` when no signature verifies under any trusted key,
        ``dsse.threshold_not_met`` when some do but under fewer distinct keys than the threshold.
        """
        if self.met:
            return None
        details = {"threshold": self.threshold, "verified_keys": len(self.keys_verified)}
        if not self.keys_verified:
            return errors.EnvelopeError(
                "dsse.signature_unverified",
                f"none of the {len(self.signatures)} signature(s) verifies under any of the "
                f"{self.trusted_key_count} trusted key(s) over PAE(payloadType, payload)",
                details=details,
            )
        return errors.EnvelopeError(
            "dsse.threshold_not_met",
            f"signatures verify under {len(self.keys_verified)} distinct trusted key(s), "
            f"the threshold is {self.threshold}",
            details=details,
        )


def verify_envelope(
    envelope: Envelope, trusted_keys: Iterable[Ed25519PublicKey], *, threshold: int = 1
) -> DsseVerification:
    """Check every signature of ``envelope`` under every key of ``trusted_keys`` (module
    docstring). Returns the result whatever it is; :attr:`DsseVerification.error` says whether
    the threshold is met.

    Raises:
        ``usage.invalid``: ``threshold`` is below 1 or above the number of distinct trusted keys.
    """
    keys = tuple(dict.fromkeys(trusted_keys))  # distinct, order kept (Ed25519PublicKey hashes)
    check_threshold(threshold, len(keys))
    message = envelope.signed_bytes()
    checks: list[SignatureCheck] = []
    verified: set[Ed25519PublicKey] = set()
    for index, signature in enumerate(envelope.signatures):
        under = tuple(key for key in keys if _verifies(key, message, signature.sig))
        verified.update(under)
        checks.append(SignatureCheck(index, signature.keyid, under))
    return DsseVerification(
        signatures=tuple(checks),
        keys_verified=tuple(key for key in keys if key in verified),
        threshold=threshold,
        trusted_key_count=len(keys),
    )


def check_threshold(threshold: int, distinct_keys: int) -> None:
    """Refuse a threshold that is not an integer from 1 to ``distinct_keys`` (module docstring).

    Raises:
        ``usage.invalid``: below 1, or above the number of distinct trusted keys.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise errors.UsageError(f"the threshold must be an integer of at least 1, got {threshold}")
    if threshold > distinct_keys:
        raise errors.UsageError(
            f"the threshold {threshold} is more than the {distinct_keys} distinct trusted "
            "key(s): it could never be met"
        )


def _verifies(key: Ed25519PublicKey, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is a valid Ed25519 signature of ``message`` under ``key``: a
    signature of another length or algorithm simply does not verify (it may be for a key of
    another kind, DSSE envelope.md "Multiple signatures")."""
    try:
        verify_ed25519(key, message, signature)
    except errors.SignatureError:
        return False
    return True
