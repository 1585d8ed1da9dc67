"""The explorer's index rules are the registry's (issue 31): registry/explorer/subjects.js, run
in headless Chromium, files each leaf under exactly what ``registry/index.py: subjects`` does.

The leaves: every kind written as Affidavit writes it (a contract record, a finality-event leaf,
facts, DSSE Statements, a statement hash, raw bytes), the edge cases of each rule (numbers Python
and JavaScript write differently, names outside ASCII and the BMP, keys in code-point order,
strict JSON's refusals, malformed facts and Statements), then seeded random byte changes of all
of them (the seed is printed on failure: ``EXPLORER_SUBJECTS_SEED=N`` replays it). A small HTTP
server on 127.0.0.1 serves the page's script, the leaves and a page that runs the script over
them (a secure context, for WebCrypto); Chromium writes what it found into the page.

Where the page cannot recompute a rule (a receipt, a COSE leaf) it must say so (``kind`` null),
never guess; everywhere else its kind and rows must equal Python's.
"""

from __future__ import annotations

import base64
import json
import os
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from affidavit.registry.index import subjects
from affidavit.verify.json.canonical import jcs, py_compact

from tests import browser
from tests.registry.helpers import contract, fact
from tests.registry.test_explorer_browser import VIRTUAL_TIME

pytestmark = [pytest.mark.browser, pytest.mark.network_local]
SEED = int(os.environ.get("EXPLORER_SUBJECTS_SEED") or random.SystemRandom().randrange(2**32))
MUTANTS = 200
_HARNESS = b"""<!doctype html><meta charset="utf-8"><title>subjects</title>
<script src="/subjects.js"></script><pre id="out">running</pre><script>
(async () => {
  const cases = await (await fetch("/cases.json")).json();
  const out = [];
  for (const b64 of cases) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    try {
      const found = await Subjects.filedUnder(bytes, false);
      out.push({kind: found.kind, rows: found.rows});
    } catch (e) {
      out.push({error: String(e)});
    }
  }
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script>"""
_RECORD = "affidavit.registry.adapter_entry.v1"
_STATEMENT = {
    "_type": "https://in-toto.io/Statement/v1",
    "subject": [
        {"name": "deal-1", "digest": {"sha256": "ab" * 32}},
        {"name": "", "digest": {"sha512": "cd" * 64}},
    ],
    "predicateType": "https://affidavit.dev/attestation/decision/v1",
    "predicate": {"decision": {"action": "auto_accept"}},
}


def _envelope(statement: Any, payload_type: str = "application/vnd.in-toto+json",
              *, url_safe: bool = False, signatures: Any = None) -> bytes:  # fmt: skip
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    return json.dumps({
        "payload": encode(json.dumps(statement).encode()).decode(),
        "payloadType": payload_type,
        "signatures": [{"keyid": "", "sig": base64.b64encode(b"s" * 64).decode()}]
        if signatures is None else signatures,
    }).encode()  # fmt: skip


def _written() -> list[bytes]:
    """Each kind as Affidavit writes it, and the edge cases of each rule."""
    declaration = contract()
    entry = {
        "entry_schema_version": "1.0.0", "adapter_id": declaration["adapter_id"],
        "adapter_version": "0.1.0", "contract_hash": declaration["contract_hash"],
        "status": "active", "published_at": "2026-01-01T00:00:00Z",
        "release_notes": "line\nnext \u00fc \u2028 <b>", "supersedes": None,
    }  # fmt: skip
    odd_fields = ["z", "\u00e4", "a", "\U0001f600", "\uffff"]
    leaves = [
        jcs({"record_type": _RECORD, "entry": entry, "declaration": declaration}),
        jcs({"record_type": _RECORD, "entry": {**entry, "x": 1.5, "supersedes": 3},
             "declaration": {**declaration, "output_fields": odd_fields, "adapter_id": "\u00fcn"}}),
        json.dumps({"record_type": _RECORD,
                    "entry": {**entry, "published_at": 1e16, "docs_url": 0.1,
                              "release_notes": 10**23},
                    "declaration": {**declaration, "validator_name": None,
                                    "validator_version": 1.0}}).encode(),
        jcs({"record_type": _RECORD, "entry": entry,
             "declaration": {**declaration, "output_fields": []}}),
        jcs({"record_type": _RECORD, "entry": entry,
             "declaration": {k: v for k, v in declaration.items() if k != "adapter_version"}}),
        jcs({"record_type": _RECORD, "entry": [], "declaration": declaration}),
    ]  # fmt: skip
    event = {"deal_id": "deal-1", "event_hash": "ab" * 32, "event_id": "e1",
             "event_type": "OUTCOME_RECORDED", "timestamp": "2026-01-01T00:00:00Z"}  # fmt: skip
    leaves += [
        py_compact(event),
        py_compact({**event, "deal_id": "d\u00e9\u007fal\U0001f600\n"}),
        jcs(event),
        py_compact({**event, "event_type": "STARTED"}),
        json.dumps(event, sort_keys=True).encode(),
    ]
    for document in (fact("urn:a"), fact("urn:b", derived_from=["cd" * 32, "ef" * 32]),
                     fact("urn:c", v="\u00fc\u2028\U0001f600")):  # fmt: skip
        leaves += [jcs(document), json.dumps(document).encode()]
    base = fact("urn:num")
    numbers = [1, 1.0, 0.1, 1e-7, 1e21, 1e22, -0.0, 123456789.123, 2**53 - 1, 2**53,
               9007199254740993, 5e-324, 1e16]  # fmt: skip
    variants: list[dict[str, Any]] = [{"value": {"type": "number", "v": v}} for v in numbers]
    variants += [{"confidence": c} for c in (0, 1, 1.0, 0.5, 1e-5, 2, True)]
    variants += [
        {"value": {"type": "text", "v": "x", "interpret_as": "instruction"}},
        {"value": {"type": "text", "v": "x", "interpret_as": "content"}},
        {"value": {"type": "null"}},
        {"value": {"type": "boolean", "v": 1}},
        {"extra": 2**60},
        {"extra": [1e17]},
        {"derived_from": [{"hash": "ab" * 32, "fact_id": "x"}, {"hash": "cd" * 32}]},
        {"derived_from": ["ab" * 32, "ab" * 32]},
        {"signature": {"alg": "Ed25519", "key_id": "k", "sig": "abc_-=="}},
        {"signature": {"alg": "Ed25519", "key_id": "k", "sig": "a b"}},
        {"entity": "no-scheme"},
        {"entity": "urn:x\u0085y"},
        {"ts": "2026-01-01T00:00:00.123456789+00:00"},
        {"id": ""},
    ]
    leaves += [json.dumps({**base, **variant}).encode() for variant in variants]
    leaves += [
        _envelope(_STATEMENT),
        _envelope(_STATEMENT, url_safe=True),
        _envelope(_STATEMENT, "text/plain"),
        _envelope(_STATEMENT, signatures=[]),
        _envelope({**_STATEMENT, "subject": [{"digest": {"sha256": "AB" * 32}}]}),
        _envelope(
            {**_STATEMENT, "subject": [{"digest": {"sha256": "ab" * 32, "x": "z"}, "name": 5}]}
        ),
        _envelope(
            {
                **_STATEMENT,
                "subject": [{"digest": {"sha256": "ab" * 32}, "name": f"n{i}"} for i in range(65)],
            }
        ),
        _envelope({**_STATEMENT, "predicateType": "not a uri"}),
        _envelope({**_STATEMENT, "predicate": []}),
    ]
    leaves += [
        b"{", b"[1,2]", b'{"a":1,"a":2}', b'{"a":"\\ud800"}', b'{"a":"\\ud83d\\ude00"}',
        b"\xef\xbb\xbf{}", b'{"a":NaN}', b'{"a":1e400}', b'{"a":01}', b'{"a":"\x01"}', b"{} ",
        b"{}x", b"[" * 200 + b"]" * 200, b"x" * 32, bytes(range(256)), b'{"a":"\xff"}',
        b'{"relation":"a:b","entity":"urn:x"}', b'{"payloadType":"x"}',
        b'{"record_type":"affidavit.registry.adapter_entry.v1"}', b'{"a": 1.0E+2, "b": -0}',
    ]  # fmt: skip
    return leaves


def _mutants(leaves: list[bytes], rng: random.Random) -> list[bytes]:
    out = []
    for _ in range(MUTANTS):
        data = bytearray(rng.choice(leaves))
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        out.append(bytes(data))
    return out


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:
        page = self.server.pages.get(self.path)
        if page is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", page[0])
        self.send_header("content-length", str(len(page[1])))
        self.end_headers()
        self.wfile.write(page[1])

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def harness() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    script = files("affidavit.registry").joinpath("explorer", "subjects.js").read_bytes()
    server.pages = {  # type: ignore[attr-defined]
        "/harness.html": ("text/html; charset=utf-8", _HARNESS),
        "/subjects.js": ("text/javascript; charset=utf-8", script),
    }
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _in_the_page(harness: Any, leaves: list[bytes], profile: Path) -> list[dict[str, Any]]:
    cases = [base64.b64encode(data).decode() for data in leaves]
    harness.pages["/cases.json"] = ("application/json", json.dumps(cases).encode())
    url = f"http://127.0.0.1:{harness.server_address[1]}/harness.html"
    html = browser.run(profile, VIRTUAL_TIME, "--dump-dom", url)
    text = html.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]
    found: list[dict[str, Any]] = json.loads(
        text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )
    return found


def _unsure_allowed(data: bytes) -> bool:
    """A leaf whose rule the page does not recompute: a COSE leaf, a receipt, a contract whose
    field list is not a list of strings."""
    return data[:1] == b"\xd2" or b"receipt_version" in data or b"record_type" in data


def test_the_page_files_every_leaf_as_the_registry_does(harness: Any, tmp_path: Path) -> None:
    written = _written()
    leaves = written + _mutants(written, random.Random(SEED))
    found = _in_the_page(harness, leaves, tmp_path / "profile")
    assert len(found) == len(leaves), f"seed {SEED}"
    unsure = 0
    for data, page in zip(leaves, found, strict=True):
        rows = subjects(data)
        expected = {"kind": rows[0].kind, "rows": sorted([s.field, s.digest] for s in rows)}
        assert "error" not in page, (f"seed {SEED}", data[:200], page)
        if page["kind"] is None:
            unsure += 1
            assert _unsure_allowed(data), (f"seed {SEED}", data[:200], page)
            continue
        got = {"kind": page["kind"], "rows": sorted({tuple(r) for r in page["rows"]})}
        expected["rows"] = [tuple(r) for r in expected["rows"]]
        assert got == expected, (f"seed {SEED}", data[:300])
    assert unsure <= len(leaves) // 20, f"seed {SEED}: {unsure} leaves not recomputed"
    # every kind Affidavit writes is recomputed (never "cannot check")
    assert all(page["kind"] is not None for page in found[: len(written)]), f"seed {SEED}"
