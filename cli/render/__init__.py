"""Presentation: verification outcomes as text (``verdict.py``); lineage rendered as text, DOT,
Mermaid, SVG or HTML (``lineage.py``)."""
