"""The DSSE JSON envelope (DSSE envelope.md) and its pre-authentication encoding (protocol.md):
a signature covers ``PAE(payloadType, payload)``, binding the payload and its type. ``keyid`` is
an unauthenticated hint; trust comes only from the caller's keys.

>>> pae("http://example.com/HelloWorld", b"hello world")
b'DSSEv1 29 http://example.com/HelloWorld 11 hello world'
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.json.strict import loads

__all__ = [
    "IN_TOTO_PAYLOAD_TYPE",
    "MAX_ENVELOPE_BYTES",
    "MAX_SIGNATURES",
    "Envelope",
    "Signature",
    "decode_b64",
    "dsse_keyid",
    "envelope_json",
    "pae",
    "parse_envelope",
]

# in-toto attestation spec v1, envelope.md: the payloadType of a Statement.
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


# Room for a large third-party predicate (an SBOM) while bounding what one untrusted file costs
# (the parse, the decode and the PAE each hold about one more copy). Checked before parsing.
MAX_ENVELOPE_BYTES: Final = 16 * 1024 * 1024
# Every signature is tried under every trusted key: signatures x keys verifications.
MAX_SIGNATURES: Final = 256

_STANDARD: Final = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_URL_SAFE: Final = re.compile(rb"[A-Za-z0-9_-]*={0,2}")


def dsse_keyid(public_key_raw: bytes) -> str:
    """The ``keyid`` Affidavit writes for an Ed25519 key: securesystemslib's default key ID, the
    hex SHA-256 of ``{"keytype":"ed25519","keyval":{"public":"<hex>"},"scheme":"ed25519"}``, so
    its ``Envelope.verify`` (which tries only matching keyids) finds the signature. Verifying
    here never relies on it.
    """
    key = public_key_raw.hex()
    canonical = f'{{"keytype":"ed25519","keyval":{{"public":"{key}"}},"scheme":"ed25519"}}'
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding of ``payload_type`` (UTF-8) and ``body``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


@dataclass(frozen=True, slots=True)
class Signature:
    """One envelope signature: the raw signature bytes and the signer's (unauthenticated) key id."""

    keyid: str
    sig: bytes


@dataclass(frozen=True, slots=True)
class Envelope:
    """A DSSE envelope: the serialized body, its type, and the signatures over their PAE."""

    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def signed_bytes(self) -> bytes:
        """The bytes every signature of this envelope is over: ``PAE(payloadType, payload)``."""
        return pae(self.payload_type, self.payload)


def envelope_json(envelope: Envelope) -> dict[str, object]:
    """The standard JSON form (DSSE envelope.md), base64 standard alphabet with padding."""
    return {
        "payload": base64.b64encode(envelope.payload).decode("ascii"),
        "payloadType": envelope.payload_type,
        "signatures": [
            {"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")}
            for s in envelope.signatures
        ],
    }


def decode_b64(text: str, *, field: str) -> bytes:
    """Decode DSSE base64: standard or URL-safe alphabet (DSSE envelope.md, "Either standard or
    URL-safe encoding is allowed"), padded or not. Strict otherwise: one alphabet per value, no
    other character, only the padding the length needs, unused trailing bits zero (so no
    malleable spellings).

    Raises:
        ``dsse.bad_base64``: ``text`` is none of these (``field`` names the value).
    """
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        raise _bad_base64(field, "a character outside base64") from None
    url_safe = bool(_URL_SAFE.fullmatch(data)) and not _STANDARD.fullmatch(data)
    if not (url_safe or _STANDARD.fullmatch(data)):
        raise _bad_base64(field, "a character outside the standard and URL-safe alphabets")
    body = data.rstrip(b"=")
    padding = len(data) - len(body)
    if len(body) % 4 == 1 or (padding and len(data) % 4):
        raise _bad_base64(field, "wrong length or padding")
    try:
        raw = (base64.urlsafe_b64decode if url_safe else base64.b64decode)(
            body + b"=" * (-len(body) % 4)
        )
    except (binascii.Error, ValueError) as e:  # pragma: no cover - the checks above cover it
        raise _bad_base64(field, str(e)) from None
    canonical = (base64.urlsafe_b64encode if url_safe else base64.b64encode)(raw)
    if canonical.rstrip(b"=") != body:
        raise _bad_base64(field, "not canonical (unused trailing bits are set)")
    return raw


def _bad_base64(field: str, why: str) -> errors.EnvelopeError:
    return errors.EnvelopeError(
        "dsse.bad_base64", f"{field} is not base64: {why}", details={"field": field}
    )


def parse_envelope(raw: bytes) -> Envelope:
    """Read a DSSE JSON envelope strictly (DSSE envelope.md, "Parsing rules"): strict JSON of at
    most :data:`MAX_ENVELOPE_BYTES`, the REQUIRED fields present, an unset ``keyid`` empty,
    unrecognized fields ignored, 1 to :data:`MAX_SIGNATURES` signatures.

    Raises:
        ``dsse.too_large``, ``json.*``, ``dsse.malformed``, ``dsse.bad_base64``,
        ``dsse.no_signatures``, ``dsse.too_many_signatures`` (all exit 2).
    """
    if len(raw) > MAX_ENVELOPE_BYTES:
        raise errors.EnvelopeError(
            "dsse.too_large",
            f"envelope is {len(raw)} bytes, over the limit of {MAX_ENVELOPE_BYTES}",
            details={"size": len(raw), "limit": MAX_ENVELOPE_BYTES},
        )
    document = loads(raw, max_bytes=MAX_ENVELOPE_BYTES)
    if not isinstance(document, dict):
        raise _malformed("the envelope is not a JSON object")
    payload_b64 = _string(document, "payload", "payload")
    payload_type = _string(document, "payloadType", "payloadType")
    if "signatures" not in document:
        raise _malformed("signatures is missing")
    signatures = document["signatures"]
    if not isinstance(signatures, list):
        raise _malformed("signatures is not an array")
    if not signatures:
        raise errors.EnvelopeError("dsse.no_signatures", "the envelope carries no signature")
    if len(signatures) > MAX_SIGNATURES:
        raise errors.EnvelopeError(
            "dsse.too_many_signatures",
            f"the envelope carries {len(signatures)} signatures, over the limit of "
            f"{MAX_SIGNATURES}",
            details={"count": len(signatures), "limit": MAX_SIGNATURES},
        )
    payload = decode_b64(payload_b64, field="payload")
    parsed: list[Signature] = []
    for index, entry in enumerate(signatures):
        where = f"signatures[{index}]"
        if not isinstance(entry, dict):
            raise _malformed(f"{where} is not an object")
        sig = decode_b64(_string(entry, "sig", f"{where}.sig"), field=f"{where}.sig")
        keyid = _string(entry, "keyid", f"{where}.keyid") if "keyid" in entry else ""
        parsed.append(Signature(keyid=keyid, sig=sig))
    return Envelope(payload_type=payload_type, payload=payload, signatures=tuple(parsed))


def _string(document: dict[str, Any], key: str, where: str) -> str:
    if key not in document:
        raise _malformed(f"{where} is missing")
    value = document[key]
    if not isinstance(value, str):
        raise _malformed(f"{where} is not a string")
    return value


def _malformed(message: str) -> errors.EnvelopeError:
    return errors.EnvelopeError("dsse.malformed", message)
