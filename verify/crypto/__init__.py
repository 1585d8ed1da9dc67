"""The crypto room: keys, Ed25519 signatures, RFC 6962 Merkle proofs, signed notes, checkpoints
and tree heads.

>>> from affidavit.verify.crypto.merkle import leaf_hash, root_of, verify_inclusion
>>> leaves = [leaf_hash(b"a"), leaf_hash(b"b")]
>>> verify_inclusion(leaves[1], 1, 2, [leaves[0]], root_of(leaves))  # None: it verifies

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
