"""The witness's keys and the cosignature lines they make (C2SP tlog-cosignature).

Two keys, both PKCS#8 PEM files of mode 0600: Ed25519 (always; ``cosignature/v1`` lines, vkey
type 0x04) and optionally ML-DSA-44 in the seed-only form of RFC 9881 (``subtree/v1`` lines over
the whole tree, vkey type 0x06; tlog-witness: "Witnesses SHOULD use ML-DSA-44 cosignatures").
The key IDs differ by their type byte, so the two lines never collide. The Ed25519 key must be
this cosigner's own, never a log key the witness trusts (:func:`check_distinct`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.attest.files import create_all
from affidavit.attest.host import read_key_bytes
from affidavit.attest.keyring import (
    SigningKey,
    generate_keypair,
    key_file_is_insecure,
    load_private_pem,
    load_signing_key,
    private_key_pem,
)
from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import Checkpoint, NoteVerifier, is_key_name
from affidavit.verify.tlog.cosignature import (
    ED25519,
    ML_DSA_44,
    Algorithm,
    Cosigner,
    cosignature_line,
    cosigner_key_id,
    cosigner_vkey,
    ed25519_cosigned_message,
    ml_dsa_44_available,
    ml_dsa_44_cosigned_message,
)
from cryptography.hazmat.primitives import serialization

__all__ = [
    "WitnessKeys",
    "check_distinct",
    "check_origins",
    "load_ml_dsa_44_key",
    "load_witness_keys",
    "write_key_files",
]

_SEED_BYTES = 32


@dataclass(frozen=True, slots=True, eq=False)
class WitnessKeys:
    """A cosigner name with its Ed25519 key and, optionally, an ML-DSA-44 key (secrets never in
    ``repr``)."""

    name: str
    ed25519: SigningKey = field(repr=False)
    ml_dsa_44: Any = field(default=None, repr=False)
    cosigners: tuple[Cosigner, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not is_key_name(self.name):
            raise errors.UsageError(
                f"witness name {self.name!r} must be a note key name: no spaces and no '+'"
            )
        if len(self.name.encode("utf-8")) > 255:
            raise errors.UsageError("witness name must be at most 255 bytes (subtree/v1)")
        raw = self.ed25519.public_key.raw
        found = [Cosigner(self.name, cosigner_key_id(self.name, ED25519, raw), ED25519, raw)]
        if self.ml_dsa_44 is not None:
            public = self.ml_dsa_44.public_key().public_bytes_raw()
            key_id = cosigner_key_id(self.name, ML_DSA_44, public)
            found.append(Cosigner(self.name, key_id, ML_DSA_44, public))
        object.__setattr__(self, "cosigners", tuple(found))

    def vkeys(self) -> list[str]:
        """The cosigner verifier keys (signed-note vkeys of type 0x04, then 0x06) for policies."""
        return [cosigner_vkey(c.name, c.algorithm, c.public_key) for c in self.cosigners]

    def cosign(self, text: str, checkpoint: Checkpoint, timestamp: int) -> list[str]:
        """The cosignature lines over a checkpoint (``text`` its note text) at ``timestamp``
        (tlog-witness: never zero).

        Raises:
            ``usage.invalid``: a timestamp of zero or beyond 2^63 - 1.
        """
        if timestamp <= 0:
            raise errors.UsageError("a witness cosignature never has a zero timestamp")
        ed25519 = self.cosigners[0]
        signature = self.ed25519.sign(ed25519_cosigned_message(text, timestamp))
        lines = [cosignature_line(ed25519, timestamp, signature)]
        if self.ml_dsa_44 is not None:
            message = ml_dsa_44_cosigned_message(self.name, timestamp, checkpoint)
            lines.append(
                cosignature_line(self.cosigners[1], timestamp, self.ml_dsa_44.sign(message))
            )
        return lines


def load_witness_keys(name: str, key: Path, ml_dsa_key: Path | None = None) -> WitnessKeys:
    """Load the witness's keys (0600 enforced on both files).

    Raises:
        ``key.insecure_permissions``: a key file is readable or writable by group or others.
        ``key.unrecognized``: not a PKCS#8 PEM key of the expected algorithm.
        ``io.unreadable``: a file cannot be read.
        ``tlog.cosigner_unsupported``: an ML-DSA-44 key where ``cryptography`` lacks ML-DSA.
        ``usage.invalid``: the name is not a note key name.
    """
    ed25519 = load_signing_key(key, refuse_world_readable=True)
    ml_dsa = load_ml_dsa_44_key(ml_dsa_key) if ml_dsa_key is not None else None
    return WitnessKeys(name, ed25519, ml_dsa)


def load_ml_dsa_44_key(path: Path) -> Any:
    """An ML-DSA-44 private key from a PKCS#8 PEM file (seed form), mode 0600.

    Raises:
        as :func:`load_witness_keys`.
    """
    key_class = _ml_dsa_44("sign ML-DSA-44")
    data = read_key_bytes(path)
    if key_file_is_insecure(path):
        raise errors.KeyMaterialError(
            "key.insecure_permissions",
            f"{path}: private key file is readable by group or others (chmod 600 it)",
            details={"path": str(path)},
        )
    private = load_private_pem(data, path)
    if not isinstance(private, key_class):
        raise errors.KeyMaterialError("key.unrecognized", f"{path}: not an ML-DSA-44 private key")
    return private


def check_distinct(keys: WitnessKeys, logs: Sequence[NoteVerifier]) -> None:
    """Refuse a witness key that is also a trusted log key (the two signatures would be
    confusable, and a log cannot witness itself).

    Raises:
        ``usage.invalid``: the witness's Ed25519 key is one of the log keys.
    """
    raw = keys.ed25519.public_key.raw
    for log in logs:
        if log.key.raw == raw:
            raise errors.UsageError(
                f"the witness key is the key of log {log.name!r}: a witness needs its own key"
            )


def check_origins(keys: WitnessKeys, logs: Sequence[NoteVerifier]) -> None:
    """With an ML-DSA-44 key, refuse at start a log whose origin is over 255 bytes, which
    ``subtree/v1`` cannot encode (tlog-cosignature ``opaque log_origin<1..2^8-1>``), rather than
    silently cosign it with Ed25519 only.

    Raises:
        ``usage.invalid``: such a log, with an ML-DSA-44 key.
    """
    if keys.ml_dsa_44 is None:
        return  # cosignature/v1 signs the checkpoint text, whatever its origin's length
    for log in logs:
        if len(log.name.encode("utf-8")) > 255:
            raise errors.UsageError(
                f"log origin {log.name[:40]!r}... is over 255 bytes, which an ML-DSA-44 "
                "cosignature (subtree/v1) cannot encode: drop --ml-dsa-key or that --log-vkey"
            )


def write_key_files(ed25519: Path | None, ml_dsa_44: Path | None) -> list[tuple[Algorithm, bytes]]:
    """Generate fresh keys into new PKCS#8 PEM files (0600, never overwriting); returns the
    algorithm and raw public key of each.

    Raises:
        ``io.exists``: a target file exists (nothing is written then).
        ``usage.invalid``: no target given.
        ``tlog.cosigner_unsupported``: ML-DSA-44 asked for where ``cryptography`` lacks it.
    """
    if ed25519 is None and ml_dsa_44 is None:
        raise errors.UsageError("give --key FILE, --ml-dsa-key FILE, or both")
    planned: list[tuple[Path, bytes, Algorithm, bytes]] = []
    if ed25519 is not None:
        ed_key = generate_keypair()
        planned.append((ed25519, private_key_pem(ed_key), ED25519, ed_key.public_key.raw))
    if ml_dsa_44 is not None:
        ml_key = _ml_dsa_44("make ML-DSA-44 keys").from_seed_bytes(os.urandom(_SEED_BYTES))
        pem = ml_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        planned.append((ml_dsa_44, pem, ML_DSA_44, ml_key.public_key().public_bytes_raw()))
    create_all([(path, pem, 0o600) for path, pem, _, _ in planned])  # io.exists before any write
    return [(algorithm, public) for _, _, algorithm, public in planned]


def _ml_dsa_44(what: str) -> Any:
    """``MLDSA44PrivateKey``.

    Raises:
        ``tlog.cosigner_unsupported``: this ``cryptography`` has no ML-DSA.
    """
    if not ml_dsa_44_available():  # pragma: no cover - cryptography releases before ML-DSA
        raise errors.ProofError(
            "tlog.cosigner_unsupported", f"this cryptography build cannot {what}"
        )
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey  # noqa: PLC0415 - lazy

    return MLDSA44PrivateKey
