"""The crypto room: keys, Ed25519 signatures, RFC 6962 Merkle proofs, signed notes, checkpoints
and tree heads.

>>> from affidavit.verify.crypto import leaf_hash, root_of, verify_inclusion
>>> leaves = [leaf_hash(b"a"), leaf_hash(b"b")]
>>> verify_inclusion(leaves[1], 1, 2, [leaves[0]], root_of(leaves))  # None: it verifies

:mod:`.keys` parses Ed25519 public keys strictly; :mod:`.signature` verifies through libsodium;
:mod:`.merkle` and :mod:`.tree_ranges` are RFC 9162's trees and proofs; :mod:`.treehead` is the
AiGentsy signed tree head a bundle rests on and :mod:`.checkpoint` C2SP's signed notes and
checkpoints; :mod:`.trusted_keys` and :mod:`.windows` read the keys a caller trusts and their
validity windows.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "Checkpoint": "checkpoint",
    "EMPTY_ROOT": "merkle",
    "Ed25519PublicKey": "keys",
    "HASH_BYTES": "merkle",
    "KeyWindow": "windows",
    "MAX_KEY_FILE_BYTES": "trusted_keys",
    "NoteVerifier": "checkpoint",
    "SignedTreeHead": "treehead",
    "TrustedKey": "trusted_keys",
    "VerifiedCheckpoint": "checkpoint",
    "b64decode_strict": "keys",
    "b64url_encode": "keys",
    "check_checkpoint": "checkpoint",
    "check_head_time": "windows",
    "check_inclusion": "merkle",
    "check_key_name": "checkpoint",
    "checkpoint_body": "checkpoint",
    "consistency_ranges": "tree_ranges",
    "decode_signature_b64": "signature",
    "decode_signature_b64url": "signature",
    "decompose": "tree_ranges",
    "format_note": "checkpoint",
    "inclusion_ranges": "tree_ranges",
    "is_key_name": "checkpoint",
    "key_from_base64": "trusted_keys",
    "key_from_document": "trusted_keys",
    "key_id_c2sp": "keys",
    "key_windows": "trusted_keys",
    "leaf_hash": "merkle",
    "node_hash": "merkle",
    "note_signature_line": "checkpoint",
    "parse_checkpoint_body": "checkpoint",
    "parse_key_bytes": "trusted_keys",
    "parse_note": "checkpoint",
    "parse_rfc3339": "windows",
    "parse_sth": "treehead",
    "parse_verifier_key": "checkpoint",
    "root_from_inclusion_proof": "merkle",
    "root_of": "merkle",
    "sth_message": "treehead",
    "subtree_hash": "merkle",
    "verifier_key_string": "checkpoint",
    "verify_checkpoint": "checkpoint",
    "verify_consistency": "merkle",
    "verify_ed25519": "signature",
    "verify_ed25519_b64": "signature",
    "verify_inclusion": "merkle",
    "verify_note": "checkpoint",
    "verify_sth": "treehead",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
