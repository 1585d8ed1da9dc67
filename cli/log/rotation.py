"""``affidavit log rotate-key`` and ``affidavit log keys``: rotate the log's signing key without
breaking what it signed before (docs/adr/0011-log-key-rotation.md).

::

    affidavit log rotate-key DB --new-key NEWKEY [--key OLDKEY] [--at RFC3339] [--json]
    affidavit log keys DB [--json]

``rotate-key`` closes the current key's window at T (``--at``, default now to the second: heads
are signed to the second) and opens the new key's at T: ``[.., T)`` then ``[T, ..)``, half-open,
so there is neither a gap nor an overlap and a head dated exactly T is the new key's. The
rotation is recorded in DB with a statement signed by the old key (``--key``, default the recorded
key path) and countersigned by the new one; it hands over the current tree, which every later
head must extend. The old key's state file moves to
that tree and the new key's state file (beside NEWKEY) starts from it (docs/adr/0005), and the
new key's path is recorded, so ``log head`` without ``--key`` signs with the new key from now on.

T is an RFC 3339 date-time with an offset (``Z`` or ``±hh:mm``), compared as a time: it must be
after the current key's ``valid_from``, after every head recorded so far (they stay inside the old
key's window), and not in the future. Heads and proofs issued before stay verifiable with the old
key; a head dated before T cannot be signed by the new key, nor one dated T or later by the old key
(``log.key_outside_window``).

``keys`` prints the history: each key as a trusted-key document with its window
(``{key_id, public_key_base64, algorithm, valid_from, valid_until, rotation}``), what ``verify
bundle --trusted-keys`` reads (:mod:`affidavit.verify.crypto.windows`).

Errors (exit 2): ``log.key_mismatch`` (``--key`` is not the current key), ``log.rotation_invalid``
(a reused key or key ID, T overlapping the current window or a signed head, T in the future),
``log.bad_timestamp`` (``--at`` malformed), ``log.no_signing_key`` (no ``--key`` and none
recorded), ``log.state_*``; ``log.integrity`` (exit 1): the tree contradicts a signed head.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
from affidavit.attest.errors import LogError
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.log.state import state_path
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import emit_json, json_option
from affidavit.cli.log.basic import sign_with
from affidavit.verify.crypto.windows import parse_rfc3339

__all__ = ["keys", "rotate_key"]

_key_path = click.Path(dir_okay=False, path_type=Path)


@click.command("rotate-key")
@click.argument("db", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--new-key", "new_key_file", required=True, type=_key_path, help="New key (PEM).")
@click.option("--key", "key_file", type=_key_path, help="Current key (default: recorded path).")
@click.option("--at", "at", help="Rotation time, RFC 3339 with an offset (default: now).")
@json_option
def rotate_key(
    *, db: Path, new_key_file: Path, key_file: Path | None, at: str | None, as_json: bool
) -> None:
    """Hand the log in DB over from its current key to NEWKEY at time T (no gap, no overlap)."""
    moment = _parse_at(at) if at is not None else None
    with TransparencyLog.open(db) as opened:
        previous = opened.key_id
        sign_with(opened, db, key_file)
        new_key = load_signing_key(new_key_file)
        new_path = new_key_file.resolve()
        entry = opened.rotate_key(
            new_key,
            moment,
            new_key_path=str(new_path),
            new_state_file=state_path(new_path, opened.log_id),
        )
        history = [key.to_json() for key in opened.key_history()]
    if as_json:
        emit_json(
            {
                "ok": True,
                "db": str(db),
                "log_id": opened.log_id,
                "previous_key_id": previous,
                "key_id": entry.key_id,
                "public_key_base64": entry.public_key.b64,
                "valid_from": entry.valid_from,
                "tree_size": entry.tree_size,
                "root_hash": entry.root_hash,
                "key_path": str(new_path),
                "keys": history,
            }
        )
    else:
        click.echo(
            f"rotated log {opened.log_id!r}: key {previous!r} valid until {entry.valid_from}, "
            f"key {entry.key_id!r} from {entry.valid_from} (tree size {entry.tree_size})"
        )


@click.command("keys")
@click.argument("db", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def keys(db: Path, as_json: bool) -> None:
    """Print the log's keys and their validity windows [valid_from, valid_until)."""
    with TransparencyLog.open(db) as opened:
        history = opened.key_history()
        log_id = opened.log_id
    if as_json:
        emit_json({"log_id": log_id, "keys": [entry.to_json() for entry in history]})
        return
    for entry in history:
        start, end = entry.valid_from or "-inf", entry.valid_until or "+inf"
        click.echo(f"{entry.key_id}\t{entry.public_key.b64}\t[{start}, {end})")


def _parse_at(text: str) -> dt.datetime:
    moment = parse_rfc3339(text)
    if moment is None:
        raise LogError(
            "log.bad_timestamp",
            f"--at {text!r} is not an RFC 3339 date-time with an offset "
            "(e.g. 2026-01-01T00:00:00Z or 2026-01-01T01:00:00+01:00)",
        )
    return moment
