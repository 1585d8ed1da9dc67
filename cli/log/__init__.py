"""``affidavit log``: the transparency log, its tiles, checkpoints, proofs and monitor.

``affidavit log init log.db --key KEYFILE --log-id example`` creates one; the verbs are listed in
:data:`affidavit.cli._group.LOG_COMMANDS`. Modules: ``basic`` (init, append, head, vkey,
consistency), ``proof`` (proof, and its hidden old name prove), ``rotation`` (rotate-key, keys),
``tiles`` (C2SP tiles) and ``monitor`` (following a tiled log).
"""

__all__: list[str] = []
