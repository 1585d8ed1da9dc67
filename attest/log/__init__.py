"""The append-only RFC 6962 / RFC 9162 transparency log: tree, proofs, signed heads, keys, tiles.

>>> import tempfile, pathlib
>>> from affidavit.attest.keyring import derive_test_key
>>> from affidavit.attest.log.transparency import TransparencyLog
>>> db = pathlib.Path(tempfile.mkdtemp()) / "log.db"
>>> with TransparencyLog.create(db, derive_test_key("log pkg doctest"), "example.com/log") as log:
...     log.append([b"a", b"b"])
[0, 1]

:mod:`.transparency` is the log; its other modules: docs/architecture.md.

This room is internal (docs/adr/0022-click-alone.md, "Amendment (issue 32)"): import each name
from the module that defines it.
"""

__all__: list[str] = []
