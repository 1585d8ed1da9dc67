"""A C2SP transparency-log witness (https://c2sp.org/tlog-witness): ``affidavit witness serve``.

>>> from affidavit.witness import origin_hash
>>> origin_hash("example.com/log")[:16]  # the checkpoint path's /<origin hash>/
'4d3203c8f35cdf60'

- :mod:`~affidavit.witness.protocol`: the add-checkpoint body and the decision (pure);
- :mod:`~affidavit.witness.cosigner`: the witness's keys and its cosignature lines;
- :mod:`~affidavit.witness.state`: the latest cosigned checkpoint per log (SQLite, atomic);
- :mod:`~affidavit.witness.app`: the HTTP service (Starlette).

The log's side (submitting checkpoints, verifying and recording the cosignatures) lives in
:mod:`affidavit.registry.witnessing` and :mod:`affidavit.registry.clients.witness`.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this package that defines it, imported on first use (PEP 562). Keep
# sorted by name.
_HOME = {
    "Refusal": "protocol",
    "WitnessConfig": "app",
    "WitnessKeys": "cosigner",
    "WitnessState": "state",
    "check_distinct": "cosigner",
    "create_app": "app",
    "load_witness_keys": "cosigner",
    "origin_hash": "protocol",
    "origin_paths": "app",
    "parse_request": "protocol",
    "write_key_files": "cosigner",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
