"""The receipts room: transformation receipts (seed 004 §7), what an adapter did to source bytes,
signed, replayable offline.

:mod:`.format` is the receipt document and its hash; :mod:`.verify` verifies one against the
bytes it speaks of (the one Result); :mod:`.facts` files receipts as facts.

This room is internal (issue 32; docs/adr/0003-cold-start.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. The layers
above import a name from the module that defines it (each module's ``__all__`` says what it
offers); the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
