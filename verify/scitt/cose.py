"""COSE_Sign1 (RFC 9052 §4.2): parsed once, strictly, into a frozen value; its Sig_structure.

>>> sign1 = parse_sign1(bytes.fromhex("d28443a10126a0f640"), what="example")
>>> (sign1.alg, sign1.payload, sign1.unprotected)
(-7, None, {})

Strict: tagged 18 (RFC 9052 §2), four elements of their types, integer or text labels, none in
both buckets (§3), ``crit`` only protected, naming labels the caller understands (§3.1).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

import cbor2
from affidavit.verify import errors
from affidavit.verify.scitt.cbor import MAX_CBOR_BYTES, decode, encode

__all__ = [
    "COSE_SIGN1_TAG",
    "HEADER_ALG",
    "HEADER_CONTENT_TYPE",
    "HEADER_CRIT",
    "HEADER_KID",
    "Sign1",
    "parse_sign1",
    "sig_structure",
]

COSE_SIGN1_TAG: Final = 18  # RFC 9052 §2
HEADER_ALG: Final = 1  # RFC 9052 §3.1
HEADER_CRIT: Final = 2
HEADER_CONTENT_TYPE: Final = 3
HEADER_KID: Final = 4


def _malformed(what: str, message: str) -> errors.ScittError:
    return errors.ScittError("scitt.cose_malformed", f"{what}: {message}")


@dataclass(frozen=True, slots=True)
class Sign1:
    """One COSE_Sign1, parsed (module docstring). ``protected_bytes`` are the signed bytes as
    sent; ``payload`` is None when detached."""

    protected_bytes: bytes
    protected: dict[Any, Any]
    unprotected: dict[Any, Any]
    payload: bytes | None
    signature: bytes

    @property
    def alg(self) -> object:
        return self.protected.get(HEADER_ALG)

    @property
    def kid(self) -> bytes | None:
        """The protected ``kid`` (label 4) when it is a byte string (a hint, never trusted)."""
        kid = self.protected.get(HEADER_KID)
        return kid if isinstance(kid, bytes) else None

    def to_be_signed(self, payload: bytes | None = None) -> bytes:
        """The Sig_structure over the attached payload, or over ``payload`` when detached."""
        chosen = self.payload if payload is None else payload
        if chosen is None:
            raise errors.ScittError("scitt.payload_missing", "the payload is detached")
        return sig_structure(self.protected_bytes, chosen)

    def encoded(self, unprotected: dict[Any, Any] | None = None) -> bytes:
        """This message encoded again (deterministic CBOR), with ``unprotected`` in place of its
        unprotected header when given."""
        header = self.unprotected if unprotected is None else unprotected
        body = [self.protected_bytes, header, self.payload, self.signature]
        return encode(cbor2.CBORTag(COSE_SIGN1_TAG, body))


def sig_structure(protected_bytes: bytes, payload: bytes) -> bytes:
    """RFC 9052 §4.4: ``["Signature1", body_protected, external_aad (empty), payload]``."""
    return encode(["Signature1", protected_bytes, b"", payload])


def _crit_unsupported(message: str, **details: Any) -> errors.ScittError:
    return errors.ScittError("scitt.crit_unsupported", message, details=details)


def _check_labels(header: dict[Any, Any], what: str) -> None:
    for label in header:
        if not isinstance(label, int | str) or isinstance(label, bool):
            raise _malformed(what, "a header label is not an integer or text (RFC 9052 §3)")


def _check_crit(protected: dict[Any, Any], understood: Collection[Any], what: str) -> None:
    """RFC 9052 §3.1 crit: a non-empty array of labels, each in the protected header and
    understood; the message is refused otherwise."""
    if HEADER_CRIT not in protected:
        return
    crit = protected[HEADER_CRIT]
    if not isinstance(crit, list) or not crit:
        raise _crit_unsupported(f"{what}: crit is not a non-empty array (RFC 9052 §3.1)")
    for label in crit:
        if not isinstance(label, int | str) or isinstance(label, bool) or label not in protected:
            raise _crit_unsupported(
                f"{what}: crit lists {label!r}, which is not a label of the protected header"
            )
        if label not in understood:
            raise _crit_unsupported(
                f"{what}: crit marks header {label!r} critical, and it is not understood here",
                label=label,
            )


def parse_sign1(
    data: bytes, *, what: str, understood: Collection[Any] = (), max_bytes: int = MAX_CBOR_BYTES
) -> Sign1:
    """The COSE_Sign1 in ``data`` (module docstring). ``understood``: the protected labels the
    caller processes, which ``crit`` may name.

    Raises:
        ``cbor.*``: not strict CBOR (the message or its protected header).
        ``scitt.cose_malformed``: not a tagged COSE_Sign1 of the right shape.
        ``scitt.crit_unsupported``: a critical header that is malformed or not understood.
    """
    value = decode(data, what=what, max_bytes=max_bytes)
    if not isinstance(value, cbor2.CBORTag) or value.tag != COSE_SIGN1_TAG:
        raise _malformed(what, "not a COSE_Sign1 tagged 18 (RFC 9052 §2)")
    body = value.value
    if not isinstance(body, list) or len(body) != 4:
        raise _malformed(what, "a COSE_Sign1 is an array of 4 elements (RFC 9052 §4.2)")
    protected_bytes, unprotected, payload, signature = body
    if not isinstance(protected_bytes, bytes):
        raise _malformed(what, "the protected header is not a byte string")
    protected: Any = {}
    if protected_bytes:
        protected = decode(protected_bytes, what=f"{what} protected header", tags=frozenset())
        if not isinstance(protected, dict):
            raise _malformed(what, "the protected header does not hold a map")
    if not isinstance(unprotected, dict):
        raise _malformed(what, "the unprotected header is not a map")
    if payload is not None and not isinstance(payload, bytes):
        raise _malformed(what, "the payload is neither a byte string nor nil")
    if not isinstance(signature, bytes):
        raise _malformed(what, "the signature is not a byte string")
    _check_labels(protected, what)
    _check_labels(unprotected, what)
    both = set(protected) & set(unprotected)
    if both:
        raise _malformed(what, f"label(s) {sorted(map(str, both))} in both header buckets")
    if HEADER_CRIT in unprotected:
        raise _crit_unsupported(f"{what}: crit is in the unprotected header (RFC 9052 §3.1)")
    _check_crit(protected, understood, what)
    return Sign1(protected_bytes, protected, unprotected, payload, signature)
