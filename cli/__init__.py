"""affidavit.cli: the front door. Thin click commands over the library; ``--json`` for machines."""

__all__: list[str] = []
