"""Keys, Ed25519 signatures, RFC 6962 Merkle proofs, signed notes, checkpoints and tree heads."""
