"""C2SP tlog-proof: an offline proof that an entry is in a log whose checkpoint witnesses cosigned.

The text format (https://c2sp.org/tlog-proof, docs/formats.md §6 "Proofs") is read strictly by
:func:`parse_proof` and written by :func:`format_proof`: off the format or over a limit
(:data:`MAX_PROOF_BYTES`, :data:`MAX_EXTRA_BYTES` decoded, :data:`MAX_PROOF_HASHES`, an index
below 2^64) is ``tlog.proof_malformed``; a bad checkpoint note is ``checkpoint.malformed``.

Verification ("Verifying a tlog proof") is the :data:`STEPS` :func:`check_proof` reports
(docs/transparency.md "Verification steps"): the leaf hash, a policy log's signature, the policy
witnesses' cosignatures and quorum, the inclusion path (``tlog.entry_mismatch``; a wrong path
length or index keeps its ``merkle.*`` code). The extra data is returned, never trusted;
cosignature timestamps are verified, then not used.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any, Final

from affidavit.verify import errors
from affidavit.verify.crypto import merkle
from affidavit.verify.crypto.checkpoint import Checkpoint, parse_checkpoint_body, parse_note
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.results import Result, StepRun
from affidavit.verify.tlog.policy import (
    Policy,
    PolicyCheckpoint,
    display_name,
    require_quorum,
    verify_log_signature,
    verify_witnesses,
)

__all__ = [
    "HEADER",
    "MAX_EXTRA_BYTES",
    "MAX_PROOF_BYTES",
    "MAX_PROOF_HASHES",
    "STEPS",
    "TlogProof",
    "VerifiedProof",
    "check_proof",
    "format_proof",
    "parse_proof",
    "proof_leaf_hash",
    "verify_proof",
    "verify_proof_inclusion",
]

HEADER: Final = "c2sp.org/tlog-proof@v1"  # "The first line MUST be the string ..."
MAX_PROOF_BYTES: Final = 2 * 1024 * 1024  # a checkpoint note is at most 1 MiB
MAX_EXTRA_BYTES: Final = 64 * 1024
MAX_PROOF_HASHES: Final = 64
STEPS: Final = ("parse", "leaf_hash", "log_signature", "cosignatures", "quorum", "inclusion")
_INDEX: Final = re.compile(r"0|[1-9][0-9]{0,19}")  # "no leading zeroes (unless the index is 0)"


@dataclass(frozen=True, slots=True)
class TlogProof:
    """A parsed tlog-proof: the leaf index, the inclusion path, the checkpoint note verbatim and
    the optional extra data (opaque, unauthenticated)."""

    index: int
    path: tuple[bytes, ...]
    checkpoint: str
    extra: bytes | None = None

    def to_text(self) -> str:
        return format_proof(self)


@dataclass(frozen=True, slots=True)
class VerifiedProof:
    """A proof that verified under a policy: the leaf hash bound, the checkpoint that binds it."""

    proof: TlogProof
    leaf_hash: bytes
    verified: PolicyCheckpoint

    @property
    def checkpoint(self) -> Checkpoint:
        """The checkpoint body (origin, size, root) the policy vouches for."""
        return self.verified.checkpoint

    @property
    def extra(self) -> bytes | None:
        """The proof's extra data: carried along, NOT authenticated by anything verified here."""
        return self.proof.extra

    def to_json(self) -> dict[str, Any]:
        """What a ``--json`` report shows of it."""
        checkpoint = self.checkpoint
        return {
            "index": self.proof.index,
            "leaf_hash": self.leaf_hash.hex(),
            "origin": checkpoint.origin,
            "tree_size": checkpoint.tree_size,
            "root_hash": checkpoint.root_hash.hex(),
            "log_keys": [log.label for log in self.verified.logs],
            "witnesses": [display_name(name) for name in self.verified.witnesses],
            "quorum": display_name(self.verified.quorum),
            "ignored_signatures": self.verified.ignored_signatures,
            "extra_base64": None if self.extra is None else _b64(self.extra),
        }


def _malformed(message: str) -> errors.ProofError:
    return errors.ProofError("tlog.proof_malformed", message)


def parse_proof(data: bytes | str) -> TlogProof:
    """Parse a tlog-proof strictly (module docstring).

    Raises:
        ``tlog.proof_malformed``: not the format, or over a limit.
        ``checkpoint.malformed``: the part after the empty line is not a checkpoint note.
    """
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > MAX_PROOF_BYTES:
        raise _malformed(f"a tlog-proof is at most {MAX_PROOF_BYTES} bytes")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _malformed(f"a tlog-proof is UTF-8 text: {e.reason}") from None
    lines = _Lines(data)
    if lines.next("the header") != HEADER:
        raise _malformed(f"the first line must be {HEADER!r}")
    line = lines.next("the index line")
    extra = None
    if line.startswith("extra "):
        extra = _decode(line[len("extra ") :], "the extra data")
        if not extra or len(extra) > MAX_EXTRA_BYTES:
            raise _malformed(f"the extra data must be 1 to {MAX_EXTRA_BYTES} bytes")
        line = lines.next("the index line")
    if not line.startswith("index ") or not _INDEX.fullmatch(line[len("index ") :]):
        raise _malformed("expected 'index <decimal without leading zeros>' after the header")
    index = int(line[len("index ") :])
    if index >= 1 << 64:
        raise _malformed("the index does not fit in 64 bits")
    path: list[bytes] = []
    while (line := lines.next("the empty line before the checkpoint")) != "":
        if len(path) == MAX_PROOF_HASHES:
            raise _malformed(f"more than {MAX_PROOF_HASHES} inclusion proof hashes")
        value = _decode(line, f"inclusion proof hash {len(path)}")
        if len(value) != merkle.HASH_BYTES:
            raise _malformed(f"inclusion proof hash {len(path)} is {len(value)} bytes, not 32")
        path.append(value)
    note = lines.rest()
    if not note:
        raise _malformed("no checkpoint after the empty line")
    parse_checkpoint_body(parse_note(note).text)  # checkpoint.malformed
    return TlogProof(index, tuple(path), note, extra)


class _Lines:
    """Newline-terminated lines of a text, then the rest verbatim."""

    def __init__(self, text: str) -> None:
        self.text, self.position = text, 0

    def next(self, what: str) -> str:
        end = self.text.find("\n", self.position)
        if end < 0:
            raise _malformed(f"the proof ends before {what}")
        line, self.position = self.text[self.position : end], end + 1
        return line

    def rest(self) -> str:
        return self.text[self.position :]


def _decode(text: str, what: str) -> bytes:
    try:
        return b64decode_strict(text)
    except (ValueError, UnicodeError) as e:
        raise _malformed(f"{what} is not standard base64: {e}") from None


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def format_proof(proof: TlogProof) -> str:
    """The text of ``proof`` (module docstring); :func:`parse_proof` reads it back unchanged.

    Raises:
        ``usage.invalid``: an index, path, extra data or checkpoint the format cannot carry.
    """
    if not 0 <= proof.index < 1 << 64:
        raise errors.UsageError("a tlog-proof index is from 0 to 2^64 - 1")
    if len(proof.path) > MAX_PROOF_HASHES or any(len(h) != 32 for h in proof.path):
        raise errors.UsageError(f"a tlog-proof path is at most {MAX_PROOF_HASHES} 32-byte hashes")
    if proof.extra is not None and not 0 < len(proof.extra) <= MAX_EXTRA_BYTES:
        raise errors.UsageError(f"tlog-proof extra data is 1 to {MAX_EXTRA_BYTES} bytes")
    try:
        parse_checkpoint_body(parse_note(proof.checkpoint).text)
    except errors.SignatureError as e:
        raise errors.UsageError(f"the checkpoint is not a checkpoint note: {e.message}") from None
    lines = [HEADER]
    if proof.extra is not None:
        lines.append(f"extra {_b64(proof.extra)}")
    lines.append(f"index {proof.index}")
    lines.extend(_b64(value) for value in proof.path)
    return "\n".join(lines) + "\n\n" + proof.checkpoint


def proof_leaf_hash(*, entry: bytes | None = None, leaf_hash: bytes | None = None) -> bytes:
    """Step 1: the leaf hash, ``SHA-256(0x00 || entry)`` (RFC 6962 §2.1), or the one given.

    Raises:
        ``usage.invalid``: neither or both given.
        ``merkle.bad_hash_length``: ``leaf_hash`` is not 32 bytes.
    """
    if entry is not None and leaf_hash is None:
        return merkle.leaf_hash(entry)
    if entry is not None or leaf_hash is None:
        raise errors.UsageError("give exactly one of the entry and its leaf hash")
    if len(leaf_hash) != merkle.HASH_BYTES:
        raise errors.ProofError(
            "merkle.bad_hash_length", f"the leaf hash is {len(leaf_hash)} bytes, not 32"
        )
    return leaf_hash


def verify_proof_inclusion(proof: TlogProof, leaf_hash: bytes, checkpoint: Checkpoint) -> None:
    """Step 4: the inclusion path binds ``leaf_hash`` at ``proof.index`` to the checkpoint's root.

    Raises:
        ``tlog.entry_mismatch``: the path leads to another root.
        ``merkle.index_out_of_range``: the index is not below the checkpoint's tree size.
        ``merkle.bad_proof_length``: the path has the wrong length for the index and size.
    """
    try:
        merkle.verify_inclusion(
            leaf_hash, proof.index, checkpoint.tree_size, proof.path, checkpoint.root_hash
        )
    except errors.ProofError as e:
        if e.code != "merkle.root_mismatch":
            raise
        raise errors.ProofError(
            "tlog.entry_mismatch",
            f"the inclusion proof does not bind this leaf at index {proof.index} to the root of "
            f"{checkpoint.origin} at size {checkpoint.tree_size}",
            details={**e.details, "index": proof.index, "leaf_hash": leaf_hash.hex()},
        ) from None


def check_proof(
    proof: TlogProof | bytes | str,
    policy: Policy,
    *,
    entry: bytes | None = None,
    leaf_hash: bytes | None = None,
    source: str | None = None,
) -> Result:
    """The ``tlog_proof`` result of every step, with the proof's fields when it verified; a proof
    that does not verify is reported, not raised.

    Raises:
        ``usage.invalid``: neither or both of ``entry`` and ``leaf_hash``.
    """
    run, outcome = _check(proof, policy, entry, leaf_hash)
    fields = outcome.to_json() if isinstance(outcome, VerifiedProof) else {}
    return run.result("tlog_proof", source, **fields)


def _check(
    proof: TlogProof | bytes | str, policy: Policy, entry: bytes | None, leaf_hash: bytes | None
) -> tuple[StepRun, VerifiedProof | errors.AffidavitError]:
    if (entry is None) == (leaf_hash is None):
        raise errors.UsageError("give exactly one of the entry and its leaf hash")
    run = StepRun(STEPS)
    try:
        parsed = proof if isinstance(proof, TlogProof) else parse_proof(proof)
        run.passed("parse", index=parsed.index, proof_hashes=len(parsed.path))
        leaf = proof_leaf_hash(entry=entry, leaf_hash=leaf_hash)
        given = "entry" if entry is not None else "given"
        run.passed("leaf_hash", leaf_hash=leaf.hex(), source=given)
        checkpoint, labels = verify_log_signature(parsed.checkpoint, policy)
        run.passed("log_signature", origin=checkpoint.origin, log_keys=list(labels))
        cosignatures = verify_witnesses(parsed.checkpoint, policy)
        names = [c.witness.name for c in cosignatures]
        run.passed("cosignatures", witnesses=[display_name(n) for n in names])
        require_quorum(policy, names)
        run.passed("quorum", quorum=display_name(policy.quorum))
        verify_proof_inclusion(parsed, leaf, checkpoint)
        run.passed("inclusion", index=parsed.index, tree_size=checkpoint.tree_size)
    except errors.AffidavitError as e:
        run.fail(e)  # the step in progress; the later ones are not checked
        return run, e
    verified = PolicyCheckpoint.assemble(
        parsed.checkpoint, policy, checkpoint, labels, cosignatures
    )
    return run, VerifiedProof(parsed, leaf, verified)


def verify_proof(
    proof: TlogProof | bytes | str,
    policy: Policy,
    *,
    entry: bytes | None = None,
    leaf_hash: bytes | None = None,
) -> VerifiedProof:
    """Verify a tlog-proof for ``entry`` (or its ``leaf_hash``) under ``policy``.

    Raises:
        ``tlog.proof_malformed``, ``checkpoint.*``, ``tlog.log_untrusted``, ``tlog.cosignature_*``,
        ``tlog.quorum_not_met``, ``tlog.entry_mismatch``, ``merkle.*``: the first failing step's
            error (module docstring).
        ``usage.invalid``: neither or both of ``entry`` and ``leaf_hash``.
    """
    outcome = _check(proof, policy, entry, leaf_hash)[1]
    if isinstance(outcome, errors.AffidavitError):
        raise outcome
    return outcome
