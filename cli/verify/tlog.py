"""``affidavit verify tlog-proof``: a C2SP tlog-proof, offline, under a tlog-policy.

::

    affidavit verify tlog-proof PROOF (--entry FILE | --leaf-hash HASH) --policy POLICY [--json]

The proof (https://c2sp.org/tlog-proof) is checked as the spec's "Verifying a tlog proof" asks
(:mod:`affidavit.verify.tlog.proof`): the entry's RFC 6962 leaf hash (``--entry``: the logged
bytes; ``--leaf-hash``: the 32-byte leaf hash, 64 hex characters or base64, when the caller
computed it), the checkpoint signed by a log of the policy named by its origin, every cosignature
from a policy witness, the policy's quorum, and the inclusion of the leaf at the proof's index
under the checkpoint's root. The proof's ``extra`` data is shown, never trusted.

Exit codes: 0 verified; 1 not verified (``tlog.log_untrusted``, ``tlog.quorum_not_met``,
``tlog.entry_mismatch``, ``checkpoint.*``, ``tlog.cosignature_bad``, ``merkle.*``); 2 unreadable
input or usage (``tlog.proof_malformed``, ``tlog.policy_malformed``, ``checkpoint.malformed``,
``io.*``). ``--json`` prints the one result document with every step, whatever the verdict; the
text is one line (cli/render/verdict.py: what was verified, or the error line on stderr).
"""

from __future__ import annotations

import click
from affidavit.cli._common import json_option, print_outcome, read_input
from affidavit.cli.verify.bundle import read_policy
from affidavit.cli.verify.primitives import parse_hash
from affidavit.verify import errors

__all__ = ["tlog_proof"]


@click.command("tlog-proof")
@click.argument("source", metavar="PROOF|-")
@click.option(
    "--entry",
    "entry_file",
    type=click.Path(dir_okay=False),
    help="The logged entry: its bytes are hashed as the RFC 6962 leaf.",
)
@click.option(
    "--leaf-hash",
    metavar="HASH",
    help="The leaf hash instead of --entry (hex or base64, 32 bytes).",
)
@click.option(
    "--policy",
    "policy_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="The C2SP tlog-policy: trusted logs, witnesses and the quorum.",
)
@json_option
def tlog_proof(
    *,
    source: str,
    entry_file: str | None,
    leaf_hash: str | None,
    policy_file: str,
    as_json: bool,
) -> None:
    """Verify a C2SP tlog-proof of an entry under a tlog-policy (witness quorum included)."""
    from affidavit.verify.tlog.proof import MAX_PROOF_BYTES, check_proof  # noqa: PLC0415 - lazy

    if (entry_file is None) == (leaf_hash is None):
        raise errors.UsageError("give exactly one of --entry FILE and --leaf-hash HASH")
    policy = read_policy(policy_file)
    entry = None if entry_file is None else read_input(entry_file)
    leaf = None if leaf_hash is None else parse_hash(leaf_hash, "--leaf-hash")
    too_large = (errors.ProofError, "tlog.proof_malformed")
    data = read_input(source, max_bytes=MAX_PROOF_BYTES, too_large=too_large)
    result = check_proof(data, policy, entry=entry, leaf_hash=leaf, source=source)
    print_outcome(result, as_json=as_json, brief=True)
