"""``affidavit verify``: the offline verifier's commands (exit 0 verified, 1 not verified, 2
unreadable input or usage).

The verbs are listed in :data:`affidavit.cli._group.VERIFY_COMMANDS`.
"""

__all__: list[str] = []
