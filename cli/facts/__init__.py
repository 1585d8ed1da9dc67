"""``affidavit facts``: hash, add, sign, walk, audit, export and pull facts (docs/formats.md
"Facts")."""

__all__: list[str] = []
