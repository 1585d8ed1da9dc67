"""``affidavit verify checkpoint`` and ``affidavit verify inclusion``: for users of any log.

Checkpoints are C2SP signed notes (docs/formats.md §6); inclusion proofs are RFC 9162 §2.1.3.
Hashes are accepted as 64 hex characters or as standard base64 of 32 bytes. Exit 0 verified, 1
not verified, 2 unreadable input or usage. ``--json`` prints the one result document (verdict,
steps and the subject's fields) whatever the verdict; the text is one line.
"""

from __future__ import annotations

from typing import Any

import click
from affidavit.cli._common import json_option, print_outcome, read_input
from affidavit.cli._trust import read_trust, trust_options
from affidavit.verify import errors
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.json.forms import is_hex64

__all__ = ["checkpoint", "inclusion", "parse_hash"]

MAX_CHECKPOINT_BYTES = 1 << 20


def parse_hash(text: str, what: str) -> bytes:
    """A 32-byte hash from 64 hex characters or strict base64.

    Raises:
        ``merkle.bad_hash_length``: it decodes, but not to 32 bytes.
        ``usage.invalid``: neither hex nor base64.
    """
    if is_hex64(text, any_case=True):
        return bytes.fromhex(text)
    try:
        raw = b64decode_strict(text)
    except (ValueError, UnicodeError):
        raise errors.UsageError(f"{what}: not 64 hex characters nor base64") from None
    if len(raw) != 32:
        raise errors.ProofError("merkle.bad_hash_length", f"{what}: {len(raw)} bytes, not 32")
    return raw


@click.command("checkpoint")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option("--origin", default=None, help="Require this origin line.")
@json_option
def checkpoint(source: str, origin: str | None, as_json: bool, **trust_options: Any) -> None:
    """Verify a C2SP tlog-checkpoint (signed note) against trusted verifier keys."""
    from affidavit.verify.crypto.checkpoint import check_checkpoint  # noqa: PLC0415 - lazy: keeps `affidavit` start fast

    trust = read_trust(**trust_options, needed_by="verify checkpoint")
    verifiers = trust.note_verifiers()
    note = read_input(source, max_bytes=MAX_CHECKPOINT_BYTES)
    result = check_checkpoint(note, verifiers, origin=origin, source=source)
    print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()}, brief=True)


@click.command("inclusion")
@click.option("--leaf-hash", required=True, help="Leaf hash (hex or base64), 32 bytes.")
@click.option("--index", required=True, type=click.IntRange(min=0), help="Leaf index.")
@click.option("--size", required=True, type=click.IntRange(min=0), help="Tree size.")
@click.option("--root", required=True, help="Expected root hash (hex or base64).")
@click.option("--proof", "proof", multiple=True, help="Proof hash, leaf to root (repeatable).")
@json_option
def inclusion(
    *, leaf_hash: str, index: int, size: int, root: str, proof: tuple[str, ...], as_json: bool
) -> None:
    """Verify an RFC 9162 inclusion proof of a leaf hash in a tree of a given size and root."""
    from affidavit.verify.crypto.merkle import check_inclusion  # noqa: PLC0415 - lazy

    leaf = parse_hash(leaf_hash, "--leaf-hash")
    expected_root = parse_hash(root, "--root")
    path = [parse_hash(item, f"--proof #{n + 1}") for n, item in enumerate(proof)]
    result = check_inclusion(leaf, index, size, path, expected_root)
    print_outcome(result, as_json=as_json, brief=True)
