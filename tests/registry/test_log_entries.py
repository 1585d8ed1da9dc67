"""POST /v1/log/entries in-process, on both stores: sequencing, deduplication, ?wait=integrated
(the checkpoint, the tree head and the inclusion proof verify), and every refusal (one JSON error
with its code, nothing written). Real processes under load: tests/registry/test_write_path.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.registry.errors import RETRY_AFTER_S
from affidavit.registry.settings import Settings
from affidavit.registry.startup import open_state
from affidavit.registry.writer import MAX_ENTRY_BYTES, LogWriter
from affidavit.verify.crypto.checkpoint import NoteVerifier, verify_checkpoint
from affidavit.verify.crypto.keys import key_id_c2sp
from affidavit.verify.crypto.merkle import leaf_hash, verify_inclusion
from affidavit.verify.crypto.treehead import verify_sth

from tests.conftest import raises_code
from tests.registry.conftest import SpecClient, make_key, registry_key

ENTRIES = "/v1/log/entries"
OCTETS = {"Content-Type": "application/octet-stream"}


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    """This module runs on both stores."""
    return settings_on_each_store


@pytest.fixture
def writer(client: SpecClient, settings: Settings) -> str:
    return make_key(settings, "log:write")


def _post(client: SpecClient, data: bytes, key: str | None, **params: str) -> object:
    return client.request("POST", ENTRIES, raw=data, key=key, headers=OCTETS, params=params)


def test_an_entry_is_sequenced_and_the_same_entry_again_finds_its_first_index(
    client: SpecClient, writer: str
) -> None:
    first = _post(client, b"first entry", writer)
    assert first.status_code == 201  # type: ignore[attr-defined]
    body = first.json()  # type: ignore[attr-defined]
    assert body == {"index": 0, "leaf_hash": leaf_hash(b"first entry").hex()}  # RFC 9162 §2.1.1
    second = _post(client, b"second entry", writer).json()  # type: ignore[attr-defined]
    assert second["index"] == 1
    again = _post(client, b"first entry", writer)
    assert again.status_code == 200  # type: ignore[attr-defined]
    assert again.json() == body  # type: ignore[attr-defined]


def test_wait_integrated_answers_under_a_signed_checkpoint_with_its_proof(
    client: SpecClient, writer: str, settings: Settings
) -> None:
    _post(client, b"before", writer)
    answer = _post(client, b"the entry", writer, wait="integrated")
    assert answer.status_code == 201  # type: ignore[attr-defined]
    body = answer.json()  # type: ignore[attr-defined]
    key = registry_key().public_key
    origin = settings.log_id
    note = verify_checkpoint(
        body["checkpoint"], [NoteVerifier(origin, key_id_c2sp(origin, key.raw), key)]
    ).checkpoint
    proof = body["inclusion_proof"]
    assert proof["tree_size"] == note.tree_size >= body["index"] + 1
    verify_inclusion(  # RFC 9162 §2.1.3.2, against the checkpoint's root
        leaf_hash(b"the entry"),
        body["index"],
        proof["tree_size"],
        [bytes.fromhex(h) for h in proof["hashes"]],
        note.root_hash,
    )
    head = verify_sth(body["signed_tree_head"], key)
    assert (head.tree_size, head.root_hash) == (note.tree_size, note.root_hash.hex())
    served = client.get("/tlog/checkpoint").text  # type: ignore[attr-defined]
    assert int(served.split("\n")[1]) >= note.tree_size
    # An entry in the log already is answered at its first index, under a checkpoint too.
    again = _post(client, b"before", writer, wait="integrated")
    assert again.status_code == 200  # type: ignore[attr-defined]
    assert again.json()["index"] == 0  # type: ignore[attr-defined]
    assert again.json()["inclusion_proof"]["tree_size"] >= 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("no key", 401, "auth.missing"),
        ("bad key", 401, "auth.invalid"),
        ("wrong scope", 403, "auth.forbidden"),
        ("empty body", 400, "http.body_empty"),
        ("over 65,535 bytes", 413, "http.body_too_large"),
        ("bad wait", 400, "http.bad_parameter"),
    ],
)
def test_refusals_are_one_error_and_write_nothing(
    client: SpecClient, writer: str, settings: Settings, *, case: str, status: int, code: str
) -> None:
    key: str | None = writer
    data, params = b"refused entry", {}
    if case == "no key":
        key = None
    elif case == "bad key":
        key = "afk_0000000000000000_" + "A" * 43
    elif case == "wrong scope":
        key = make_key(settings, "facts:write")
    elif case == "empty body":
        data = b""
    elif case == "over 65,535 bytes":
        data = b"x" * (MAX_ENTRY_BYTES + 1)
    else:
        params = {"wait": "forever"}
    refused = _post(client, data, key, **params)
    assert refused.status_code == status  # type: ignore[attr-defined]
    assert refused.json()["code"] == code  # type: ignore[attr-defined]
    # nothing was written: the next entry is the first
    assert _post(client, b"next", writer).json()["index"] == 0  # type: ignore[attr-defined]


def test_the_largest_entry_is_accepted(client: SpecClient, writer: str) -> None:
    largest = b"y" * MAX_ENTRY_BYTES  # the largest a tlog-tiles entry bundle holds
    assert _post(client, largest, writer).status_code == 201  # type: ignore[attr-defined]


def test_a_full_queue_refuses_at_once_and_drops_nothing(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", contracts_dir=tmp_path / "none")
    state = open_state(settings, signing_key=derive_test_key("queue test"))  # TEST-ONLY key

    async def scenario() -> None:
        limits = replace(settings, log_queue=2, write_batch=8, integration_wait_s=5)
        assert state.readers is not None
        writer = LogWriter(
            db=state.db,
            readers=state.readers,
            tables=state.tables,
            log=state.log,
            clock=state.clock,
            settings=limits,
        )
        writer._wake = asyncio.Event()  # queued, the writer loop not started yet
        waiting = [asyncio.create_task(writer.submit(f"e{i}".encode())) for i in range(2)]
        await asyncio.sleep(0)
        with raises_code("registry.queue_full") as refused:
            await writer.submit(b"one too many")
        assert RETRY_AFTER_S[refused.value.code] == 1  # answered 503 with Retry-After
        await writer.start()
        writer._wake.set()  # type: ignore[union-attr]
        placed = await asyncio.gather(*waiting)
        assert [p.index for p in placed] == [0, 1]  # the queued ones were all written
        await writer.stop()

    try:
        asyncio.run(scenario())
        assert state.log.next_index == 2
    finally:
        state.close()
