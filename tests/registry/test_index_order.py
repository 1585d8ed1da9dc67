"""The lookup index is a function of the log (issue 31, hole 6): whatever the order of raw appends
(``POST /v1/log/entries``) and SCITT registrations (``POST /entries``), what the running registry
filed is exactly what ``registry reindex`` builds from the log. A property test over random
interleavings, on SQLite and PostgreSQL: a 32-byte raw leaf that is a statement's entry, appended
before, after or without its registration; other raw leaves; registrations of the same statement
again. Seeded: ``AFFIDAVIT_INDEX_SEED`` replays a run (the seed and case are printed with any
failure); the number of cases is tests/budget.py's."""

from __future__ import annotations

import hashlib
import os
import random
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from affidavit.attest.stores.store import Store
from affidavit.registry.app import create_app
from affidavit.registry.lookup import reindex
from affidavit.registry.scitt import ScittSettings
from affidavit.registry.settings import Settings
from affidavit.verify.scitt.statement import parse_statement

from tests.budget import budget
from tests.registry.conftest import Clock, make_key, registry_key
from tests.verify.scitt.support import ISSUER_COSE, statement

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SEED = int(os.environ.get("AFFIDAVIT_INDEX_SEED") or random.SystemRandom().randrange(2**32))
CASES = budget(4, 40)
OPS = budget(10, 30)
STATEMENTS = 4  # few, so the same statement and its entry meet often


@pytest.fixture
def settings(settings_on_each_store: Settings) -> Settings:
    return ScittSettings(issuers=(ISSUER_COSE,), wait_s=10).into(settings_on_each_store)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings, clock=Clock(), signing_key=registry_key())
    with TestClient(app, raise_server_exceptions=False) as raw:
        yield raw


def _statement(number: int) -> bytes:
    return statement(payload=b'{"n": %d}' % number, subject=f"pkg:order/{number}@1")


def _entry(signed: bytes) -> bytes:
    return parse_statement(signed).leaf_entry


def _rows(store: Store, size: int) -> set[tuple[Any, ...]]:
    with store.read() as db:
        found = db.execute(
            "SELECT hash, leaf_index, field, kind FROM registry_lookup WHERE leaf_index < $1",
            (size,),
        ).fetchall()
    return {(bytes(h), int(i), str(f), str(k)) for h, i, f, k in found}


def _op(client: TestClient, rng: random.Random, token: str) -> str:
    """One random write; its description (for the failure message)."""
    number = rng.randrange(STATEMENTS)
    signed = _statement(number)
    kind = rng.choice(["register", "entry", "entry", "raw"])
    if kind == "register":
        answer = client.post(
            "/entries", content=signed, headers={"Content-Type": "application/cose"}
        )
        assert answer.status_code == 201, answer.content
        return f"register statement {number}"
    data = _entry(signed) if kind == "entry" else rng.randbytes(rng.choice([31, 32, 33]))
    wait = rng.choice(["sequenced", "integrated"])
    answer = client.post(
        f"/v1/log/entries?wait={wait}", content=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"},
    )  # fmt: skip
    assert answer.status_code in (200, 201), answer.text
    what = f"statement {number}'s entry" if kind == "entry" else f"{len(data)} raw bytes"
    return f"append {what} (wait={wait})"


def test_the_index_is_what_reindex_builds_whatever_the_order(
    client: TestClient, settings: Settings
) -> None:
    token = make_key(settings, "log:write")
    rng = random.Random(SEED)
    done: list[str] = []
    for case in range(CASES):
        done += [f"-- case {case}"] + [_op(client, rng, token) for _ in range(OPS)]
        # a last entry waited for: everything before it is integrated; a lookup files it all
        closing = client.post(
            "/v1/log/entries?wait=integrated",
            content=f"case {case} {SEED}".encode(),
            headers={"Authorization": f"Bearer {token}"},
        )
        size = int(closing.json()["index"]) + 1
        subject = hashlib.sha256(b"pkg:order/0@1").hexdigest()
        before_lookup = client.get(f"/v1/lookup/{subject}").json()
        store = Store.at(settings.database)
        try:
            live = _rows(store, size)
            reindex(store)
            rebuilt = _rows(store, size)
        finally:
            store.close()
        where = f"seed {SEED} (AFFIDAVIT_INDEX_SEED), case {case}, ops:\n" + "\n".join(done)
        missing, extra = rebuilt - live, live - rebuilt
        assert not missing, f"{where}\nnot filed: {sorted((i, f) for _, i, f, _ in missing)}"
        assert not extra, f"{where}\nnot rebuilt: {sorted((i, f) for _, i, f, _ in extra)}"
        after_lookup = client.get(f"/v1/lookup/{subject}").json()
        assert before_lookup["entries"] == after_lookup["entries"], where
