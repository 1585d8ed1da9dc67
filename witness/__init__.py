"""A C2SP transparency-log witness (https://c2sp.org/tlog-witness): ``affidavit witness serve``.

- :mod:`~affidavit.witness.protocol`: the add-checkpoint body and the decision (pure);
- :mod:`~affidavit.witness.cosigner`: the witness's keys and its cosignature lines;
- :mod:`~affidavit.witness.state`: the latest cosigned checkpoint per log (SQLite, atomic);
- :mod:`~affidavit.witness.app`: the HTTP service (Starlette).

The log's side (submitting checkpoints, verifying and recording the cosignatures) lives in
:mod:`affidavit.registry.witnessing` and :mod:`affidavit.registry.clients.witness`.
"""
