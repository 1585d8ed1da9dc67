"""The entry limit (65,535 bytes, docs/adr/0018: tlog-tiles entry bundles use uint16 lengths) is
enforced where entries are made, once, for every job that appends a leaf (issue 31, hole 7): a
publication whose signed entry would pass it is refused with one JSON error and writes nothing,
so no entry bundle ever holds an entry a mirror cannot read."""

from __future__ import annotations

import pytest
from affidavit.registry.writer import MAX_ENTRY_BYTES
from affidavit.verify.tlog.layout import parse_bundle

from tests.registry.conftest import SpecClient
from tests.registry.helpers import contract

CONTRACTS = "/protocol/adapter-contracts"


def _size(client: SpecClient) -> int:
    return int(client.get("/protocol/merkle/latest").json()["tree_size"])


def test_a_publication_past_the_entry_limit_is_refused_and_the_tiles_stay_whole(
    client: SpecClient, keys: dict[str, str]
) -> None:
    small = client.request(
        "POST", CONTRACTS, json_body=contract("acme.small.v0"), key=keys["publish"]
    )
    assert small.status_code == 201, small.text
    before = _size(client)
    big = contract("acme.big.v0", description="d" * 80_000)  # the entry carries the declaration
    refused = client.request("POST", CONTRACTS, json_body=big, key=keys["publish"])
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["code"] == "registry.entry_too_large"
    assert body["details"]["limit"] == MAX_ENTRY_BYTES
    assert body["details"]["entry_bytes"] > MAX_ENTRY_BYTES
    # nothing was written: no leaf, no contract, and every entry bundle is still served
    assert _size(client) == before
    assert client.get(f"{CONTRACTS}/acme.big.v0").status_code == 404
    bundle = client.get(f"/tlog/tile/entries/000.p/{before}")
    assert bundle.status_code == 200
    assert len(parse_bundle(bundle.content, before)) == before
    # and the writer that came next is not held up by it
    after = client.request(
        "POST", CONTRACTS, json_body=contract("acme.after.v0"), key=keys["publish"]
    )
    assert after.status_code == 201, after.text


@pytest.mark.parametrize("size", [MAX_ENTRY_BYTES, MAX_ENTRY_BYTES + 1])
def test_a_raw_entry_at_and_past_the_limit(client: SpecClient, size: int, settings: object) -> None:
    from tests.registry.conftest import make_key

    token = make_key(settings, "log:write")  # type: ignore[arg-type]
    answer = client.request(
        "POST", "/v1/log/entries", raw=b"e" * size, key=token,
        headers={"Content-Type": "application/octet-stream"},
    )  # fmt: skip
    if size == MAX_ENTRY_BYTES:
        assert answer.status_code == 201, answer.text
    else:
        assert (answer.status_code, answer.json()["code"]) == (413, "http.body_too_large")
