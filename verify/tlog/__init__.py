"""C2SP transparency-log formats, offline: tiles, cosignatures, tlog-proofs and tlog-policies.

The specs (https://c2sp.org): tlog-tiles (the tree as static tiles), tlog-cosignature (what a
witness signs), tlog-proof (an offline proof of inclusion under a cosigned checkpoint) and
tlog-policy (which logs and witnesses a verifier trusts, and the quorum). Signed notes and
checkpoints themselves live in :mod:`affidavit.verify.crypto.checkpoint`. Nothing here fetches:
a caller hands in the bytes (docs/adr/0002).
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "Algorithm": "cosignature",
    "Cosigner": "cosignature",
    "ED25519": "cosignature",
    "MAX_EXTRA_BYTES": "proof",
    "MAX_POLICY_BYTES": "policy",
    "MAX_PROOF_BYTES": "proof",
    "MAX_STATE_BYTES": "monitor",
    "ML_DSA_44": "cosignature",
    "MonitorState": "monitor",
    "Policy": "policy",
    "ROTATIONS_PATH": "rotation",
    "ROTATION_FORMAT": "rotation",
    "TILE_HEIGHT": "layout",
    "TILE_WIDTH": "layout",
    "TileRef": "layout",
    "TiledTree": "tiles",
    "TlogProof": "proof",
    "bundle_path": "layout",
    "bundles_for_size": "layout",
    "check_proof": "proof",
    "check_round": "monitor",
    "cosignature_line": "cosignature",
    "cosigner_key_id": "cosignature",
    "cosigner_vkey": "cosignature",
    "ed25519_cosigned_message": "cosignature",
    "encode_bundle": "layout",
    "encode_rotations": "rotation",
    "ml_dsa_44_available": "cosignature",
    "ml_dsa_44_cosigned_message": "cosignature",
    "monitor_round": "monitor",
    "normalized_vkey": "monitor",
    "parse_cosigner_vkey": "cosignature",
    "parse_policy": "policy",
    "parse_proof": "proof",
    "parse_state": "monitor",
    "parse_tile_path": "layout",
    "rotation_message": "rotation",
    "state_json": "monitor",
    "tile_path": "layout",
    "tiles_for_size": "layout",
    "verify_cosignatures": "cosignature",
    "verify_proof": "proof",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
