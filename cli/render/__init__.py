"""Presentation for people: verification outcomes as text (``verdict``), rendered from the
library's results and never computed beside them (style.md §17); lineage walks as text, DOT,
Mermaid, SVG or HTML (``lineage``).
"""

__all__: list[str] = []
