"""``affidavit adapter ...``: author, lint, publish and pin AdapterContracts (seed 003).

Verbs load lazily, like the root group. Authoring verbs live in ``affidavit.cli.adapter.authoring``;
publication and pinning verbs in ``affidavit.cli.adapter.publish``.
"""

from __future__ import annotations

import click
from affidavit.cli._group import LazyGroup

__all__ = ["ADAPTER_COMMANDS", "adapter"]

# verb -> (module, attribute). Kept sorted within each area.
ADAPTER_COMMANDS: dict[str, tuple[str, str]] = {
    # Authoring (seed 003 "Scaffold", "Lint", "bump", "diff").
    "bump": ("affidavit.cli.adapter.authoring", "bump"),
    "diff": ("affidavit.cli.adapter.authoring", "diff"),
    "lint": ("affidavit.cli.adapter.authoring", "lint"),
    "scaffold": ("affidavit.cli.adapter.authoring", "scaffold"),
    # Publication and pinning (seed 003 "Manifest and pinning"): owned by the publication area;
    # `manifest` (build|verify) and `pins` (check) are click groups there.
    "attest": ("affidavit.cli.adapter.publish", "attest"),
    "lifecycle": ("affidavit.cli.adapter.publish", "lifecycle"),
    "list": ("affidavit.cli.adapter.publish", "list_command"),
    "manifest": ("affidavit.cli.adapter.publish", "manifest"),
    "pin": ("affidavit.cli.adapter.pins", "pin"),
    "pins": ("affidavit.cli.adapter.pins", "pins"),
}


@click.group("adapter", cls=LazyGroup, lazy=ADAPTER_COMMANDS)
def adapter() -> None:
    """Author, lint, publish and pin AdapterContracts (JSON output by default)."""
