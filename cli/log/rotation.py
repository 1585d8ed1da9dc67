"""``affidavit log rotate-key`` and ``affidavit log keys``: rotate the log's signing key without
breaking what it signed before (docs/adr/0011-log-key-rotation.md).

``rotate-key`` closes the current key's window at T (``--at``, default now to the second) and
opens the new key's there, half-open (``[.., T)`` then ``[T, ..)``: no gap, no overlap). The
statement is signed by the old key and countersigned by the new one; it hands over the current
tree, which every later head must extend. The state files move with it (docs/adr/0005) and the
new key's path is recorded, so ``log head`` signs with it from now on. T must be after the current
key's ``valid_from`` and every recorded head, and not in the future (``log.rotation_invalid``); a
head outside a key's window is ``log.key_outside_window``.

``keys`` prints each key as a trusted-key document with its window, what ``verify bundle
--trusted-keys`` reads (:mod:`affidavit.verify.crypto.windows`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
from affidavit.attest.errors import LogError
from affidavit.attest.keyring import load_signing_key
from affidavit.attest.log.state import state_path
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import emit, json_option
from affidavit.cli.log.basic import db_argument, log_key_option, sign_with
from affidavit.verify.crypto.windows import parse_rfc3339

__all__ = ["keys", "rotate_key"]


@click.command("rotate-key")
@db_argument
@click.option(
    "--new-key",
    "new_key_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="New key (PEM).",
)
@log_key_option
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
    document = {
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
    emit(
        as_json,
        document,
        f"rotated log {opened.log_id!r}: key {previous!r} valid until {entry.valid_from}, "
        f"key {entry.key_id!r} from {entry.valid_from} (tree size {entry.tree_size})",
    )


@click.command("keys")
@db_argument
@json_option
def keys(db: Path, as_json: bool) -> None:
    """Print the log's keys and their validity windows [valid_from, valid_until)."""
    with TransparencyLog.open(db) as opened:
        history = opened.key_history()
        log_id = opened.log_id
    emit(
        as_json,
        {"log_id": log_id, "keys": [entry.to_json() for entry in history]},
        *(
            f"{e.key_id}\t{e.public_key.b64}\t[{e.valid_from or '-inf'}, {e.valid_until or '+inf'})"
            for e in history
        ),
    )


def _parse_at(text: str) -> dt.datetime:
    moment = parse_rfc3339(text)
    if moment is None:
        raise LogError(
            "log.bad_timestamp",
            f"--at {text!r} is not an RFC 3339 date-time with an offset "
            "(e.g. 2026-01-01T00:00:00Z or 2026-01-01T01:00:00+01:00)",
        )
    return moment
