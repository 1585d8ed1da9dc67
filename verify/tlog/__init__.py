"""C2SP transparency-log formats, offline: tiles, cosignatures, tlog-proofs and tlog-policies.

The specs (https://c2sp.org): tlog-tiles (the tree as static tiles), tlog-cosignature (what a
witness signs), tlog-proof (an offline proof of inclusion under a cosigned checkpoint) and
tlog-policy (which logs and witnesses a verifier trusts, and the quorum). Signed notes and
checkpoints themselves live in :mod:`affidavit.verify.crypto.checkpoint`. Nothing here fetches:
a caller hands in the bytes (docs/adr/0002).

This room is internal (issue 32; docs/adr/0003-cold-start.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. The layers
above import a name from the module that defines it (each module's ``__all__`` says what it
offers); the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
