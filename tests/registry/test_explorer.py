"""The explorer's routes and files, without a browser (tests/registry/test_explorer_browser.py
drives it in Chromium): what is served, with which headers, and what the files may not hold."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from affidavit.cli.render.lineage import render_svg
from affidavit.registry.app import create_app
from affidavit.registry.routes.explorer import CSP
from affidavit.registry.settings import Settings
from affidavit.verify.dsse.statement import STATEMENT_V1

from tests.registry.conftest import Clock, SpecClient, make_key, registry_key
from tests.registry.helpers import fact, fact_hash
from tests.registry.openapi_check import Coverage

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

FOLDER = files("affidavit.registry").joinpath("explorer")


def _text(name: str) -> str:
    return FOLDER.joinpath(name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "media"),
    [
        ("/", "text/html"),
        ("/search", "text/html"),
        ("/explorer/explorer.js", "text/javascript"),
        ("/explorer/subjects.js", "text/javascript"),
        ("/explorer/explorer.css", "text/css"),
    ],
)
def test_every_file_is_served_with_a_strict_policy(
    client: SpecClient, path: str, media: str
) -> None:
    response = client.get(path, params={"q": "anything"} if path == "/search" else None)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(media)
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_the_policy_allows_this_origin_only_and_no_inline_code() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src", "img-src", "connect-src", "form-action"):
        assert directives[name] == "'self'", name
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in CSP


def test_no_other_file_of_the_folder_is_served(client: SpecClient) -> None:
    for name in ("index.html", "__init__.py", "..%2Fdb.py", "explorer.js.map"):
        response = client.get(f"/explorer/{name}")
        assert response.status_code == 404, name
        assert response.json()["code"] in ("registry.not_found", "http.not_found")


def test_the_page_holds_no_inline_script_style_or_handler_and_no_third_party_resource() -> None:
    page = _text("index.html")
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S)
    assert scripts == ["", ""]  # two scripts, each from a file: the index rules, then the page's
    assert re.findall(r"<script\b[^>]*\bsrc=\"([^\"]+)\"", page) == [
        "/explorer/subjects.js",
        "/explorer/explorer.js",
    ]
    assert not re.search(r"\son[a-z]+\s*=", page)
    assert not re.search(r"\sstyle\s*=|<style\b", page)
    for name in ("index.html", "explorer.js", "subjects.js", "explorer.css"):
        # the in-toto Statement type is an identifier the page compares, never fetched
        text = _text(name).replace(f'"{STATEMENT_V1}"', '""')
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text), name
        assert "@import" not in _text(name)


def test_the_script_never_writes_html_and_never_evaluates_text() -> None:
    script = _text("explorer.js") + _text("subjects.js")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "setTimeout(\"", "javascript:"):  # fmt: skip
        assert sink not in script, sink
    # every link goes through safeHref (only this registry's own paths); no handler attribute
    assert 'node.setAttribute("href", safeHref(value))' in script
    assert not re.search(r"\bon[a-z]+\s*:", script.split("function el(")[1].split("\n}\n")[0])
    assert not re.search(r"[{,]\s*on[a-z]+:", script)


def _picture_client(tmp_path: Path) -> Iterator[SpecClient]:
    settings = Settings(data_dir=tmp_path / "data", contracts_dir=tmp_path / "c", port=8080)
    app = create_app(
        settings, clock=Clock(), signing_key=registry_key(), lineage_picture=render_svg
    )
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield SpecClient(raw, Coverage())


@pytest.fixture
def pictures(tmp_path: Path) -> Iterator[SpecClient]:
    yield from _picture_client(tmp_path)


def test_a_public_fact_has_its_lineage_picture_a_hidden_one_none(
    pictures: SpecClient, tmp_path: Path
) -> None:
    token = make_key(tmp_path / "data", "facts:write")
    parent = fact("urn:picture:parent", scope="public")
    child = fact("urn:picture:child", scope="public", derived_from=[fact_hash(parent)])
    hidden = fact("urn:picture:hidden", scope="team")
    stored = pictures.request(
        "PUT", "/v1/facts", json_body={"facts": [parent, child, hidden]}, key=token
    )
    assert stored.status_code == 201
    drawn = pictures.get(f"/explorer/lineage/{fact_hash(child)}")
    assert drawn.status_code == 200
    assert drawn.headers["content-type"] == "image/svg+xml"
    assert drawn.headers["content-security-policy"].startswith("default-src 'none'")
    assert fact_hash(parent)[:12] in drawn.text
    assert drawn.text.startswith("<svg ")
    absent, unreadable = (
        pictures.get(f"/explorer/lineage/{h}") for h in ("0" * 64, fact_hash(hidden))
    )
    assert absent.status_code == unreadable.status_code == 404
    assert absent.json()["message"].replace("0" * 64, "H") == unreadable.json()["message"].replace(
        fact_hash(hidden), "H"
    )  # hidden and absent alike


def test_without_a_renderer_there_is_no_picture(client: SpecClient) -> None:
    response = client.get("/explorer/lineage/" + "0" * 64)
    assert (response.status_code, response.json()["code"]) == (404, "registry.not_found")
