"""The browser is a verifier like the CLI (issue 31): the explorer in headless Chromium and
``affidavit lookup`` are fed the same answers, honest and tampered, and must give the same
verdict for each.

A real registry process holds a contract (leaf 0), a finality-event leaf of ``deal-1`` and a fact
(appended by ``affidavit log append`` on its database, as another process would) and a leaf
appended by its hash only. A man in the
middle (tests/registry/tamper_proxy.py) forwards every request to it and changes one thing of
what it answers: an entry relabelled as the answer for another hash, another kind or other
fields, a leaf's bytes, a proof hash, a proof one hash too short or too long, a ``next_cursor``
that smuggles a key into the next page's link, a checkpoint signed by another key named like the
log. Chromium loads ``/search?q=HASH&vkey=<the log's key>`` through it (the page's verdict is
``#verdict[data-verdict]``); the CLI runs ``affidavit lookup PROXY HASH --vkey ... --json`` as a
process (its verdict from its exit code and code). Both must say the case's verdict, and the CLI
the case's code.

Then the pin is the user's: a key in the link that differs from the key pinned in the browser is
shown as a conflict and not used, and a forged checkpoint under the link's key is not verified.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.store import Store
from affidavit.registry.index import name_digest
from affidavit.verify.crypto.checkpoint import (
    checkpoint_body,
    format_note,
    note_signature_line,
    parse_note,
    verifier_key_string,
)
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.merkle import leaf_hash
from affidavit.verify.json.canonical import jcs, py_compact

from tests import browser
from tests.processes import AFFIDAVIT, serving
from tests.registry.helpers import contract, fact, fact_hash
from tests.registry.tamper_proxy import tamper_proxy, untouched
from tests.registry.test_explorer_browser import VIRTUAL_TIME, _Elements, _url, load

pytestmark = [pytest.mark.browser, pytest.mark.network_local]
ORIGIN = "affidavit-registry"
DEAL_LEAF = {
    "deal_id": "deal-1",
    "event_hash": "ab" * 32,
    "event_id": "evt_1",
    "event_type": "OUTCOME_RECORDED",
    "timestamp": "2026-01-01T00:00:00Z",
}
FORGER = derive_test_key("a forger's TEST-ONLY key, named like the log")
FORGED_VKEY = verifier_key_string(ORIGIN, FORGER.public_key)
PIN_PAGE = "/__test_pin__"
HASH_ONLY = leaf_hash(b"appended by its hash only")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("differential")
    with serving(work, "publish") as (process,):
        declaration = contract()
        published = httpx.post(process.url + "/protocol/adapter-contracts", json=declaration,
                               headers={"Authorization": f"Bearer {process.token}"},
                               timeout=10)  # fmt: skip
        assert published.status_code == 201, published.text
        evidence = fact("urn:differential:evidence")
        (work / "deal.leaf").write_bytes(py_compact(DEAL_LEAF))
        (work / "evidence.fact.json").write_bytes(jcs(evidence))
        done = subprocess.run(
            [AFFIDAVIT, "log", "append", str(process.data_dir / "registry.db"),
             str(work / "deal.leaf"), str(work / "evidence.fact.json")],
            capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        store = Store.at(process.data_dir / "registry.db")  # another process's connection
        try:
            TransparencyLog.open(store).append_leaf_hashes([HASH_ONLY])
        finally:
            store.close()
        served = httpx.get(process.url + "/protocol/merkle/public-key", timeout=10).json()
        vkey = verifier_key_string(ORIGIN, Ed25519PublicKey.from_b64(served["public_key_base64"]))
        yield {
            "url": process.url,
            "vkey": vkey,
            "contract_hash": declaration["contract_hash"],
            "deal": name_digest("deal-1"),
            "fact": fact_hash(evidence),
            "hash_only": HASH_ONLY.hex(),
        }


@pytest.fixture(scope="module")
def proxy(registry: dict[str, Any]) -> Iterator[Any]:
    with tamper_proxy(registry["url"]) as server:
        yield server


# -- the answers ------------------------------------------------------------------------------

Tamper = Callable[[str, bytes], bytes]


def _lookup(change: Callable[[dict[str, Any]], None]) -> Tamper:
    def tamper(path: str, body: bytes) -> bytes:
        if not path.startswith("/v1/lookup/"):
            return body
        document = json.loads(body)
        change(document)
        return json.dumps(document).encode()

    return tamper


def _first_proof(document: dict[str, Any]) -> list[str]:
    hashes: list[str] = document["entries"][0]["inclusion_proof"]["hashes"]
    return hashes


def _flip(hashes: list[str]) -> None:
    hashes[0] = ("0" if hashes[0][0] != "0" else "1") + hashes[0][1:]


def _relabelled(registry: dict[str, Any]) -> Tamper:
    """The honest answer for deal-1, served as the answer for deal-99."""
    wanted, served = name_digest("deal-99"), registry["deal"]

    def tamper(path: str, body: bytes) -> bytes:
        if not path.startswith("/v1/lookup/" + wanted):
            return body
        honest = httpx.get(registry["url"] + path.replace(wanted, served), timeout=10).json()
        honest["hash"] = wanted
        return json.dumps(honest).encode()

    return tamper


def _other_leaf(path: str, body: bytes) -> bytes:
    if not path.startswith("/protocol/merkle/leaf/"):
        return body
    document = json.loads(body)
    data = base64.b64decode(document["leaf_data_b64"]).replace(b"deal-1", b"deal-2")
    document["leaf_data_b64"] = base64.b64encode(data).decode()
    return json.dumps(document).encode()


def _forged(note: str) -> str:
    """``note``'s checkpoint (same origin, size and root) signed by the forger's key, which is
    named like the log."""
    text = parse_note(note).text
    lines = text.split("\n")
    body = checkpoint_body(lines[0], int(lines[1]), base64.b64decode(lines[2]))
    line = note_signature_line(
        ORIGIN, FORGER.public_key.key_id_c2sp(ORIGIN), FORGER.sign(body.encode())
    )
    return format_note(body, [line])


def _forged_checkpoint(document: dict[str, Any]) -> None:
    document["checkpoint"] = _forged(document["checkpoint"])


class Case(NamedTuple):
    query: str  # a key of the registry fixture, or a name
    tamper: Callable[[dict[str, Any]], Tamper] | None
    verdict: str  # verified, none, not-verified or error, for both
    code: str | None  # the CLI's code


def _always(tamper: Tamper) -> Callable[[dict[str, Any]], Tamper]:
    return lambda registry: tamper


CASES = {
    "honest-contract": Case("contract_hash", None, "verified", None),
    "honest-deal-name": Case("deal", None, "verified", None),
    "honest-fact": Case("fact", None, "verified", None),
    "honest-hash-only": Case("hash_only", None, "verified", None),
    "honest-unknown": Case("0" * 64, None, "none", "lookup.not_found"),
    "relabelled-hash": Case("deal-99", _relabelled, "not-verified", "lookup.not_about"),
    "relabelled-kind": Case("contract_hash", _always(_lookup(
        lambda d: d["entries"][0].__setitem__("kind", "fact"))), "not-verified",
        "lookup.not_about"),
    "relabelled-fields": Case("contract_hash", _always(_lookup(
        lambda d: d["entries"][0].__setitem__("matched", ["entry_hash"]))), "not-verified",
        "lookup.not_about"),
    "wrong-leaf": Case("deal", _always(_other_leaf), "not-verified", "lookup.leaf_mismatch"),
    "wrong-proof": Case("deal", _always(_lookup(lambda d: _flip(_first_proof(d)))),
                        "not-verified", "merkle.root_mismatch"),
    "proof-too-short": Case("deal", _always(_lookup(lambda d: _first_proof(d).pop())),
                            "not-verified", "merkle.bad_proof_length"),
    "proof-too-long": Case("deal", _always(_lookup(
        lambda d: _first_proof(d).append("00" * 32))), "not-verified",
        "merkle.bad_proof_length"),
    "cursor-injection": Case("deal", _always(_lookup(
        lambda d: d.__setitem__("next_cursor", "1&vkey=" + FORGED_VKEY))), "error",
        "registry.bad_response"),
    "forged-checkpoint": Case("deal", _always(_lookup(_forged_checkpoint)), "not-verified",
                              "checkpoint.no_trusted_signature"),
}  # fmt: skip


def _digest(registry: dict[str, Any], query: str) -> str:
    if query in registry:
        return str(registry[query])
    return query if len(query) == 64 else name_digest(query)


def _cli_verdict(url: str, digest: str, vkey: str) -> tuple[str, str | None]:
    """``affidavit lookup`` as a process: (verdict, code)."""
    done = subprocess.run(
        [AFFIDAVIT, "lookup", url, digest, "--vkey", vkey, "--json"],
        capture_output=True, timeout=60, check=False, text=True,
    )  # fmt: skip
    if done.returncode == 2:
        assert done.stdout == "", done.stdout
        assert done.stderr.count("\n") == 1, done.stderr
        return "error", done.stderr.split(": ")[1]
    document = json.loads(done.stdout)
    if done.returncode == 0:
        return "verified", document.get("code")
    assert done.returncode == 1, done.stderr
    code = document.get("code")
    return ("none" if code == "lookup.not_found" else "not-verified"), code


@pytest.mark.parametrize("name", list(CASES))
def test_the_browser_and_the_cli_give_the_same_verdict(
    registry: dict[str, Any], proxy: Any, tmp_path: Path, name: str
) -> None:
    case = CASES[name]
    proxy.tamper = case.tamper(registry) if case.tamper else untouched
    try:
        digest = _digest(registry, case.query)
        page = load(_url(proxy.url, digest, registry["vkey"]), tmp_path)
        in_browser = page.one(id="verdict").attrs["data-verdict"]
        by_cli = _cli_verdict(proxy.url, digest, registry["vkey"])
    finally:
        proxy.tamper = untouched
    assert (in_browser, by_cli) == (case.verdict, (case.verdict, case.code)), page.main()
    hrefs = [e.attrs.get("href", "") for e in page.elements if e.tag == "a"]
    assert not [h for h in hrefs if "vkey" in h and FORGED_VKEY.split("+")[2][:8] in h], hrefs


# -- the pin is the user's --------------------------------------------------------------------

_PIN_SCRIPT = """<!doctype html><title>pin</title><p id="done">no</p><script>
localStorage.setItem("affidavit.explorer.vkey", %s);
document.getElementById("done").textContent = localStorage.getItem("affidavit.explorer.vkey");
</script>"""


def test_a_key_in_the_link_that_differs_from_the_pin_is_a_conflict_and_not_used(
    registry: dict[str, Any], proxy: Any, tmp_path: Path
) -> None:
    """The reader pinned the log's key in this browser; a link names the forger's key, and the
    answers carry a checkpoint the forger signed (same size and root): not verified, the
    conflict shown, the pin kept."""
    profile = tmp_path / "profile"
    proxy.pages[PIN_PAGE] = ("text/html", (_PIN_SCRIPT % json.dumps(registry["vkey"])).encode())
    pinned = browser.run(profile, VIRTUAL_TIME, "--dump-dom", proxy.url + PIN_PAGE)
    assert registry["vkey"] in pinned
    proxy.tamper = _lookup(_forged_checkpoint)
    try:
        html = browser.run(
            profile, VIRTUAL_TIME, "--dump-dom", _url(proxy.url, registry["deal"], FORGED_VKEY)
        )
    finally:
        proxy.tamper = untouched
    parser = _Elements()
    parser.feed(html)
    parser.close()
    by_id = {e.attrs["id"]: e for e in parser.done if "id" in e.attrs}
    assert by_id["verdict"].attrs["data-verdict"] == "not-verified", by_id["app"].text
    status = by_id["pin-status"].text
    assert f"pinned: {ORIGIN} (from this browser)" in status, status
    assert "conflict" in status, status
    assert "NOT used" in status, status
    assert "checkpoint NOT verified: no signature by the key" in by_id["app"].text
