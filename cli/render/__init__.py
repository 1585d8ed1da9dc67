"""Presentation: lineage rendered as text, DOT, Mermaid, SVG or HTML."""
