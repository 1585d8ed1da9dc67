"""The append-only RFC 6962 / RFC 9162 transparency log: tree, proofs, signed heads, keys, tiles.

>>> import tempfile, pathlib
>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.log.transparency import TransparencyLog
>>> db = pathlib.Path(tempfile.mkdtemp()) / "log.db"
>>> with TransparencyLog.create(db, derive_test_key("log pkg doctest"), "example.com/log") as log:
...     log.append([b"a", b"b"])
[0, 1]

:mod:`.transparency` is the log, one class read top to bottom (create, open, append, sequence,
read and prove, sign heads and checkpoints, check itself against what it signed, keys);
:mod:`.sequencing` files entries before they join the tree (docs/adr/0018); :mod:`.storage`,
:mod:`.tree` and :mod:`.types` are its tables, nodes and wire objects; :mod:`.state` (the signed
state file) keeps it from forking (docs/adr/0005); :mod:`.keys` is its key history
(docs/adr/0011); :mod:`.tiles` writes C2SP tiles and :mod:`.proofs` C2SP tlog-proofs.

This room is internal (issue 32; docs/adr/0022-click-alone.md, "Amendment (issue 32)"): its
``__init__`` imports nothing, so importing one module of it loads only that module. Callers
import a name from the module that defines it (each module's ``__all__`` says what it offers).
"""

__all__: list[str] = []
