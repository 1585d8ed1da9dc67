"""Pictures of a provenance walk: text, Graphviz dot, Mermaid, SVG and a self-contained HTML page.

>>> from affidavit.verify.lineage.walk import WalkResult, WalkNode
>>> from affidavit.verify.lineage.facts import FactHash
>>> empty = WalkResult(FactHash("a" * 64), 3, (WalkNode(FactHash("a" * 64), 0, None),), (), False)
>>> render(empty, "mermaid").splitlines()[0]
'flowchart BT'

A hidden fact and an absent one are the same value in a walk (``fact is None``), so they come out
byte-identical in every format (docs/formats.md §5). No network, no external binary: the SVG
layout is drawn here (layers by depth, root on top, one barycentre pass against crossings), and
the HTML page embeds it under a Content-Security-Policy that forbids every fetch and script.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Final, Literal

from affidavit.verify import errors
from affidavit.verify.lineage.walk import WalkNode, WalkResult

__all__ = [
    "FORMATS",
    "Format",
    "render",
    "render_dot",
    "render_html",
    "render_mermaid",
    "render_svg",
    "render_text",
]

Format = Literal["json", "text", "dot", "mermaid", "svg", "html"]
FORMATS: Final[tuple[Format, ...]] = ("json", "text", "dot", "mermaid", "svg", "html")

HIDDEN_LABEL: Final = "absent or hidden"
# A label fits its box: at font-size 12 a monospace character is at most 0.62 em (7.44 px) wide in
# the common fonts (DejaVu Sans Mono 0.60, Liberation Mono 0.60, Menlo 0.60, Consolas 0.55), so
# a box 250 px wide with 8 px padding each side holds 31; one more is kept spare.
_FONT_PX: Final = 12
_PAD_X: Final = 8
_BOX_W: Final = 250
_LABEL_CHARS: Final = int((_BOX_W - 2 * _PAD_X) / (0.62 * _FONT_PX)) - 1
_LINE_PX: Final = 16
_LINES: Final = 5
_BOX_H: Final = 12 + _LINES * _LINE_PX
_GAP_X: Final = 30
_GAP_Y: Final = 70
_MARGIN: Final = 20
# Characters XML 1.0 cannot hold (§2.2), replaced before escaping.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_MERMAID_SAFE: Final = re.compile(r"[A-Za-z0-9 .,:/_@+=\-]")


def render(result: WalkResult, form: Format) -> str:
    """Render ``result`` in ``form`` (one of :data:`FORMATS`); text ends with a newline.

    Raises:
        ``usage.invalid``: unknown form.
    """
    renderers: dict[str, Callable[[WalkResult], str]] = {
        "json": lambda r: json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n",
        "text": render_text,
        "dot": render_dot,
        "mermaid": render_mermaid,
        "svg": render_svg,
        "html": render_html,
    }
    if form not in renderers:
        raise errors.UsageError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}")
    return renderers[form](result)


def _columns(char: str) -> int:
    # East Asian wide and full-width characters take two monospace cells.
    return 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1


def _short(text: str, limit: int = _LABEL_CHARS) -> str:
    """``text`` on one line, cut with an ellipsis to at most ``limit`` monospace cells."""
    text = _NOT_XML.sub("\ufffd", " ".join(text.split()))
    if sum(_columns(c) for c in text) <= limit:
        return text
    kept, used = [], 1  # the ellipsis takes one cell
    for char in text:
        used += _columns(char)
        if used > limit:
            break
        kept.append(char)
    return "".join(kept) + "\u2026"


def _value_text(node: WalkNode) -> str:
    assert node.fact is not None
    value = node.fact.value
    return f"{value.type} {json.dumps(value.v, ensure_ascii=False)}"


def signature_label(node: WalkNode) -> str:
    """A fact's signature as checked, or (not checked) whether the fact carries one."""
    assert node.fact is not None
    if node.signature == "signed":
        return "signed"
    if node.signature == "bad":
        return "BAD signature"
    if node.signature is not None or node.fact.signature is None:
        return "unsigned"
    return "signed, not checked"


def _label_lines(node: WalkNode) -> list[str]:
    """The lines drawn in a node's box; a hidden or absent node shows only its hash."""
    if node.fact is None:
        return [node.hash[:16] + "\u2026", HIDDEN_LABEL]
    return [
        node.hash[:16] + "\u2026",
        _short(node.fact.entity),
        _short(node.fact.relation),
        _short(_value_text(node)),
        _short(f"confidence {node.fact.confidence}, {signature_label(node)}"),
    ]


def render_text(result: WalkResult) -> str:
    """A plain listing by depth, with each node's parents."""
    parents: dict[str, list[str]] = {}
    for edge in result.edges:
        parents.setdefault(edge.derived_fact_id, []).append(edge.source_hash)
    out = [f"lineage of {result.root} (depth limit {result.depth_limit})"]
    level = -1
    for node in result.nodes:
        if node.depth != level:
            level = node.depth
            out.append(f"depth {level}")
        if node.fact is None:
            out.append(f"  {node.hash}  {HIDDEN_LABEL}")
            continue
        mark = f"  [{node.signature}]" if node.signature else ""
        out.append(f"  {node.hash}{mark}")
        out.append(f"    {node.fact.entity}  {node.fact.relation}  {_value_text(node)}")
        out.append(f"    confidence {node.fact.confidence}")
        out.extend(f"    derived from {parent}" for parent in parents.get(node.hash, ()))
    out.append(f"truncated: {'yes' if result.truncated else 'no'}")
    return "\n".join(out) + "\n"


def _dot_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _NOT_XML.sub("\ufffd", escaped) + '"'


def render_dot(result: WalkResult) -> str:
    """Graphviz dot: sources at the bottom, arrows from a source to the fact derived from it."""
    out = [
        "digraph lineage {",
        "  rankdir=BT;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
    ]
    for node in result.nodes:
        label = "\\n".join(_dot_string(line)[1:-1] for line in _label_lines(node))
        style = ", style=dashed" if node.fact is None else ""
        if node.signature == "bad":
            style += ", color=red"
        out.append(f'  "{node.hash}" [label="{label}"{style}];')
    out.extend(f'  "{e.source_hash}" -> "{e.derived_fact_id}";' for e in result.edges)
    out.append("}")
    return "\n".join(out) + "\n"


def _mermaid_text(text: str) -> str:
    return "".join(c if _MERMAID_SAFE.fullmatch(c) else f"#{ord(c)};" for c in text)


def render_mermaid(result: WalkResult) -> str:
    """A Mermaid flowchart (bottom to top); labels use entity codes for every unsafe character."""
    ids = {node.hash: f"n{index}" for index, node in enumerate(result.nodes)}
    out = ["flowchart BT"]
    for node in result.nodes:
        label = "<br/>".join(_mermaid_text(line) for line in _label_lines(node))
        suffix = ":::hidden" if node.fact is None else (":::bad" if node.signature == "bad" else "")
        out.append(f'  {ids[node.hash]}["{label}"]{suffix}')
    out.extend(f"  {ids[e.source_hash]} --> {ids[e.derived_fact_id]}" for e in result.edges)
    out.append("  classDef hidden stroke-dasharray: 5 5")
    out.append("  classDef bad stroke:#c00")
    return "\n".join(out) + "\n"


def _xml(text: str) -> str:
    text = _NOT_XML.sub("\ufffd", text)
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _layout(result: WalkResult) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Top-left corner of each node's box, and the picture's width and height."""
    layers: dict[int, list[str]] = {}
    for node in result.nodes:
        layers.setdefault(node.depth, []).append(node.hash)
    neighbours: dict[str, list[str]] = {}
    for edge in result.edges:
        neighbours.setdefault(edge.source_hash, []).append(edge.derived_fact_id)
    widest = max(len(members) for members in layers.values())
    width = 2 * _MARGIN + widest * _BOX_W + (widest - 1) * _GAP_X
    position: dict[str, tuple[int, int]] = {}
    for depth in sorted(layers):
        members = layers[depth]
        if depth:  # barycentre of the already placed facts derived from each member
            order = {h: i for i, h in enumerate(members)}

            def centre(fact_hash: str, order: dict[str, int] = order) -> tuple[float, int]:
                placed = [position[n][0] for n in neighbours.get(fact_hash, ()) if n in position]
                return (sum(placed) / len(placed) if placed else 0.0, order[fact_hash])

            members = sorted(members, key=centre)
        row = len(members) * _BOX_W + (len(members) - 1) * _GAP_X
        left = (width - row) // 2
        for index, fact_hash in enumerate(members):
            position[fact_hash] = (
                left + index * (_BOX_W + _GAP_X),
                _MARGIN + depth * (_BOX_H + _GAP_Y),
            )
    height = 2 * _MARGIN + (max(layers) + 1) * _BOX_H + max(layers) * _GAP_Y
    return position, width, height


def render_svg(result: WalkResult) -> str:
    """A standalone SVG drawing of the walk (layered DAG; dashed boxes for absent or hidden)."""
    position, width, height = _layout(result)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="{_FONT_PX}">',
        "<title>" + _xml(f"Lineage of {result.root}") + "</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/>'
        "</marker></defs>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for edge in result.edges:
        sx, sy = position[edge.source_hash]
        dx, dy = position[edge.derived_fact_id]
        out.append(
            f'<line x1="{sx + _BOX_W // 2}" y1="{sy}" x2="{dx + _BOX_W // 2}" y2="{dy + _BOX_H}" '
            'stroke="#444" stroke-width="1.2" marker-end="url(#arrow)"/>'
        )
    out.extend(_svg_node(node, *position[node.hash]) for node in result.nodes)
    out.append("</svg>")
    return "\n".join(out) + "\n"


_STROKES: Final = {"signed": "#1a7f37", "bad": "#cf222e", "unsigned": "#57606a"}


def _svg_node(node: WalkNode, x: int, y: int) -> str:
    hidden = node.fact is None
    stroke = "#8c959f" if hidden else _STROKES.get(node.signature or "", "#24292f")
    fill = "#f6f8fa" if hidden else "#ddf4ff" if node.depth == 0 else "#ffffff"
    dash = ' stroke-dasharray="6 4"' if hidden else ""
    parts = [
        f'<g class="{"fact hidden" if hidden else "fact"}" data-hash="{node.hash}">',
        f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="1.5"{dash}/>',
    ]
    for index, line in enumerate(_label_lines(node)):
        weight = ' font-weight="bold"' if index == 0 else ""
        parts.append(
            f'<text x="{x + _PAD_X}" y="{y + 17 + index * _LINE_PX}"{weight}>{_xml(line)}</text>'
        )
    parts.append("</g>")
    return "".join(parts)


_CSS: Final = (
    "body{font-family:system-ui,sans-serif;margin:24px;color:#24292f}"
    "h1{font-size:20px;word-break:break-all}"
    "table{border-collapse:collapse;margin-top:16px;font-size:13px}"
    "td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
    "code{font-family:monospace}.hidden{color:#57606a;font-style:italic}"
    ".scroll{overflow:auto;border:1px solid #d0d7de}"
)


def render_html(result: WalkResult) -> str:
    """A self-contained HTML page: the SVG inline and a table of the nodes; no script, no fetch."""
    rows = []
    for node in result.nodes:
        if node.fact is None:
            rows.append(
                f'<tr class="hidden"><td><code>{node.hash}</code></td><td>{node.depth}</td>'
                f'<td colspan="5">{HIDDEN_LABEL}</td></tr>'
            )
            continue
        fact = node.fact
        rows.append(
            f"<tr><td><code>{node.hash}</code></td><td>{node.depth}</td><td>{_xml(fact.entity)}</td>"
            f"<td>{_xml(fact.relation)}</td><td>{_xml(_value_text(node))}</td>"
            f"<td>{fact.confidence}</td><td>{signature_label(node)}</td></tr>"
        )
    title = _xml(f"Lineage of {result.root}")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{title}</h1>\n"
        f"<p>Depth limit {result.depth_limit}; {len(result.nodes)} facts, {len(result.edges)} "
        f"derivations; truncated: {'yes' if result.truncated else 'no'}.</p>\n"
        f'<div class="scroll">\n{render_svg(result)}</div>\n'
        "<table>\n<thead><tr><th>FactHash</th><th>depth</th><th>entity</th><th>relation</th>"
        "<th>value</th><th>confidence</th><th>signature</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</body>\n</html>\n"
    )
