"""The receipts room: transformation receipts (seed 004 §7), what an adapter did to source bytes,
signed, replayable offline.

:mod:`.format` is the receipt document and its hash; :mod:`.verify` verifies one against the
bytes it speaks of (the one Result); :mod:`.facts` files receipts as facts.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
