"""The documentation site as a reader sees it, in headless Chromium (issue 23).

The site is built with mkdocs into a temp folder and served on 127.0.0.1; one Chromium loads every
page in a frame at a desktop and a tablet width and measures the rendered boxes:

- a word of inline code (an error code, an option name, a command) never breaks across lines;
- no text element spills out of its box, no code block is wider than its box unless it scrolls,
  no page scrolls sideways, and no sidebar link is cut off;
- outside the decision records, the sidebar fits the screen (Home is never scrolled away).

Screenshots of the index, the five-minute start, the CLI reference and the error-code page are
kept under build/docs-screenshots/ (a CI artefact).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests import browser

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = Path(sys.executable).parent / "mkdocs"
SCREENSHOTS = ROOT / "build" / "docs-screenshots"
# Page and window height: the error page tall enough to show rows of its Code column.
SHOT_PAGES = {"index": 1000, "start": 1000, "reference/cli": 1600, "reference/errors": 2400}
WIDTHS = (1280, 820)
HEIGHT = 1000

pytestmark = [pytest.mark.browser, pytest.mark.network_local]

# Runs in the driver page: each page in a same-origin frame, measured, the findings POSTed back.
DRIVER = """<!doctype html><meta charset="utf-8"><body style="margin:0">
<iframe id="f" style="border:0" height="%(height)d"></iframe>
<script>
const pages = %(pages)s, widths = %(widths)s, frame = document.getElementById("f");
const sleep = ms => new Promise(r => setTimeout(r, ms));
function load(url) {
  return new Promise(r => { frame.onload = () => r(); frame.src = url; });
}
function describe(el) {
  return el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ")[0] : "")
    + ": " + (el.textContent || "").trim().slice(0, 60);
}
function measure(doc, page, width) {
  const found = [];
  const win = doc.defaultView;
  for (const code of doc.querySelectorAll(".md-typeset :not(pre) > code")) {
    const words = code.textContent.split(" ").filter(w => w.length > 0 && w.length <= 48);
    if (code.querySelectorAll(".nobr").length !== words.length)
      found.push("inline code whose words may break: " + code.textContent.slice(0, 60));
  }
  for (const word of doc.querySelectorAll(".md-typeset code .nobr")) {
    if (word.getClientRects().length > 1) found.push("breaks inside a word: " + word.textContent);
  }
  const text = ".md-content p, .md-content li, .md-content td, .md-content th, .md-content h1,"
    + ".md-content h2, .md-content h3, .md-content dd, .md-content dt, .md-nav__link";
  for (const el of doc.querySelectorAll(text)) {
    if (el.getClientRects().length === 0) continue;  // not shown at this width
    const style = win.getComputedStyle(el);
    // 4 px: an inline code span's own padding may end a line a hair past the text's edge
    if (el.scrollWidth > el.clientWidth + 4 && style.overflowX === "visible")
      found.push("spills out of its box by " + (el.scrollWidth - el.clientWidth) + "px: "
        + describe(el));
    if (el.matches(".md-nav__link") && el.scrollWidth > el.clientWidth + 1)
      found.push("sidebar entry cut off: " + describe(el));
  }
  for (const el of doc.querySelectorAll(".md-content pre > code")) {
    const style = win.getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && !["auto", "scroll"].includes(style.overflowX))
      found.push("code block neither fits nor scrolls: " + describe(el));
  }
  if (doc.documentElement.scrollWidth > width + 1)
    found.push("the page scrolls sideways: " + doc.documentElement.scrollWidth + "px");
  const sidebar = doc.querySelector(".md-sidebar--primary .md-sidebar__scrollwrap");
  if (width >= 1220 && sidebar && !page.startsWith("adr/")
      && sidebar.scrollHeight > sidebar.clientHeight + 1)
    found.push("the sidebar does not fit (" + sidebar.scrollHeight + "px in "
      + sidebar.clientHeight + "px): Home scrolls away");
  return found;
}
(async () => {
  const report = {};
  try {
    for (const width of widths) {
      frame.width = width;
      for (const page of pages) {
        await load(page);
        await sleep(150);  // Material's scripts settle the sidebar
        const found = measure(frame.contentDocument, page, width);
        if (found.length) report[page + " @" + width] = found;
      }
    }
  } catch (e) {
    report["driver"] = [String(e)];
  }
  await fetch("/report", {method: "POST", body: JSON.stringify(report)});
})();
</script>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not MKDOCS.exists():
        pytest.skip(f"mkdocs is not installed ({MKDOCS}): pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs") / "site"
    subprocess.run(
        [str(MKDOCS), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=True, timeout=180,
    )  # fmt: skip
    return out


class _Handler(SimpleHTTPRequestHandler):
    reports: list[Any]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.reports.append(json.loads(body))  # type: ignore[attr-defined]
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[tuple[str, ThreadingHTTPServer]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(site)))
    server.reports = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        server.server_close()


def test_no_page_overflows_and_no_name_breaks(
    site: Path, served: tuple[str, ThreadingHTTPServer], tmp_path: Path
) -> None:
    url, server = served
    pages = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.name != "404.html" and "search" not in p.parts
    )
    assert len(pages) > 20
    (site / "driver.html").write_text(
        DRIVER % {"pages": json.dumps(pages), "widths": json.dumps(WIDTHS), "height": HEIGHT}
    )
    chromium = subprocess.Popen(
        browser.command(tmp_path / "profile", "--remote-debugging-port=0",
                        f"--window-size={max(WIDTHS)},{HEIGHT}", f"{url}/driver.html"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(1800):  # at most 180 s
            if server.reports or chromium.poll() is not None:  # type: ignore[attr-defined]
                break
            threading.Event().wait(0.1)
    finally:
        chromium.terminate()
        chromium.wait(timeout=30)
    reports: list[dict[str, list[str]]] = server.reports  # type: ignore[attr-defined]
    assert reports, "the browser sent no report"
    problems = [f"{page}: {p}" for page, found in sorted(reports[0].items()) for p in found]
    assert not problems, "\n".join(problems[:60])


def test_screenshots_of_the_main_pages(site: Path, tmp_path: Path) -> None:
    for page, height in SHOT_PAGES.items():
        shot = browser.screenshot(
            (site / f"{page}.html").as_uri(), SCREENSHOTS / f"{page.replace('/', '-')}.png",
            tmp_path / "profile", 1280, height,
        )  # fmt: skip
        assert shot.stat().st_size > 20_000, f"{shot}: a blank page?"
