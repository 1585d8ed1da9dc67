"""``affidavit facts``: hash, add, sign, walk, audit, export and pull facts (docs/formats.md
"Facts").

``affidavit facts walk HASH --store facts.db --format text`` shows a fact's provenance. Modules:
``group`` (the group and every verb but pull) and ``pull`` (from a Stigmem node; needs httpx).
"""

__all__: list[str] = []
