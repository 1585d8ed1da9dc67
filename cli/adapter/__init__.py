"""``affidavit adapter``: author, lint, publish and pin AdapterContracts (seed 003).

The verbs are listed in :data:`affidavit.cli._group.ADAPTER_COMMANDS`.
"""

__all__: list[str] = []
