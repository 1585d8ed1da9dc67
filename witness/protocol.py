"""C2SP tlog-witness ``add-checkpoint``: parsing the request and deciding it (pure, no I/O).

A request is judged in the order of docs/transparency.md, "POST /add-checkpoint": 400, 404 and
403 need no state (:func:`authenticate`); 409 and 422 are decided inside the state's write
transaction (:func:`check_against`), so check and update are one atomic step (tlog-witness).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    note_signature_line,
    parse_checkpoint_body,
    parse_note,
    verify_note,
)
from affidavit.verify.crypto.merkle import EMPTY_ROOT, verify_consistency

__all__ = [
    "MAX_PROOF_LINES",
    "SIZE_CONTENT_TYPE",
    "Authenticated",
    "Refusal",
    "Stored",
    "SubmittedCheckpoint",
    "authenticate",
    "check_against",
    "origin_hash",
    "parse_request",
    "trusted_by_origin",
]

MAX_PROOF_LINES: Final = 63  # "The client MUST NOT send more than 63 consistency proof lines."
SIZE_CONTENT_TYPE: Final = "text/x.tlog.size"  # the 409 answer's Content-Type
_OLD_LINE: Final = re.compile(r"old (0|[1-9][0-9]{0,19})")
# Sizes are u64 on the wire but stored as SQLite INTEGER (int64, as Go's tlog.ParseTree reads them)
_MAX_SIZE: Final = (1 << 63) - 1


class Refusal(Exception):
    """An add-checkpoint request the witness does not cosign: the HTTP status and why, the
    stored size a 409 answers with, and whether the log's signature verified (evidence worth
    logging)."""

    def __init__(
        self, status: int, reason: str, *, conflict_size: int | None = None, signed: bool = False
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.conflict_size = conflict_size
        self.signed = signed


@dataclass(frozen=True, slots=True)
class SubmittedCheckpoint:
    """A well-formed add-checkpoint body: old size, proof hashes, the note (not yet trusted)."""

    old_size: int
    proof: tuple[bytes, ...]
    note: str


@dataclass(frozen=True, slots=True)
class Authenticated:
    """A submission whose checkpoint a trusted log key signed, with the verified signature
    lines of the trusted keys (other lines dropped)."""

    submission: SubmittedCheckpoint
    checkpoint: Checkpoint
    text: str  # the checkpoint's note text (every line newline-terminated)
    log_signatures: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Stored:
    """The latest checkpoint this witness cosigned for one origin."""

    tree_size: int
    root_hash: bytes


def origin_hash(origin: str) -> str:
    """Lowercase hex SHA-256 of the origin: the monitoring path ``/<origin hash>/checkpoint``."""
    return hashlib.sha256(origin.encode("utf-8")).hexdigest()


def trusted_by_origin(verifiers: Sequence[NoteVerifier]) -> dict[str, tuple[NoteVerifier, ...]]:
    """Group log verifier keys by key name, which is the origin they sign (tlog-checkpoint)."""
    grouped: dict[str, list[NoteVerifier]] = {}
    for verifier in verifiers:
        grouped.setdefault(verifier.name, []).append(verifier)
    return {origin: tuple(keys) for origin, keys in grouped.items()}


def parse_request(body: bytes) -> SubmittedCheckpoint:
    """Parse an add-checkpoint body strictly (tlog-witness, "add-checkpoint").

    Raises:
        Refusal: 400, the body is malformed.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(400, "the body is not UTF-8") from None
    head, separator, note = text.partition("\n\n")  # the first empty line ends the proof
    if not separator:
        raise Refusal(400, "the body has no empty line between the proof and the checkpoint")
    old_line, *proof_lines = head.split("\n")
    matched = _OLD_LINE.fullmatch(old_line)
    if matched is None:
        raise Refusal(400, "the first line must be 'old <size>' (decimal, no leading zeros)")
    old_size = int(matched.group(1))
    if old_size > _MAX_SIZE:
        raise Refusal(400, f"the old size {old_size} is above 2^63 - 1")
    if len(proof_lines) > MAX_PROOF_LINES:
        raise Refusal(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
    proof = tuple(_proof_hash(line, n) for n, line in enumerate(proof_lines, 1))
    if not note or not note.endswith("\n"):
        raise Refusal(400, "the checkpoint must follow the empty line and end in a newline")
    return SubmittedCheckpoint(old_size, proof, note)


def _proof_hash(line: str, number: int) -> bytes:
    try:
        value = base64.b64decode(line.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise Refusal(400, f"consistency proof line {number} is not base64") from None
    if len(value) != 32 or base64.b64encode(value).decode("ascii") != line:
        raise Refusal(400, f"consistency proof line {number} is not a canonical 32-byte hash")
    return value


def authenticate(
    submission: SubmittedCheckpoint, trusted: Mapping[str, Sequence[NoteVerifier]]
) -> Authenticated:
    """The checks that need no state. The origin picks the keys; nothing else of the text is
    trusted until a trusted signature verified.

    Raises:
        Refusal: 400, 404 or 403 (docs/transparency.md, "POST /add-checkpoint").
    """
    try:
        parsed = parse_note(submission.note)  # the one scan of the note (signed-note)
        checkpoint = parse_checkpoint_body(parsed.text)
    except errors.SignatureError as e:
        raise Refusal(400, f"the checkpoint is malformed: {e.message}") from None
    if checkpoint.tree_size > _MAX_SIZE:
        raise Refusal(400, f"the checkpoint size {checkpoint.tree_size} is above 2^63 - 1")
    if submission.old_size > checkpoint.tree_size:
        raise Refusal(
            400,
            f"the old size {submission.old_size} is above the checkpoint size "
            f"{checkpoint.tree_size}",
        )
    keys = trusted.get(checkpoint.origin)
    if not keys:
        raise Refusal(404, f"unknown log origin {checkpoint.origin!r}")
    try:
        verified = verify_note(parsed, keys)
    except errors.SignatureError as e:
        # checkpoint.no_trusted_signature, checkpoint.signature_bad, or a trusted key signing twice
        raise Refusal(403, f"the checkpoint is not signed by the log: {e.message}") from None
    labels = set(verified.verified_by)
    log_lines = tuple(
        note_signature_line(s.name, s.key_id, s.signature)
        for s in dict.fromkeys(parsed.signatures)  # a repeated line is kept once
        if f"{s.name}+{s.key_id.hex()}" in labels
    )
    return Authenticated(submission, checkpoint, parsed.text, log_lines)


def check_against(request: Authenticated, stored: Stored | None) -> None:
    """The stateful checks against the latest cosigned checkpoint of the origin (None: never),
    inside the write transaction that then records ``request``.

    Raises:
        Refusal: 409 (``conflict_size`` set) or 422, both with ``signed`` true.
    """
    old, proof = request.submission.old_size, request.submission.proof
    checkpoint = request.checkpoint
    stored_size = stored.tree_size if stored is not None else 0
    if old != stored_size:
        raise Refusal(
            409,
            f"the old size {old} is not the latest cosigned size {stored_size}",
            conflict_size=stored_size,
            signed=True,
        )
    if checkpoint.tree_size == 0 and checkpoint.root_hash != EMPTY_ROOT:
        raise Refusal(422, "a checkpoint of size 0 must have the empty tree's root", signed=True)
    if old == 0:
        if proof:
            raise Refusal(422, "a consistency proof from size 0 must be empty", signed=True)
        return
    assert stored is not None  # old == stored size > 0
    if old == checkpoint.tree_size and checkpoint.root_hash != stored.root_hash:
        raise Refusal(422, f"size {old} was cosigned with another root hash (a fork)", signed=True)
    try:  # RFC 6962 §2.1.2 (RFC 9162 §2.1.4.2); equal sizes need an empty proof
        verify_consistency(old, checkpoint.tree_size, proof, stored.root_hash, checkpoint.root_hash)
    except errors.ProofError as e:
        raise Refusal(
            422, f"the consistency proof from size {old} does not verify: {e.message}", signed=True
        ) from None
