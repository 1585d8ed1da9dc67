"""``GET /protocol/merkle/entries`` pages are bounded by bytes, not only by leaves (issue 31,
hole 8): large leaves make pages of fewer leaves, and following ``end`` from page to page still
reads every leaf once, in order."""

from __future__ import annotations

import base64

from affidavit.registry.routes.log import MAX_PAGE_BYTES
from affidavit.registry.settings import Settings

from tests.registry.conftest import SpecClient, make_key

LEAVES = 40
LEAF_BYTES = 60_000  # 40 of them: 2.4 MB of leaf data, 3.2 MB as base64


def test_a_page_of_large_leaves_is_bounded_by_bytes(client: SpecClient, settings: Settings) -> None:
    token = make_key(settings, "log:write")
    sent = [bytes([i]) * LEAF_BYTES for i in range(LEAVES)]
    for number, data in enumerate(sent):
        last = number == LEAVES - 1  # waited for: every leaf before it is in the tree too
        answer = client.request(
            "POST", "/v1/log/entries", raw=data, key=token,
            headers={"Content-Type": "application/octet-stream"},
            params={"wait": "integrated"} if last else None,
        )  # fmt: skip
        assert answer.status_code == 201, answer.text
    read: list[bytes] = []
    start = 0
    while start < LEAVES:
        page = client.get("/protocol/merkle/entries", params={"start": str(start)})
        assert page.status_code == 200, page.text
        # one page: at most MAX_PAGE_BYTES of leaf data (base64: 4/3 of it) and its JSON framing
        assert len(page.content) <= MAX_PAGE_BYTES * 4 // 3 + 64 * 1024, len(page.content)
        body = page.json()
        assert body["start"] == start
        assert start < body["end"] <= LEAVES
        assert [e["leaf_index"] for e in body["entries"]] == list(range(start, body["end"]))
        read += [base64.b64decode(e["leaf_data_b64"]) for e in body["entries"]]
        start = body["end"]
    assert read == sent
    # an asked-for end past the bound is cut to the bound too
    page = client.get("/protocol/merkle/entries", params={"start": "0", "end": str(LEAVES)})
    assert len(page.content) <= MAX_PAGE_BYTES * 4 // 3 + 64 * 1024
    # refusals are unchanged: an empty or reversed range, beyond the tree
    for params in ({"start": "5", "end": "5"}, {"start": str(LEAVES)}, {"start": "0", "end": "99"}):
        refused = client.get("/protocol/merkle/entries", params=params)
        assert refused.status_code == 400, (params, refused.text)
