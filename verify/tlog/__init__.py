"""C2SP transparency-log formats, offline: tiles, cosignatures, tlog-proofs and tlog-policies.

The specs (https://c2sp.org): tlog-tiles (the tree as static tiles), tlog-cosignature (what a
witness signs), tlog-proof (an offline proof of inclusion under a cosigned checkpoint) and
tlog-policy (which logs and witnesses a verifier trusts, and the quorum). Signed notes and
checkpoints themselves live in :mod:`affidavit.verify.crypto.checkpoint`. Nothing here fetches:
a caller hands in the bytes (docs/adr/0002).
"""
