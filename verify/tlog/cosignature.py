"""C2SP tlog-cosignature: what a witness signs over a checkpoint, and checking it offline.

A cosignature is a signed-note signature line whose bytes are a big-endian u64 POSIX time and an
Ed25519 (``cosignature/v1``, key type 0x04) or ML-DSA-44 (``subtree/v1``, 0x06) signature; key IDs
and signed messages are docs/formats.md §6 "Cosignatures". ML-DSA-44 needs a ``cryptography``
that has it, imported only when such a key is read. Lines from cosigners the caller did not name
are ignored (tlog-witness); a named cosigner's line that does not verify rejects the note
(``tlog.cosignature_bad``). The log's own signature is
:func:`affidavit.verify.crypto.checkpoint.verify_checkpoint`'s.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    is_key_name,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey, b64decode_strict
from affidavit.verify.crypto.signature import verify_ed25519

__all__ = [
    "ED25519",
    "MAX_TIMESTAMP",
    "ML_DSA_44",
    "Algorithm",
    "Cosigner",
    "VerifiedCosignature",
    "cosignature_line",
    "cosigner_key_id",
    "cosigner_vkey",
    "ed25519_cosigned_message",
    "ml_dsa_44_available",
    "ml_dsa_44_cosigned_message",
    "parse_cosigner_vkey",
    "verify_cosignatures",
]

Algorithm = Literal["ed25519", "ml-dsa-44"]
ED25519: Final[Algorithm] = "ed25519"
ML_DSA_44: Final[Algorithm] = "ml-dsa-44"

# tlog-cosignature, "Format": the signature type byte of each kind, and its key and signature sizes.
_TYPE_BYTE: Final[dict[Algorithm, int]] = {ED25519: 0x04, ML_DSA_44: 0x06}
_KEY_BYTES: Final[dict[Algorithm, int]] = {ED25519: 32, ML_DSA_44: 1312}
_SIGNATURE_BYTES: Final[dict[Algorithm, int]] = {ED25519: 64, ML_DSA_44: 2420}
MAX_TIMESTAMP: Final = (1 << 63) - 1  # "It MUST NOT exceed 2^63 - 1"
_SUBTREE_LABEL: Final = b"subtree/v1\n\x00"  # uint8 label[12]


@dataclass(frozen=True, slots=True)
class Cosigner:
    """A trusted cosigner: its name, 4-byte key ID, algorithm and raw public key."""

    name: str
    key_id: bytes
    algorithm: Algorithm
    public_key: bytes

    @property
    def label(self) -> str:
        """``name+hexkeyid``, how reports name this cosigner."""
        return f"{self.name}+{self.key_id.hex()}"


@dataclass(frozen=True, slots=True)
class VerifiedCosignature:
    """A cosignature that verified: who made it, and the time it states (POSIX seconds)."""

    cosigner: Cosigner
    timestamp: int


def cosigner_key_id(name: str, algorithm: Algorithm, public_key: bytes) -> bytes:
    """``SHA-256(name || 0x0A || type || public key)[:4]`` (tlog-cosignature, "Format")."""
    prefix = name.encode("utf-8") + b"\n" + bytes([_TYPE_BYTE[algorithm]])
    return hashlib.sha256(prefix + public_key).digest()[:4]


def cosigner_vkey(name: str, algorithm: Algorithm, public_key: bytes) -> str:
    """The verifier key string of a cosigner (signed-note "Verifier keys", type 0x04 or 0x06)."""
    encoded = base64.b64encode(bytes([_TYPE_BYTE[algorithm]]) + public_key).decode("ascii")
    return f"{name}+{cosigner_key_id(name, algorithm, public_key).hex()}+{encoded}"


def ml_dsa_44_available() -> bool:
    """Whether the installed ``cryptography`` can verify (and sign) ML-DSA-44."""
    try:
        from cryptography.hazmat.primitives.asymmetric import mldsa  # noqa: F401, PLC0415 - a probe
    except ImportError:  # pragma: no cover - cryptography releases before ML-DSA
        return False
    return True


def parse_cosigner_vkey(vkey: str) -> Cosigner:
    """Parse a cosigner verifier key: ``name+hexkeyid+base64(type || key)``, type 0x04 or 0x06.

    Raises:
        ``tlog.cosigner_key_malformed``: wrong shape, type, key length or key ID.
        ``tlog.cosigner_unsupported``: an ML-DSA-44 key where ``cryptography`` lacks ML-DSA.
        ``key.*``: the Ed25519 key is not a canonical, non-weak point.
    """
    parts = vkey.split("+", 2)  # the base64 part may itself contain "+"
    if len(parts) != 3 or not is_key_name(parts[0]) or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise _bad_key("cosigner key must be name+<8 lowercase hex key ID>+base64")
    name, hex_id, encoded = parts
    try:
        blob = b64decode_strict(encoded)
    except (ValueError, UnicodeError) as e:
        raise _bad_key(f"cosigner key data: {e}") from None
    algorithm = next((a for a, byte in _TYPE_BYTE.items() if blob[:1] == bytes([byte])), None)
    if algorithm is None:
        raise _bad_key("cosigner key type must be 0x04 (Ed25519) or 0x06 (ML-DSA-44)")
    public_key = blob[1:]
    if len(public_key) != _KEY_BYTES[algorithm]:
        raise _bad_key(f"{algorithm} cosigner key must be {_KEY_BYTES[algorithm]} bytes")
    if algorithm == ED25519:
        Ed25519PublicKey(public_key)  # canonical, on the curve, not of small order
    elif not ml_dsa_44_available():  # pragma: no cover - cryptography releases before ML-DSA
        raise errors.ProofError(
            "tlog.cosigner_unsupported", "this cryptography build cannot verify ML-DSA-44"
        )
    if algorithm == ML_DSA_44 and len(name.encode("utf-8")) > 255:  # opaque cosigner_name<1..2^8-1>
        raise _bad_key("an ML-DSA-44 cosigner name is at most 255 bytes")
    if cosigner_key_id(name, algorithm, public_key).hex() != hex_id:
        raise _bad_key("cosigner key ID does not match SHA-256(name, 0x0A, type, key)[:4]")
    return Cosigner(name, bytes.fromhex(hex_id), algorithm, public_key)


def ed25519_cosigned_message(checkpoint_text: str, timestamp: int) -> bytes:
    """The message of an Ed25519 ``cosignature/v1`` (tlog-cosignature, "Ed25519 signed message")
    over the note text, extension lines included, without the blank line and signatures."""
    _check_timestamp(timestamp)
    return f"cosignature/v1\ntime {timestamp}\n{checkpoint_text}".encode()


def ml_dsa_44_cosigned_message(cosigner_name: str, timestamp: int, checkpoint: Checkpoint) -> bytes:
    """The ``cosigned_message`` of an ML-DSA-44 checkpoint cosignature (start 0, end = size).

    Raises:
        ``usage.invalid``: the cosigner name or origin is empty or longer than 255 bytes.
    """
    _check_timestamp(timestamp)
    name, origin = cosigner_name.encode("utf-8"), checkpoint.origin.encode("utf-8")
    if not (0 < len(name) < 256 and 0 < len(origin) < 256):
        raise errors.UsageError("cosigner name and log origin must be 1 to 255 bytes")
    return b"".join(
        (
            _SUBTREE_LABEL,
            bytes([len(name)]) + name,
            struct.pack(">Q", timestamp),
            bytes([len(origin)]) + origin,
            struct.pack(">QQ", 0, checkpoint.tree_size),  # start, end (RFC 8446 §3.3 order)
            checkpoint.root_hash,
        )
    )


def cosignature_line(cosigner: Cosigner, timestamp: int, signature: bytes) -> str:
    """``— <name> base64(key ID || u64 timestamp || signature)`` plus newline.

    Raises:
        ``usage.invalid``: a signature of the wrong length, or a timestamp out of range.
    """
    _check_timestamp(timestamp)
    if len(signature) != _SIGNATURE_BYTES[cosigner.algorithm]:
        raise errors.UsageError(f"a {cosigner.algorithm} cosignature has the wrong length")
    return note_signature_line(
        cosigner.name, cosigner.key_id, struct.pack(">Q", timestamp) + signature
    )


def verify_cosignatures(
    note: str | bytes, cosigners: Iterable[Cosigner]
) -> tuple[VerifiedCosignature, ...]:
    """The verified cosignatures on ``note`` by the named ``cosigners`` (others ignored), in note
    order; possibly none: enough is the policy's question.

    Raises:
        ``checkpoint.malformed``: the note or its checkpoint body is malformed.
        ``tlog.cosignature_malformed``: a line of the wrong length, a timestamp over 2^63 - 1,
            or a named cosigner cosigning twice.
        ``tlog.cosignature_bad``: a named cosigner's cosignature does not verify.
    """
    trusted = {(c.name, c.key_id): c for c in cosigners}
    parsed = parse_note(note)
    checkpoint = parse_checkpoint_body(parsed.text)
    found: list[VerifiedCosignature] = []
    for line in parsed.signatures:
        cosigner = trusted.get((line.name, line.key_id))
        if cosigner is None:
            continue
        if any(v.cosigner == cosigner for v in found):
            raise _bad_cosignature(cosigner, "cosigns the checkpoint twice")
        if len(line.signature) != 8 + _SIGNATURE_BYTES[cosigner.algorithm]:
            raise _bad_cosignature(cosigner, "is not a u64 timestamp and a signature")
        (timestamp,) = struct.unpack(">Q", line.signature[:8])
        if timestamp > MAX_TIMESTAMP:
            raise _bad_cosignature(cosigner, "has a timestamp above 2^63 - 1")
        _verify(cosigner, timestamp, line.signature[8:], parsed.text, checkpoint)
        found.append(VerifiedCosignature(cosigner, timestamp))
    return tuple(found)


def _verify(
    cosigner: Cosigner, timestamp: int, signature: bytes, text: str, checkpoint: Checkpoint
) -> None:
    if cosigner.algorithm == ED25519:
        message = ed25519_cosigned_message(text, timestamp)
        try:
            verify_ed25519(Ed25519PublicKey(cosigner.public_key), message, signature)
        except errors.SignatureError:
            raise _refused(cosigner) from None
        return
    # Only ML-DSA needs cryptography, kept off `verify bundle` with a tlog_proof (docs/adr/0003).
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey  # noqa: PLC0415

    if not 0 < len(checkpoint.origin.encode("utf-8")) < 256:  # opaque log_origin<1..2^8-1>
        raise _refused(cosigner)  # no cosigner can have signed a message with this origin
    message = ml_dsa_44_cosigned_message(cosigner.name, timestamp, checkpoint)
    try:
        MLDSA44PublicKey.from_public_bytes(cosigner.public_key).verify(signature, message)
    except InvalidSignature:
        raise _refused(cosigner) from None


def _check_timestamp(timestamp: int) -> None:
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise errors.UsageError("a cosignature timestamp is a POSIX time from 0 to 2^63 - 1")


def _bad_key(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.cosigner_key_malformed", message)


def _bad_cosignature(cosigner: Cosigner, what: str) -> errors.ProofError:
    return errors.ProofError(
        "tlog.cosignature_malformed",
        f"cosignature by {cosigner.label} {what}",
        details={"cosigner": cosigner.label},
    )


def _refused(cosigner: Cosigner) -> errors.ProofError:
    return errors.ProofError(
        "tlog.cosignature_bad",
        f"cosignature by {cosigner.label} does not verify over the checkpoint",
        details={"cosigner": cosigner.label},
    )
