"""``affidavit log ...``: the transparency log's verbs, each loaded only when used.

::

    affidavit log init DB --key KEYFILE --log-id ID
    affidavit log append DB|URL FILE... [--leaf-form raw|py-compact] [--api-key KEY]
    affidavit log head DB [--checkpoint [--origin O] [--witness URL#VKEY ...]] [--key KEYFILE]
    affidavit log vkey DB [--origin O]
    affidavit log consistency DB --from M [--to N]
    affidavit log tiles DB DIR
    affidavit log proof DB --index I [--inclusion [--size N]]
    affidavit log monitor URL --vkey VKEY --state FILE [--policy POLICY] [--entries]
    affidavit log rotate-key DB --new-key NEWKEY [--key OLDKEY] [--at RFC3339]
    affidavit log keys DB
"""

from __future__ import annotations

import click
from affidavit.cli._group import LazyGroup

__all__ = ["LOG_COMMANDS", "log"]

# verb -> (module, attribute). Keep it sorted.
LOG_COMMANDS: dict[str, tuple[str, str]] = {
    "append": ("affidavit.cli.log.basic", "append"),
    "consistency": ("affidavit.cli.log.basic", "consistency"),
    "head": ("affidavit.cli.log.basic", "head"),
    "init": ("affidavit.cli.log.basic", "init"),
    "keys": ("affidavit.cli.log.rotation", "keys"),
    "monitor": ("affidavit.cli.log.monitor", "monitor"),
    "proof": ("affidavit.cli.log.proof", "proof"),
    "prove": ("affidavit.cli.log.proof", "prove"),  # hidden: log proof --inclusion
    "rotate-key": ("affidavit.cli.log.rotation", "rotate_key"),
    "tiles": ("affidavit.cli.log.tiles", "tiles"),
    "vkey": ("affidavit.cli.log.basic", "vkey"),
}


@click.group("log", cls=LazyGroup, lazy=LOG_COMMANDS)
def log() -> None:
    """Append-only RFC 6962 transparency log: heads, C2SP tiles, checkpoints, proofs, monitor."""
