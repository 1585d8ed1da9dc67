"""``affidavit log monitor``: one round of a monitor of a tiled log
(:mod:`affidavit.verify.tlog.monitor` has the checks; docs/transparency.md, "Monitoring").
"""

from __future__ import annotations

from pathlib import Path

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.host import read_capped
from affidavit.cli._common import json_option, print_outcome
from affidavit.cli.verify.bundle import read_policy
from affidavit.registry.clients.tiles import TileReader
from affidavit.verify import errors
from affidavit.verify.results import Result
from affidavit.verify.tlog.monitor import (
    MAX_STATE_BYTES,
    monitor_round,
    normalized_vkey,
    parse_state,
    state_json,
)

__all__ = ["monitor"]


@click.command("monitor")
@click.argument("url")
@click.option(
    "--vkey",
    required=True,
    help="The log's verifier key (as log vkey prints it); after a rotation, the old or the new.",
)
@click.option(
    "--state",
    "state_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The tree trusted last; created on the first round.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A C2SP tlog-policy: the checkpoint must also meet its witness quorum.",
)
@click.option("--entries", is_flag=True, help="Also read every new entry and check its hash.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True)
@json_option
def monitor(
    *,
    url: str,
    vkey: str,
    state_file: Path,
    policy_file: Path | None,
    entries: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """Check a tiled log's new checkpoint against the tree trusted last (C2SP tlog-tiles)."""
    if not url.startswith(("https://", "http://")):
        raise errors.UsageError(f"{url}: the log's URL prefix must be http:// or https://")
    vkey = normalized_vkey(vkey)
    previous = None
    if state_file.exists():
        data = read_capped(state_file, MAX_STATE_BYTES)
        if len(data) > MAX_STATE_BYTES:
            raise errors.ProofError("tlog.monitor_state_invalid", f"{state_file}: over 1 MiB")
        previous = parse_state(data, vkey=vkey)
    policy = None if policy_file is None else read_policy(str(policy_file))[0]
    with TileReader(url, timeout=timeout) as reader:
        try:
            note = reader.checkpoint()
        except errors.AffidavitError as e:  # the log cannot be read: the round cannot start
            result, state = Result.unreadable_input("monitor", url, e), None
        else:
            result, state = monitor_round(
                note, vkey, reader.tile, previous, policy=policy, entries=entries, source=url
            )
    if state is not None:  # kept only after every check passed
        atomic_write(state_file, state_json(state))
    print_outcome(result, as_json=as_json, brief=True)
