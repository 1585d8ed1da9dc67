"""Presentation for people: verification outcomes as text (``verdict``), rendered from the
library's results and never computed beside them (style.md §17); lineage walks as text, DOT,
Mermaid, SVG or HTML (``lineage``).

``outcome_blocks(result, as_json=False)`` gives what a verify verb prints, as
``(text, to_stderr)`` blocks.
"""

__all__: list[str] = []
