"""TEST-ONLY keys and signers for the tlog-policy, tlog-proof and cosignature tests and vectors.

Every key is derived from a public label: never trust one. ML-DSA-44 signatures are randomized
(FIPS 204 hedged signing), so a golden file can only stay byte-identical by reusing a signature
it already holds: :class:`SignatureReuse` finds one that still verifies.
"""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from affidavit.attest.keyring import SigningKey, derive_test_key
from affidavit.attest.log.proofs import attach_proof
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stamp import StampItem, stamp_bundles
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
    verifier_key_string,
)
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.tlog.cosignature import (
    Cosigner,
    cosignature_line,
    cosigner_vkey,
    ed25519_cosigned_message,
    ml_dsa_44_cosigned_message,
    parse_cosigner_vkey,
)
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey, MLDSA44PublicKey

from tests.verify.bundles import test_bundle_support as support

ORIGIN = "vectors.affidavit.test/tlog"
LOG = derive_test_key("TEST-ONLY affidavit tlog-proof vectors: log key")
OTHER_LOG = derive_test_key("TEST-ONLY affidavit tlog-proof vectors: other log key")
ED_NAME = "witness-ed25519.affidavit.test"
ED_KEY = derive_test_key("TEST-ONLY affidavit tlog-proof vectors: Ed25519 witness")
PQ_NAME = "witness-mldsa44.affidavit.test"
PQ_LABEL = "TEST-ONLY affidavit tlog-proof vectors: ML-DSA-44 witness"
UNKNOWN_NAME = "witness-unknown.affidavit.test"
UNKNOWN_KEY = derive_test_key("TEST-ONLY affidavit tlog-proof vectors: unknown witness")
TIMESTAMP = 1767225600  # 2026-01-01T00:00:00Z


def pq_key(label: str = PQ_LABEL) -> MLDSA44PrivateKey:
    """A TEST-ONLY ML-DSA-44 key from the 32-byte seed SHA-256(label)."""
    return MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(label.encode()).digest())


def log_vkey(key: SigningKey = LOG, name: str = ORIGIN) -> str:
    """The log's note verifier key (type 0x01)."""
    return verifier_key_string(name, key.public_key)


def ed_cosigner(key: SigningKey = ED_KEY, name: str = ED_NAME) -> Cosigner:
    """An Ed25519 cosigner (type 0x04)."""
    return parse_cosigner_vkey(cosigner_vkey(name, "ed25519", key.public_key.raw))


def pq_cosigner(key: MLDSA44PrivateKey | None = None, name: str = PQ_NAME) -> Cosigner:
    """An ML-DSA-44 cosigner (type 0x06)."""
    public = (key or pq_key()).public_key().public_bytes_raw()
    return parse_cosigner_vkey(cosigner_vkey(name, "ml-dsa-44", public))


def vkey_of(cosigner: Cosigner) -> str:
    """The vkey string of ``cosigner``."""
    return cosigner_vkey(cosigner.name, cosigner.algorithm, cosigner.public_key)


def signed_checkpoint(
    size: int, root: bytes, *, key: SigningKey = LOG, origin: str = ORIGIN, name: str | None = None
) -> str:
    """A checkpoint note of ``origin`` signed by ``key`` under key name ``name`` (default:
    the origin)."""
    body = checkpoint_body(origin, size, root)
    signer = origin if name is None else name
    line = note_signature_line(
        signer, key_id_c2sp(signer, key.public_key.raw), key.sign(body.encode())
    )
    return format_note(body, [line])


def ed_cosignature(
    note: str,
    key: SigningKey = ED_KEY,
    name: str = ED_NAME,
    timestamp: int = TIMESTAMP,
) -> str:
    """An Ed25519 ``cosignature/v1`` line over ``note``'s checkpoint."""
    text = parse_note(note).text
    signature = key.sign(ed25519_cosigned_message(text, timestamp))
    return cosignature_line(ed_cosigner(key, name), timestamp, signature)


class SignatureReuse:
    """ML-DSA-44 signatures already in files, reused when they verify (golden stability)."""

    def __init__(self, files: Iterable[Path] = ()) -> None:
        self.lines: list[str] = []
        for path in files:
            if path.is_file():
                self.lines.extend(
                    line + "\n"
                    for line in path.read_text(encoding="utf-8").splitlines()
                    if line.startswith("\u2014 ")
                )

    def find(self, cosigner: Cosigner, timestamp: int, message: bytes) -> str | None:
        public = MLDSA44PublicKey.from_public_bytes(cosigner.public_key)
        for line in self.lines:
            name, encoded = line[2:-1].split(" ")
            blob = base64.b64decode(encoded)
            if name != cosigner.name or blob[:4] != cosigner.key_id:
                continue
            if struct.unpack(">Q", blob[4:12])[0] != timestamp:
                continue
            try:
                public.verify(blob[12:], message)
            except InvalidSignature:
                continue
            return line
        return None


def pq_cosignature(
    note: str,
    key: MLDSA44PrivateKey | None = None,
    name: str = PQ_NAME,
    timestamp: int = TIMESTAMP,
    reuse: SignatureReuse | None = None,
) -> str:
    """An ML-DSA-44 ``subtree/v1`` checkpoint cosignature line over ``note``'s checkpoint."""
    private = key or pq_key()
    cosigner = pq_cosigner(private, name)
    checkpoint = parse_checkpoint_body(parse_note(note).text)
    message = ml_dsa_44_cosigned_message(name, timestamp, checkpoint)
    if reuse is not None:
        found = reuse.find(cosigner, timestamp, message)
        if found is not None:
            return found
    line = cosignature_line(cosigner, timestamp, private.sign(message))
    if reuse is not None:
        reuse.lines.append(line)  # one signature per message within a run, too
    return line


def with_lines(note: str, lines: Sequence[str]) -> str:
    """``note`` with signature ``lines`` appended."""
    return note + "".join(lines)


def policy_text(
    *,
    logs: Sequence[str] = (),
    witnesses: Sequence[tuple[str, str]] = (),
    groups: Sequence[str] = (),
    quorum: str = "none",
) -> str:
    """A policy file: ``log`` lines, ``witness`` lines, ``group`` lines (as given), the quorum."""
    lines = [f"log {vkey}" for vkey in logs]
    lines += [f"witness {name} {vkey}" for name, vkey in witnesses]
    lines += [f"group {group}" for group in groups]
    lines.append(f"quorum {quorum}")
    return "\n".join(lines) + "\n"


def witness_policy(log_line: str, *, quorum: str = "both") -> str:
    """A policy trusting ``log_line``'s vkey, the Ed25519 and the ML-DSA-44 witness; the group
    ``both`` needs the two, ``ed``/``pq`` name one each, ``none`` none."""
    return policy_text(
        logs=[log_line],
        witnesses=[("ed", vkey_of(ed_cosigner())), ("pq", vkey_of(pq_cosigner()))],
        groups=["both all ed pq"],
        quorum=quorum,
    )


def cosign_recorded(log: TransparencyLog, note: str, *, pq: bool = True) -> str:
    """Have the two witnesses cosign ``note`` and record the cosigned note in ``log``."""
    lines = [ed_cosignature(note)]
    if pq:
        lines.append(pq_cosignature(note))
    return log.add_cosignatures(note, lines)


def stamped_with_proofs(
    folder: Path, deals: Sequence[str] = ("accepted", "review"), *, pq: bool = True
) -> tuple[Path, list[dict[str, Any]], str]:
    """Stamp ``deals`` into a new log in ``folder`` (the bundle tests' TEST-ONLY log key), sign
    and cosign a checkpoint (the ML-DSA-44 witness only when ``pq``), attach each bundle's
    tlog-proof. Returns the database, the bundles and the witness policy (quorum ``both``)."""
    db = folder / "log.db"
    items = [StampItem(deal, support.contract(), support.OUTPUTS[deal]) for deal in deals]
    with TransparencyLog.create(db, support.LOG_KEY, support.LOG_ID) as log:
        bundles = stamp_bundles(log, items, support.POLICY, when=support.WHEN)
        cosign_recorded(log, log.checkpoint(), pq=pq)
        carried = [attach_proof(log, bundle) for bundle in bundles]
    vkey = verifier_key_string(support.LOG_ID, support.LOG_KEY.public_key)
    return db, carried, witness_policy(vkey)
