"""C2SP signed notes (https://c2sp.org/signed-note) and checkpoints
(https://c2sp.org/tlog-checkpoint), read and verified strictly (docs/formats.md §6): a signature
from an unknown (name, key ID) pair is ignored; one from a trusted key that does not verify rejects
the note; at least one trusted signature must verify, and an empty trust set is a usage error,
never a pass. Not on the ``verify bundle`` path, so it may use dataclasses (docs/adr/0003).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey, b64decode_strict, key_id_c2sp
from affidavit.verify.crypto.signature import verify_ed25519
from affidavit.verify.results import Result, StepRun

__all__ = [
    "MAX_NOTE_BYTES",
    "MAX_NOTE_SIGNATURES",
    "Checkpoint",
    "NoteSignature",
    "NoteVerifier",
    "SignedNote",
    "VerifiedCheckpoint",
    "VerifiedNote",
    "check_checkpoint",
    "check_key_name",
    "checkpoint_body",
    "format_note",
    "is_key_name",
    "note_signature_line",
    "parse_checkpoint_body",
    "parse_note",
    "parse_verifier_key",
    "verifier_key_string",
    "verify_checkpoint",
    "verify_note",
]

_EM_DASH = "\u2014 "
MAX_NOTE_SIGNATURES = 100  # signed-note: MUST accept at least 16
MAX_NOTE_BYTES = 1 << 20
# signed-note: "MUST NOT contain any ASCII control characters ... other than newline"; in UTF-8
# they are single bytes that no multi-byte sequence contains.
_CONTROL_BYTES = bytes(c for c in range(0x20) if c != 0x0A)


@dataclass(frozen=True, slots=True)
class NoteVerifier:
    """A trusted note key: its name, 4-byte key ID and Ed25519 public key."""

    name: str
    key_id: bytes
    key: Ed25519PublicKey


@dataclass(frozen=True, slots=True)
class NoteSignature:
    """One signature line: key name, 4-byte key ID, and the signature bytes after the ID."""

    name: str
    key_id: bytes
    signature: bytes


@dataclass(frozen=True, slots=True)
class SignedNote:
    """A parsed (unverified) note: its text (with the final newline) and its signature lines."""

    text: str
    signatures: tuple[NoteSignature, ...]


@dataclass(frozen=True, slots=True)
class VerifiedNote:
    """A note with at least one verified trusted signature."""

    text: str
    verified_by: tuple[str, ...]  # "name+hexkeyid" of each trusted key that verified
    ignored_signatures: int  # lines from keys outside the trust set


def is_key_name(name: str) -> bool:
    """Whether ``name`` can name a note key (signed-note): non-empty UTF-8 text (so no lone
    surrogate, PEP 383), no Unicode space, no '+'; the one rule for logs, keys and witnesses."""
    if not name or "+" in name or any(c.isspace() for c in name):
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_key_name(name: str) -> str:
    """``name`` when it can name a note key and so be a checkpoint's origin.

    Raises:
        ``usage.invalid``: empty, a Unicode space, or a '+' (signed-note, key names).
    """
    if not is_key_name(name):
        raise errors.UsageError(
            f"{name!r} cannot name a note key or be an origin: it must be non-empty, without "
            "spaces and without '+' (signed-note)"
        )
    return name


def parse_verifier_key(vkey: str) -> NoteVerifier:
    """Parse ``name+hexkeyid+base64(0x01 || key)`` and check the key ID rule.

    Raises:
        ``key.vkey_malformed``: wrong shape, unknown signature type, or key ID mismatch.
        ``key.*``: the embedded Ed25519 key is malformed or weak.
    """
    parts = vkey.split("+", 2)  # the base64 part may itself contain "+"
    if len(parts) != 3 or not is_key_name(parts[0]):
        raise errors.KeyMaterialError(
            "key.vkey_malformed", "verifier key must be name+hexkeyid+base64 with a valid name"
        )
    name, hex_id, encoded = parts
    if not re.fullmatch(r"[0-9a-fA-F]{8}", hex_id):
        raise errors.KeyMaterialError(
            "key.vkey_malformed", "verifier key ID must be 8 hex characters"
        )
    try:
        blob = b64decode_strict(encoded)
    except (ValueError, UnicodeError) as e:
        raise errors.KeyMaterialError("key.vkey_malformed", f"verifier key data: {e}") from None
    if len(blob) != 33 or blob[0] != 0x01:
        raise errors.KeyMaterialError(
            "key.vkey_malformed",
            "verifier key data must be 0x01 (Ed25519) followed by 32 key bytes",
        )
    key = Ed25519PublicKey(blob[1:])
    key_id = bytes.fromhex(hex_id)
    if key_id_c2sp(name, key.raw) != key_id:
        raise errors.KeyMaterialError(
            "key.vkey_malformed", "verifier key ID does not match SHA-256(name, 0x0A, 0x01, key)"
        )
    return NoteVerifier(name, key_id, key)


def verifier_key_string(name: str, key: Ed25519PublicKey) -> str:
    """The verifier key string of ``key`` under ``name`` (for ``--vkey``).

    Raises:
        ``usage.invalid``: ``name`` is not a key name (:func:`check_key_name`).
    """
    check_key_name(name)
    encoded = base64.b64encode(b"\x01" + key.raw).decode("ascii")
    return f"{name}+{key_id_c2sp(name, key.raw).hex()}+{encoded}"


def parse_note(note: str | bytes) -> SignedNote:
    """Split a signed note into text and signature lines (no signature is checked).

    Raises:
        ``checkpoint.malformed``: not valid UTF-8, control characters, no blank line, no signature,
            a malformed signature line, or too many signatures.
    """
    text = _decode_note(note)
    cut = text.rfind("\n\n")
    if cut < 0:
        raise errors.SignatureError(
            "checkpoint.malformed", "note has no blank line before its signatures"
        )
    body, block = text[: cut + 1], text[cut + 2 :]
    if not block.endswith("\n"):
        raise errors.SignatureError(
            "checkpoint.malformed", "note must end with a newline after the last signature line"
        )
    lines = block[:-1].split("\n")
    if len(lines) > MAX_NOTE_SIGNATURES:
        raise errors.SignatureError(
            "checkpoint.malformed", f"note has more than {MAX_NOTE_SIGNATURES} signatures"
        )
    return SignedNote(body, tuple(_parse_signature_line(line) for line in lines))


def _decode_note(note: str | bytes) -> str:
    if len(note) > MAX_NOTE_BYTES:
        raise errors.SignatureError("checkpoint.malformed", "note is larger than 1 MiB")
    try:
        if isinstance(note, bytes):
            data, note = note, note.decode("utf-8")
        else:
            data = note.encode("utf-8")  # a lone surrogate is not UTF-8 either
    except (UnicodeDecodeError, UnicodeEncodeError) as e:
        raise errors.SignatureError(
            "checkpoint.malformed", f"note is not valid UTF-8: {e.reason}"
        ) from None
    if len(data.translate(None, _CONTROL_BYTES)) != len(data):  # one pass in C (issue 38)
        raise errors.SignatureError(
            "checkpoint.malformed", "note contains a control character other than newline"
        )
    return note


def _parse_signature_line(line: str) -> NoteSignature:
    if not line.startswith(_EM_DASH):
        raise errors.SignatureError(
            "checkpoint.malformed", "signature line must start with an em dash and a space"
        )
    parts = line[len(_EM_DASH) :].split(" ")
    if len(parts) != 2 or not is_key_name(parts[0]):
        raise errors.SignatureError(
            "checkpoint.malformed", "signature line must be '— <name> <base64>'"
        )
    try:
        blob = b64decode_strict(parts[1])
    except (ValueError, UnicodeError) as e:
        raise errors.SignatureError(
            "checkpoint.malformed", f"signature line of {parts[0]!r}: {e}"
        ) from None
    if len(blob) < 5:
        raise errors.SignatureError(
            "checkpoint.malformed", f"signature line of {parts[0]!r} is too short"
        )
    return NoteSignature(parts[0], blob[:4], blob[4:])


def verify_note(note: str | bytes | SignedNote, verifiers: Iterable[NoteVerifier]) -> VerifiedNote:
    """Verify a note (or its :func:`parse_note` split) under ``verifiers`` (docs/formats.md §6).

    Raises:
        ``usage.invalid``: ``verifiers`` is empty.
        ``checkpoint.malformed``: see :func:`parse_note`; also a trusted key signing twice.
        ``checkpoint.signature_bad``: a signature from a trusted key does not verify.
        ``checkpoint.no_trusted_signature``: no signature line is from a trusted key.
    """
    trusted = {(v.name, v.key_id): v for v in verifiers}
    if not trusted:
        raise errors.UsageError(
            "no trusted verifier keys given; a note cannot be checked without one"
        )
    parsed = note if isinstance(note, SignedNote) else parse_note(note)
    message = parsed.text.encode("utf-8")
    verified: list[str] = []
    ignored = 0
    # The same line twice is the same signature, checked once (Go's note.Open drops the repeat);
    # strict base64 makes equal (name, key ID, signature) the same bytes.
    for line in dict.fromkeys(parsed.signatures):
        verifier = trusted.get((line.name, line.key_id))
        if verifier is None:  # unknown key: ignored, even if name or ID alone matches
            ignored += 1
            continue
        label = f"{verifier.name}+{verifier.key_id.hex()}"
        if label in verified:
            raise errors.SignatureError(
                "checkpoint.malformed", f"trusted key {label} signs the note twice"
            )
        try:
            verify_ed25519(verifier.key, message, line.signature)
        except errors.SignatureError as e:
            if not e.code.startswith("signature."):
                raise
            raise errors.SignatureError(
                "checkpoint.signature_bad",
                f"signature by trusted key {label} does not verify",
                details={"key": label},
            ) from None
        verified.append(label)
    if not verified:
        raise errors.SignatureError(
            "checkpoint.no_trusted_signature",
            "no signature on the note is from a trusted key",
            details={"signatures": [f"{s.name}+{s.key_id.hex()}" for s in parsed.signatures]},
        )
    return VerifiedNote(parsed.text, tuple(verified), ignored)


def note_signature_line(name: str, key_id: bytes, signature: bytes) -> str:
    """``— <name> base64(key_id || signature)`` plus newline, for a log that signs notes.

    Raises:
        ``usage.invalid``: invalid name or a key ID that is not 4 bytes.
    """
    check_key_name(name)
    if len(key_id) != 4:
        raise errors.UsageError("note signature needs a 4-byte key ID")
    return f"{_EM_DASH}{name} {base64.b64encode(key_id + signature).decode('ascii')}\n"


def format_note(text: str, signature_lines: Sequence[str]) -> str:
    """Assemble a signed note: ``text`` (ending in newline), a blank line, the signature lines.

    Raises:
        ``usage.invalid``: ``text`` does not end in a newline, or there is no signature line.
    """
    if not text.endswith("\n") or not signature_lines:
        raise errors.UsageError(
            "a note's text must end with a newline and have at least one signature"
        )
    return text + "\n" + "".join(signature_lines)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A checkpoint body: origin, tree size, 32-byte root hash, extension lines."""

    origin: str
    tree_size: int
    root_hash: bytes
    extensions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VerifiedCheckpoint:
    """A checkpoint whose note carried at least one verified trusted signature."""

    checkpoint: Checkpoint
    verified_by: tuple[str, ...]
    ignored_signatures: int


def checkpoint_body(
    origin: str, tree_size: int, root_hash: bytes, extensions: Sequence[str] = ()
) -> str:
    """The note text of a checkpoint (each line ends in a newline).

    Raises:
        ``usage.invalid``: empty or multi-line origin/extension, negative size, root not 32 bytes.
    """
    lines = [origin, *extensions]
    if any(not line or "\n" in line for line in lines) or tree_size < 0 or len(root_hash) != 32:
        raise errors.UsageError("checkpoint needs a one-line origin, size >= 0 and a 32-byte root")
    encoded_root = base64.b64encode(root_hash).decode("ascii")
    return "".join(f"{line}\n" for line in [origin, str(tree_size), encoded_root, *extensions])


def parse_checkpoint_body(text: str) -> Checkpoint:
    """Parse checkpoint note text (tlog-checkpoint "Note text").

    Raises:
        ``checkpoint.malformed``: fewer than three lines, an empty line, a bad size or root.
    """
    if not text.endswith("\n"):
        raise errors.SignatureError(
            "checkpoint.malformed", "checkpoint text must end with a newline"
        )
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise errors.SignatureError(
            "checkpoint.malformed", "checkpoint needs origin, size and root lines, none empty"
        )
    origin, size_text, root_text, *extensions = lines
    if not re.fullmatch(r"0|[1-9][0-9]{0,19}", size_text):
        raise errors.SignatureError(
            "checkpoint.malformed", "checkpoint tree size must be decimal without leading zeros"
        )
    tree_size = int(size_text)
    if tree_size >= 1 << 64:
        raise errors.SignatureError(
            "checkpoint.malformed", "checkpoint tree size does not fit in 64 bits"
        )
    try:
        root_hash = b64decode_strict(root_text)
    except (ValueError, UnicodeError) as e:
        raise errors.SignatureError("checkpoint.malformed", f"checkpoint root hash: {e}") from None
    if len(root_hash) != 32:
        raise errors.SignatureError(
            "checkpoint.malformed", "checkpoint root hash must be 32 bytes (SHA-256)"
        )
    return Checkpoint(origin, tree_size, root_hash, tuple(extensions))


def verify_checkpoint(
    note: str | bytes, verifiers: Iterable[NoteVerifier], *, origin: str | None = None
) -> VerifiedCheckpoint:
    """Verify a checkpoint note's signatures, then (only then) parse its body; maybe pin its origin.

    Raises:
        everything :func:`verify_note` raises, and
        ``checkpoint.malformed``: the body is not a checkpoint.
        ``checkpoint.origin_mismatch``: ``origin`` is given and differs from the origin line.
    """
    return _checkpoint_of(verify_note(note, verifiers), origin)


def _checkpoint_of(verified: VerifiedNote, origin: str | None) -> VerifiedCheckpoint:
    """The body of a verified note, its origin pinned."""
    checkpoint = parse_checkpoint_body(verified.text)
    if origin is not None and checkpoint.origin != origin:
        raise errors.SignatureError(
            "checkpoint.origin_mismatch",
            f"checkpoint origin {checkpoint.origin!r} is not {origin!r}",
            details={"expected": origin, "actual": checkpoint.origin},
        )
    return VerifiedCheckpoint(checkpoint, verified.verified_by, verified.ignored_signatures)


def check_checkpoint(
    note: str | bytes,
    verifiers: Iterable[NoteVerifier],
    *,
    origin: str | None = None,
    source: str | None = None,
) -> Result:
    """:func:`verify_checkpoint` as a ``checkpoint`` result of steps ``note``, ``signature`` and
    ``checkpoint``, with the checkpoint's fields when it verified; failures are reported.

    Raises:
        ``usage.invalid``: ``verifiers`` is empty.
    """
    trusted = tuple(verifiers)
    if not trusted:
        raise errors.UsageError(
            "no trusted verifier keys given; a note cannot be checked without one"
        )
    run = StepRun(("note", "signature", "checkpoint"))
    try:
        run.passed("note", signatures=len(parse_note(note).signatures))
        signed = verify_note(note, trusted)
        run.passed("signature", verified_by=list(signed.verified_by))
        verified = _checkpoint_of(signed, origin)
        run.passed("checkpoint")
    except errors.AffidavitError as e:
        run.fail(e)
        return run.result("checkpoint", source)
    body = verified.checkpoint
    return run.result(
        "checkpoint",
        source,
        origin=body.origin,
        tree_size=body.tree_size,
        root_hash=body.root_hash.hex(),
        root_hash_base64=base64.b64encode(body.root_hash).decode("ascii"),
        extensions=list(body.extensions),
        verified_by=list(verified.verified_by),
        ignored_signatures=verified.ignored_signatures,
    )
