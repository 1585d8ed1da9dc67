"""C2SP transparency-log formats, offline: tiles, cosignatures, tlog-proofs and tlog-policies.

Signed notes and checkpoints are :mod:`affidavit.verify.crypto.checkpoint`'s. Nothing here
fetches: a caller hands in the bytes (docs/adr/0002).

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
