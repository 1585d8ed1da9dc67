"""The append-only RFC 6962 / RFC 9162 transparency log: tree, proofs, signed heads, keys, tiles.

>>> import tempfile, pathlib
>>> from affidavit.attest import derive_test_key
>>> from affidavit.attest.log import TransparencyLog
>>> db = pathlib.Path(tempfile.mkdtemp()) / "log.db"
>>> with TransparencyLog.create(db, derive_test_key("log pkg doctest"), "example.com/log") as log:
...     log.append([b"a", b"b"])
[0, 1]

:mod:`.transparency` is the log, one class read top to bottom (create, open, append, sequence,
read and prove, sign heads and checkpoints, check itself against what it signed, keys);
:mod:`.sequencing` files entries before they join the tree (docs/adr/0018); :mod:`.storage`,
:mod:`.tree` and :mod:`.types` are its tables, nodes and wire objects; :mod:`.state` (the signed
state file) keeps it from forking (docs/adr/0005);
:mod:`.keys` is its key history (docs/adr/0011); :mod:`.tiles` writes C2SP tiles and
:mod:`.proofs` C2SP tlog-proofs.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "COMPONENT": "storage",
    "ConsistencyProof": "types",
    "InclusionProof": "types",
    "IssuedTreeHead": "types",
    "LogKey": "keys",
    "LogState": "state",
    "LogStatus": "sequencing",
    "MAX_ENTRIES_PER_CALL": "transparency",
    "MAX_INTEGRATE": "sequencing",
    "MIGRATIONS": "storage",
    "RecordedHead": "types",
    "Rotation": "keys",
    "Sequenced": "sequencing",
    "TLOG_PROOF_FIELD": "proofs",
    "TilesReport": "tiles",
    "TransparencyLog": "transparency",
    "attach_proof": "proofs",
    "build_proof": "proofs",
    "bundle_leaf": "proofs",
    "folder_fetch": "tiles",
    "insert_meta": "storage",
    "read_state": "state",
    "rotations_bytes": "tiles",
    "state_path": "state",
    "tile_bytes": "tiles",
    "write_tiles": "tiles",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
