"""``affidavit facts``: hash, add, sign, walk, audit, export and pull facts (docs/formats.md
"Facts").

``pull`` has its own module: it needs httpx (the registry extra), the rest never does.
"""

__all__: list[str] = []
