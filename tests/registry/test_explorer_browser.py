"""The explorer in headless Chromium, against a real registry process (issue 26).

The registry's log holds a contract (with HTML in a declaration field), a stamped bundle's leaf
(``affidavit stamp --log`` on the registry's database, as the demo does), the bundle's decision
Statement (DSSE, so the bundle hash is found) and two facts (also stored as public facts, for
the lineage picture). Chromium loads each page with ``--dump-dom`` once its scripts ran: the home
page, a search for a contract hash, a bundle hash and a fact hash; the same pages through a man in
the middle (tests/registry/tamper_proxy.py) serving one changed byte say "not verified"; a value
with HTML in it is shown as text. Screenshots (desktop and phone widths) are kept under
build/explorer-screenshots/.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from affidavit.registry.index import name_digest
from affidavit.verify.crypto.checkpoint import verifier_key_string
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.json.canonical import jcs

from tests import browser
from tests.processes import AFFIDAVIT, api_key, serving
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.tamper_proxy import tamper_proxy

pytestmark = [pytest.mark.browser, pytest.mark.network_local]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "explorer-screenshots"
ORIGIN = "affidavit-registry"
VIRTUAL_TIME = "--virtual-time-budget=15000"  # the page's scripts run to the end first
HTML_VALUE = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>"
POLICY = {
    "rules": [{"conditions": [{"field": "signal_a", "op": "==", "value": True}],
               "action": "auto_accept"}],
    "default": "require_review",
}  # fmt: skip


class Element(NamedTuple):
    tag: str
    attrs: dict[str, str]
    text: str


class _Elements(HTMLParser):
    """Every element of a page with its attributes and its whole text."""

    VOID = frozenset({"br", "img", "input", "meta", "link", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.done: list[Element] = []
        self.open: list[tuple[str, dict[str, str], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in self.VOID:
            self.done.append(Element(tag, values, ""))
        else:
            self.open.append((tag, values, []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, attrs, parts = self.open.pop()
            text = "".join(parts)
            self.done.append(Element(name, attrs, text))
            if self.open:
                self.open[-1][2].append(text)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)


class Page(NamedTuple):
    html: str
    elements: list[Element]

    def find(self, **attrs: str) -> list[Element]:
        return [e for e in self.elements if all(e.attrs.get(k) == v for k, v in attrs.items())]

    def one(self, **attrs: str) -> Element:
        found = self.find(**attrs)
        assert len(found) == 1, (attrs, self.html[-3000:])
        return found[0]

    def main(self) -> str:
        return self.one(id="app").text


def _profile(tmp_path: Path) -> Path:
    """A fresh profile: nothing pinned in storage."""
    return tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"


def load(url: str, tmp_path: Path) -> Page:
    """The page's DOM once its scripts ran."""
    html = browser.run(_profile(tmp_path), VIRTUAL_TIME, "--dump-dom", url)
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return Page(html, parser.done)


def screenshot(url: str, name: str, tmp_path: Path, width: int, height: int) -> Path:
    return browser.screenshot(
        url, SCREENSHOTS / f"{name}.png", _profile(tmp_path), width, height, VIRTUAL_TIME
    )


def _run(*args: str | Path) -> None:
    done = subprocess.run(
        [AFFIDAVIT, *map(str, args)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("explorer")
    with serving(work, "publish") as (process,):
        data = process.data_dir
        publisher, writer = process.token, api_key(data, "facts:write")
        declaration = contract(description=HTML_VALUE)
        headers = {"Authorization": f"Bearer {publisher}"}
        published = httpx.post(process.url + "/protocol/adapter-contracts", json=declaration,
                               headers=headers, timeout=10)  # fmt: skip
        assert published.status_code == 201, published.text
        # a bundle stamped into the registry's own log by another process (demo/50-registry.sh)
        (work / "contract.json").write_text(json.dumps(declaration))
        (work / "output.json").write_text('{"signal_a": true, "signal_b": false}')
        (work / "policy.json").write_text(json.dumps(POLICY))
        _run("stamp", "--contract", work / "contract.json", "--adapter-output",
             work / "output.json", "--policy", work / "policy.json", "--deal-id", "deal-explorer",
             "--log", data / "registry.db", "--key", data / "keys" / "registry-1.key",
             "--out", work / "bundle.json", "--force")  # fmt: skip
        bundle = json.loads((work / "bundle.json").read_text())
        _run("export", "intoto", work / "bundle.json", "--key", data / "keys" / "registry-1.key",
             "--out", work / "decision.dsse.json")  # fmt: skip
        parent = fact("urn:explorer:evidence", scope="public")
        child = fact("urn:explorer:decision", scope="public", derived_from=[fact_hash(parent)],
                     v=HTML_VALUE)  # fmt: skip
        for name, document in (("parent", parent), ("child", child)):
            (work / f"{name}.fact.json").write_bytes(jcs(document))
        _run("log", "append", data / "registry.db", work / "decision.dsse.json",
             work / "parent.fact.json", work / "child.fact.json")  # fmt: skip
        stored = httpx.put(process.url + "/v1/facts", json={"facts": [parent, child]},
                           headers={"Authorization": f"Bearer {writer}"}, timeout=10)  # fmt: skip
        assert stored.status_code == 201, stored.text
        served = httpx.get(process.url + "/protocol/merkle/public-key", timeout=10).json()
        vkey = verifier_key_string(ORIGIN, Ed25519PublicKey.from_b64(served["public_key_base64"]))
        yield {
            "url": process.url,
            "vkey": vkey,
            "contract_hash": declaration["contract_hash"],
            "bundle_hash": bundle["bundle_hash"],
            "deal_id": bundle["deal_id"],
            "leaf_hash": bundle["merkle_inclusion"]["leaf_hash"],
            "fact": fact_hash(child),
            "parent": fact_hash(parent),
        }


def _url(base: str, query: str, vkey: str | None = None) -> str:
    params = {"q": query, **({"vkey": vkey} if vkey else {})}
    return f"{base}/search?{httpx.QueryParams(params)}"


def test_home_shows_the_log_its_checkpoint_recent_entries_and_the_catalogue(
    registry: dict[str, Any], tmp_path: Path
) -> None:
    pinned = load(f"{registry['url']}/?{httpx.QueryParams({'vkey': registry['vkey']})}", tmp_path)
    log = pinned.one(id="log").text
    assert "origin" + ORIGIN in log
    assert "size5 entries" in log  # contract, bundle leaf, decision Statement, two facts
    assert "checkpoint signature verified under affidavit-registry (pinned in the link" in log
    assert "no witness has cosigned this checkpoint" in log
    recent = pinned.one(id="recent").text
    for kind in ("contract", "bundle", "dsse", "fact"):
        assert kind in recent
    assert "deal-explorer: OUTCOME_RECORDED" in recent
    assert "acme.eval_suite.v0@0.1.0" in pinned.one(id="catalogue").text
    assert "affidavit.examples.langgraph.v0@0.1.0" in pinned.one(id="catalogue").text
    unpinned = load(registry["url"] + "/", tmp_path)
    assert "NOT PINNED, so not verified" in unpinned.one(id="log").text
    assert "not pinned" in unpinned.one(id="pin-status").text
    screenshot(f"{registry['url']}/?{httpx.QueryParams({'vkey': registry['vkey']})}", "home",
               tmp_path, 1280, 1500)  # fmt: skip
    screenshot(f"{registry['url']}/", "home-phone-unpinned", tmp_path, 390, 1600)


def _entries(page: Page) -> list[Element]:
    return [e for e in page.elements if e.tag == "article"]


def test_a_contract_hash_is_found_decoded_and_verified(
    registry: dict[str, Any], tmp_path: Path
) -> None:
    url = _url(registry["url"], registry["contract_hash"], registry["vkey"])
    page = load(url, tmp_path)
    assert page.one(id="verdict").attrs["data-verdict"] == "verified"
    (entry,) = _entries(page)
    assert (entry.attrs["data-verdict"], entry.attrs["data-index"]) == ("verified", "0")
    for shown in (
        "contractacme.eval_suite.v0@0.1.0",
        "statusactive",
        "channelthird_party",
        "contract_hash" + registry["contract_hash"],
        "matchedcontract_hash",
    ):
        assert shown in entry.text, shown
    screenshot(url, "search-contract", tmp_path, 1280, 1400)
    screenshot(url, "search-contract-phone", tmp_path, 390, 2200)


def test_a_bundle_hash_finds_its_decision_and_the_deal_finds_its_leaf(
    registry: dict[str, Any], tmp_path: Path
) -> None:
    url = _url(registry["url"], registry["bundle_hash"], registry["vkey"])
    page = load(url, tmp_path)
    assert page.one(id="verdict").attrs["data-verdict"] == "verified"
    (entry,) = _entries(page)
    assert "dsse" in entry.text
    assert "matchedsubject_sha256" in entry.text
    assert "predicateTypehttps://affidavit.dev/attestation/decision/v1" in entry.text
    assert "decisionauto_accept" in entry.text
    screenshot(url, "search-bundle", tmp_path, 1280, 1300)
    # the deal id is a name: the page looks up the SHA-256 of its text
    by_deal = load(_url(registry["url"], registry["deal_id"], registry["vkey"]), tmp_path)
    assert name_digest(registry["deal_id"]) in by_deal.one(id="app").text
    kinds = sorted(e.text.split("entry #")[1].split(" ")[0] for e in _entries(by_deal))
    assert len(kinds) == 2
    assert by_deal.one(id="verdict").attrs["data-verdict"] == "verified"
    assert "decision eventOUTCOME_RECORDED" in by_deal.main()
    leaf = load(_url(registry["url"], registry["leaf_hash"], registry["vkey"]), tmp_path)
    assert "matchedleaf_hash" in leaf.main()
    assert leaf.one(id="verdict").attrs["data-verdict"] == "verified"


def test_a_fact_hash_shows_the_fact_its_lineage_and_its_neighbours(
    registry: dict[str, Any], tmp_path: Path
) -> None:
    url = _url(registry["url"], registry["fact"], registry["vkey"])
    page = load(url, tmp_path)
    assert page.one(id="verdict").attrs["data-verdict"] == "verified"
    (entry,) = _entries(page)
    assert "relationmemory:role" in entry.text
    assert "derived from" + registry["parent"] in entry.text
    links = {e.attrs["href"] for e in page.elements if e.tag == "a"}
    assert f"/search?q={registry['parent']}" in links  # its parent, one click away
    pictures = [e for e in page.elements if e.tag == "img"]  # loaded: else replaced by a note
    assert [e.attrs["src"] for e in pictures] == [f"/explorer/lineage/{registry['fact']}"]
    # the parent's page lists the fact derived from it (the lineage neighbour in the log)
    parent = load(_url(registry["url"], registry["parent"], registry["vkey"]), tmp_path)
    matched = sorted(e.text.split("matched")[1].split(" =")[0] for e in _entries(parent))
    assert matched == ["data_sha256, fact_hash", "derived_from"]
    screenshot(url, "search-fact", tmp_path, 1280, 1700)


def test_a_value_with_html_in_it_is_shown_as_text(registry: dict[str, Any], tmp_path: Path) -> None:
    for query in (registry["contract_hash"], registry["fact"]):
        page = load(_url(registry["url"], query, registry["vkey"]), tmp_path)
        assert HTML_VALUE in page.main()  # the characters, as text
        assert "<b>bold</b>" not in page.html  # never parsed as markup
        assert not [e for e in page.elements if e.tag == "b"]
        assert [e.attrs.get("src") for e in page.elements if e.tag == "img"] in (
            [],
            [f"/explorer/lineage/{registry['fact']}"],
        )
        titles = [e.text for e in page.elements if e.tag == "title"]
        assert titles == ["Affidavit log explorer"]  # the onerror handler never ran


def _tamper_proof(path: str, body: bytes) -> bytes:
    if not path.startswith("/v1/lookup/"):
        return body
    document = json.loads(body)
    hashes = document["entries"][0]["inclusion_proof"]["hashes"]
    hashes[0] = ("0" if hashes[0][0] != "0" else "1") + hashes[0][1:]
    return json.dumps(document).encode()


def _tamper_leaf(path: str, body: bytes) -> bytes:
    if not path.startswith("/protocol/merkle/leaf/"):
        return body
    return body.replace(b'"leaf_data_b64":"ey', b'"leaf_data_b64":"eX', 1)


def _tamper_checkpoint(path: str, body: bytes) -> bytes:
    if not path.startswith("/v1/lookup/"):
        return body
    document = json.loads(body)
    lines = document["checkpoint"].split("\n")
    lines[1] = str(int(lines[1]) + 1)  # a size the log never signed
    document["checkpoint"] = "\n".join(lines)
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (_tamper_proof, "its inclusion proof leads to another root"),
        (_tamper_leaf, "its bytes do not hash to its leaf hash"),
        (_tamper_checkpoint, "the checkpoint is not verified"),
    ],
    ids=["proof", "leaf", "checkpoint"],
)
def test_a_tampered_answer_is_not_verified(
    registry: dict[str, Any], tmp_path: Path, tamper: Any, why: str
) -> None:
    with tamper_proxy(registry["url"]) as proxy:
        url = _url(proxy.url, registry["contract_hash"], registry["vkey"])  # type: ignore[attr-defined]
        assert load(url, tmp_path).one(id="verdict").attrs["data-verdict"] == "verified"
        proxy.tamper = tamper  # type: ignore[attr-defined]
        page = load(url, tmp_path)
        if tamper is _tamper_proof:
            screenshot(url, "search-tampered-proof", tmp_path, 1280, 1200)
    assert page.one(id="verdict").attrs["data-verdict"] == "not-verified"
    (entry,) = _entries(page)
    assert entry.attrs["data-verdict"] == "not-verified"
    assert "not verified: " + why in entry.text
    assert page.one(id="verdict").text.startswith("not verified")
