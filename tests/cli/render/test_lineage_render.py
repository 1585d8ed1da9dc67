"""Lineage pictures: hidden == absent in every format, well-formed SVG, escaped HTML, Chromium."""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from affidavit.cli.render.lineage import FORMATS, render
from affidavit.verify.lineage.walk import MemoryFactSource, WalkResult, walk

from tests import browser
from tests.verify.lineage.test_lineage import ABSENT, make_fact

SVG_NS = "{http://www.w3.org/2000/svg}"


def _hidden_and_absent() -> tuple[WalkResult, WalkResult]:
    grandparent = make_fact("gp")
    secret = make_fact("secret", grandparent, scope="local")
    other = make_fact("other", ABSENT)
    root = make_fact("root", secret, other)
    hidden = walk(
        MemoryFactSource([grandparent, secret, other, root]),
        root.hash,
        readable_scopes=frozenset({"team"}),
    )
    absent = walk(MemoryFactSource([grandparent, other, root]), root.hash)
    return hidden, absent


@pytest.mark.parametrize("form", FORMATS)
def test_hidden_and_absent_render_byte_identical(form: str) -> None:
    hidden, absent = _hidden_and_absent()
    assert render(hidden, form).encode() == render(absent, form).encode()  # type: ignore[arg-type]


def _diamond() -> WalkResult:
    a = make_fact("a")
    b = make_fact("b", a)
    c = make_fact("c <&> \"quoted\" 'x'", a)
    root = make_fact("root", b, c, ABSENT)
    return walk(MemoryFactSource([a, b, c, root]), root.hash, depth=5)


def test_svg_is_well_formed_and_has_every_node() -> None:
    result = _diamond()
    tree = ET.fromstring(render(result, "svg"))
    assert tree.tag == SVG_NS + "svg"
    groups = tree.findall(f"{SVG_NS}g")
    assert {g.get("data-hash") for g in groups} == {n.hash for n in result.nodes}
    assert len(tree.findall(f"{SVG_NS}line")) == len(result.edges)
    hidden = [g for g in groups if "hidden" in (g.get("class") or "")]
    assert [g.get("data-hash") for g in hidden] == [ABSENT]


def test_svg_boxes_do_not_overlap() -> None:
    tree = ET.fromstring(render(_diamond(), "svg"))
    boxes = [
        (
            float(r.get("x", 0)),
            float(r.get("y", 0)),
            float(r.get("width", 0)),
            float(r.get("height", 0)),
        )
        for r in tree.iter(f"{SVG_NS}rect")
        if r.get("rx")
    ]
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1


def test_html_escapes_fact_text_and_is_self_contained() -> None:
    html = render(_diamond(), "html")
    assert "<&>" not in html
    assert "&lt;&amp;&gt;" in html
    assert "&quot;quoted&quot;" in html
    assert "<script" not in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert "default-src 'none'" in html


def test_dot_and_mermaid_escape_quotes() -> None:
    result = _diamond()
    dot = render(result, "dot")
    assert '\\"quoted\\"' in dot
    assert dot.count("->") == len(result.edges)
    mermaid = render(result, "mermaid")
    assert '"quoted"' not in mermaid
    assert "#34;quoted#34;" in mermaid
    assert mermaid.count("-->") == len(result.edges)


def test_text_lists_every_node() -> None:
    result = _diamond()
    text = render(result, "text")
    for node in result.nodes:
        assert node.hash in text


def test_control_characters_do_not_break_the_svg() -> None:
    root = make_fact("bell\x07 and \x1b escape")
    svg = render(walk(MemoryFactSource([root]), root.hash), "svg")
    ET.fromstring(svg)


@pytest.mark.browser
def test_html_renders_in_headless_chromium() -> None:
    out = Path(tempfile.mkdtemp(prefix="affidavit-lineage-"))
    page = out / "lineage.html"
    page.write_text(render(_diamond(), "html"), encoding="utf-8")
    shot = browser.screenshot(page.as_uri(), out / "lineage.png", out / "profile", 1200, 900)
    assert shot.stat().st_size > 5000  # a blank page is a few hundred bytes
    print(f"lineage screenshot: {shot}")


def _demo_walk() -> WalkResult:
    """The demo's lineage (demo/40-facts.sh): the root's long value once ran past its box."""
    decision = make_fact("auto_accept")
    payout = make_fact("250", decision)
    note = make_fact("margin <b>12%</b> for the ledger of the quarter", decision)
    root = make_fact("paid 250 after auto_accept, then reported to the board", payout, note)
    wide = make_fact("支払い二百五十、自動承認の後に報告された", root)
    return walk(MemoryFactSource([decision, payout, note, root, wide]), wide.hash, depth=5)


def test_labels_say_confidence_and_signature() -> None:
    svg = render(_demo_walk(), "svg")
    assert "confidence 0.5, unsigned" in svg
    result = _demo_walk()
    signed = walk(
        MemoryFactSource([n.fact for n in result.nodes if n.fact is not None]),
        result.root,
        depth=5,
        check_signature=lambda fact: "signed",
    )
    assert "confidence 0.5, signed" in render(signed, "svg")


# Measures each label's rendered width against its box, in the page Chromium draws; the verdicts
# are written into the page, which --dump-dom prints.
_MEASURE = """<script>
const found = [];
for (const group of document.querySelectorAll("svg g.fact")) {
  const box = group.querySelector("rect").getBBox();
  for (const text of group.querySelectorAll("text")) {
    const b = text.getBBox();
    if (b.x < box.x || b.x + b.width > box.x + box.width || b.y < box.y
        || b.y + b.height > box.y + box.height)
      found.push(text.textContent + " [" + Math.round(b.x + b.width - box.x - box.width) + "px]");
  }
}
document.body.insertAdjacentHTML("beforeend",
  "<pre id='verdict'>" + JSON.stringify({labels: document.querySelectorAll("svg text").length,
                                          outside: found}) + "</pre>");
</script>"""


@pytest.mark.browser
def test_every_label_stays_inside_its_box_in_chromium(tmp_path: Path) -> None:
    svg = render(_demo_walk(), "svg")
    page = tmp_path / "measure.html"
    page.write_text(f"<!DOCTYPE html><meta charset='utf-8'><body>{svg}{_MEASURE}</body>")
    dom = browser.run(tmp_path / "profile", "--dump-dom", page.as_uri())
    verdict = json.loads(dom.split('<pre id="verdict">', 1)[1].split("</pre>", 1)[0])
    assert verdict["labels"] >= 20
    assert verdict["outside"] == [], verdict["outside"]
