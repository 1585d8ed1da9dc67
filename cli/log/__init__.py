"""``affidavit log``: the transparency log, its tiles, checkpoints, proofs and monitor.

The verbs are listed in :data:`affidavit.cli._group.LOG_COMMANDS`.
"""

__all__: list[str] = []
