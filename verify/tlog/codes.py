"""Codes of the tlog room: tiles, cosignatures, tlog-proofs and tlog-policies (``tlog.*``).

Raised through :class:`affidavit.verify.errors.ProofError`; the exit code is the code's (2 the
input is not what it claims to be, 1 it was read and does not verify).
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

# C2SP tlog-tiles: tile paths, tile and entry-bundle contents.
TILES: Final = (
    Code(
        "tlog.tile_path_invalid",
        INPUT,
        "Not a canonical tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>].",
    ),
    Code(
        "tlog.tile_missing",
        INPUT,
        "A tile or entry bundle the checkpoint's tree size needs is not available.",
    ),
    Code(
        "tlog.tile_malformed",
        INPUT,
        "A tile is not exactly 32 bytes per hash of the width its path names.",
    ),
    Code(
        "tlog.bundle_malformed",
        INPUT,
        "An entry bundle is not exactly W uint16-length-prefixed entries (truncated, trailing).",
    ),
    Code(
        "tlog.entry_too_large",
        INPUT,
        "An entry longer than 65,535 bytes does not fit an entry bundle (uint16 length).",
    ),
    Code(
        "tlog.beyond_tree",
        INPUT,
        "A leaf, tile, subtree or size asked of a tiled tree is beyond its checkpoint's size.",
    ),
    Code(
        "tlog.tile_mismatch",
        FAILED,
        "The tiles' root is not the checkpoint's root, or an entry does not hash to its tile.",
    ),
)

# C2SP tlog-cosignature: cosigner keys and cosignature lines.
COSIGNATURE: Final = (
    Code(
        "tlog.cosigner_key_malformed",
        INPUT,
        "A cosigner verifier key is not name+hexkeyid+base64(0x04||Ed25519 or 0x06||ML-DSA-44).",
    ),
    Code(
        "tlog.cosignature_malformed",
        INPUT,
        "A cosignature is not a u64 timestamp and a signature of the algorithm's length.",
    ),
    Code(
        "tlog.cosignature_bad",
        FAILED,
        "A cosignature from a trusted cosigner does not verify over the checkpoint.",
    ),
    Code(
        "tlog.cosigner_unsupported",
        INPUT,
        "The cosignature algorithm (ML-DSA-44) is not available in this cryptography build.",
    ),
)

# C2SP tlog-proof and tlog-policy.
PROOF: Final = (
    Code(
        "tlog.proof_malformed",
        INPUT,
        "Not a c2sp.org/tlog-proof@v1: header, optional extra, index, proof hashes, empty line,"
        " checkpoint.",
    ),
    Code(
        "tlog.policy_malformed",
        INPUT,
        "Not a valid tlog-policy file (a line, key, name, group or the quorum line is wrong).",
    ),
    Code(
        "tlog.log_untrusted",
        FAILED,
        "No log of the tlog-policy is named by the checkpoint's origin.",
    ),
    Code(
        "tlog.quorum_not_met",
        FAILED,
        "The witnesses whose cosignatures verified do not satisfy the policy's quorum.",
    ),
    Code(
        "tlog.entry_mismatch",
        FAILED,
        "The inclusion proof does not bind the entry (leaf hash) to the checkpoint's root.",
    ),
)

# A monitor of a tiled log: what it remembers, and what it alerts on.
MONITOR: Final = (
    Code(
        "tlog.monitor_state_invalid",
        INPUT,
        "The monitor's state file is malformed, or belongs to another log or key.",
    ),
    Code(
        "tlog.rollback",
        FAILED,
        "The log's checkpoint is smaller than the one the monitor already trusted (a rollback).",
    ),
    Code(
        "tlog.fork",
        FAILED,
        "The log's tree does not extend the tree the monitor trusted (a fork or split view).",
    ),
    Code(
        "tlog.rotation_unproven",
        FAILED,
        "The checkpoint is not signed by the trusted log key, and no rotation that key signed"
        " (and the new key countersigned) hands the log over to a key that signed it.",
    ),
)

# C2SP tlog-witness, the log's side: what a witness answered to add-checkpoint.
WITNESS: Final = (
    Code(
        "tlog.witness_refused",
        FAILED,
        "A witness refused the checkpoint (an HTTP status other than 200 and 409); details carry"
        " the witness URL and the status.",
    ),
    Code(
        "tlog.witness_bad_response",
        INPUT,
        "A witness answered add-checkpoint with something tlog-witness does not define (not"
        " signature lines, or a 409 body that is not a size).",
    ),
)

TLOG: Final = (*TILES, *COSIGNATURE, *PROOF, *MONITOR, *WITNESS)
