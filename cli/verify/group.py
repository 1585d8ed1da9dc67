"""``affidavit verify``: the offline verifier's commands, each loaded only when used.

Exit codes: 0 verified, 1 not verified, 2 unreadable input or usage.
"""

from __future__ import annotations

import click
from affidavit.cli._group import LazyGroup

__all__ = ["VERIFY_SUBCOMMANDS", "verify"]

# subcommand -> (module, attribute). Each area adds its own line; keep it sorted.
VERIFY_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    # --- anchor receipts and RFC 3161 tokens (docs/adr/0010-rfc3161-tokens.md)
    "anchor": ("affidavit.cli.verify.anchor", "anchor"),
    # --- owned by the bundle/attestation area
    "attestation": ("affidavit.cli.verify.bundle", "attestation"),
    "bundle": ("affidavit.cli.verify.bundle", "bundle"),
    # --- crypto primitives
    "checkpoint": ("affidavit.cli.verify.primitives", "checkpoint"),
    "inclusion": ("affidavit.cli.verify.primitives", "inclusion"),
    # --- DSSE envelopes and in-toto Statements (ours and the ecosystem's)
    "dsse": ("affidavit.cli.verify.dsse", "dsse"),
    # --- transformation receipts (seed 004): one receipt, or a folder of them
    "receipt": ("affidavit.cli.verify.receipt", "receipt"),
    # --- SCITT Transparent Statements and their COSE Receipts (issue 25)
    "scitt": ("affidavit.cli.verify.scitt", "scitt"),
    # --- C2SP transparency-log proofs under a tlog-policy
    "tlog-proof": ("affidavit.cli.verify.tlog", "tlog_proof"),
}


@click.group("verify", cls=LazyGroup, lazy=VERIFY_SUBCOMMANDS)
def verify() -> None:
    """Verify bundles, attestations, anchor receipts, checkpoints and Merkle proofs offline."""
