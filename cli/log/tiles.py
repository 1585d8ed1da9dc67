"""``affidavit log tiles DB DIR``: publish the log as C2SP tlog-tiles static files.

Writes into DIR what its previous checkpoint did not cover, then ``DIR/checkpoint`` last
(:func:`affidavit.attest.log.tiles.write_tiles` has the atomic and never-overwrite rules). The
checkpoint is the latest recorded one when it covers the current size under the origin asked for
(witness cosignatures kept), else one signed here with ``log head --checkpoint``'s key rules.
"""

from __future__ import annotations

from pathlib import Path

import click
from affidavit.attest.log.tiles import TilesReport, write_tiles
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.cli._common import emit, json_option
from affidavit.cli.log.basic import db_argument, log_key_option, sign_with
from affidavit.verify.crypto.checkpoint import parse_checkpoint_body, parse_note

__all__ = ["current_checkpoint", "tiles"]


@click.command("tiles")
@db_argument
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@log_key_option
@click.option("--origin", help="Checkpoint origin line and key name (default: the log ID).")
@json_option
def tiles(
    db: Path, directory: Path, key_file: Path | None, origin: str | None, as_json: bool
) -> None:
    """Write the log in DB as C2SP tlog-tiles into DIR (tiles, entry bundles, checkpoint)."""
    with TransparencyLog.open(db) as opened:
        note, signed = current_checkpoint(opened, db, key_file, origin)
        report = write_tiles(opened, directory, note)
    emit(
        as_json,
        {"ok": True, "checkpoint_signed": signed, **report.to_json()},
        _summary(report, signed),
    )


def current_checkpoint(
    log: TransparencyLog, db: Path, key_file: Path | None, origin: str | None
) -> tuple[str, bool]:
    """The checkpoint of the log's current size under ``origin`` (default: the log ID), and
    whether it was signed here (module docstring).

    Raises:
        ``log.no_signing_key``: a new checkpoint is needed and no key path is known.
        ``log.key_mismatch``, ``log.state_*``: as ``log head``.
    """
    name = origin if origin is not None else log.log_id
    latest = log.latest_checkpoint()
    if latest is not None and latest.tree_size == log.size:
        recorded = parse_checkpoint_body(parse_note(latest.document).text)
        if recorded.origin == name:
            return latest.document, False
    sign_with(log, db, key_file)
    return log.checkpoint(name), True


def _summary(report: TilesReport, signed: bool) -> str:
    kept = report.tiles_kept + report.bundles_kept
    return (
        f"size {report.tree_size} (from {report.previous_size}): "
        f"{report.tiles_written} tiles, {report.bundles_written} entry bundles written"
        + (f", {kept} already present" if kept else "")
        + f", {report.bundles_skipped} bundles skipped (a leaf without data or over 65,535 bytes)"
        + f"; checkpoint {'signed' if signed else 'recorded'}"
        + ("" if report.checkpoint_written else ", unchanged")
        + f" in {report.directory}"
    )
