"""The write path with real processes on 127.0.0.1 (issue 24): SIGKILL of any instance under
load loses no acknowledged entry and every checkpoint after the restart extends every earlier one
(SQLite, and two instances on a real PostgreSQL cluster, one killed in the middle of an
integration); two instances never integrate at once (one paused by SIGSTOP inside an
integration: the other waits for its lease, then integrates the same entries once); bad input
(slow, empty, oversize and chunked bodies, missing and wrong-scope keys) is one JSON error with
its code and writes nothing; a full queue answers 503 with Retry-After and drops nothing it
acknowledged. Bounded: a few seconds each (tests/budget.py gives CI more)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from affidavit.verify.crypto.checkpoint import NoteVerifier, verify_checkpoint
from affidavit.verify.crypto.keys import Ed25519PublicKey, key_id_c2sp
from affidavit.verify.crypto.merkle import leaf_hash, verify_consistency

from tests.pg import LockWatch, PgCluster, database_name
from tests.processes import RegistryProcess, api_key, serving, stop_inside, until
from tests.registry.rawhttp import Connection
from tests.workers import Worker, gather_all

pytestmark = pytest.mark.network_local

ENTRIES = "/v1/log/entries"
LOG_ID = "affidavit-registry"
WRITERS = 16


@dataclass
class Acks:
    """What writers saw acknowledged (index -> entry bytes), checkpoints served, and faults."""

    entries: dict[int, bytes] = field(default_factory=dict)
    checkpoints: list[str] = field(default_factory=list)
    refusals: dict[int, int] = field(default_factory=dict)  # status -> count (5xx, 4xx)
    done: bool = False


async def _writer(port: int, token: str, n: int, acks: Acks, wait_every: int = 5) -> None:
    """Append distinct entries until ``acks.done``; every ``wait_every``-th waits for its
    checkpoint. Transport errors end it (the instance was killed)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"}
    try:
        conn = await Connection.open(port)
    except OSError:
        return
    i = 0
    try:
        while not acks.done:
            i += 1
            data = f"writer {n} entry {i} {random.random()}".encode().ljust(256, b".")
            path = ENTRIES + ("?wait=integrated" if i % wait_every == 0 else "")
            status, body = await _raw_post(conn, path, data, headers)
            if status in (200, 201):
                index = int(json.loads(body)["index"])
                assert acks.entries.setdefault(index, data) == data, f"index {index} twice"
                if "checkpoint" in body.decode():
                    acks.checkpoints.append(json.loads(body)["checkpoint"])
            else:
                acks.refusals[status] = acks.refusals.get(status, 0) + 1
                await asyncio.sleep(0.05)
    except (OSError, asyncio.IncompleteReadError, ValueError):
        return
    finally:
        await conn.close()


async def _raw_post(
    conn: Connection, path: str, data: bytes, headers: dict[str, str]
) -> tuple[int, bytes]:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(data)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    conn.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    head = await conn.reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")[1:]
        if line.lower().startswith(b"content-length:")
    )
    return status, await conn.reader.readexactly(length)


async def _watch_checkpoints(urls: list[str], acks: Acks) -> None:
    async with httpx.AsyncClient(timeout=5) as http:
        while not acks.done:
            for url in urls:
                with contextlib.suppress(httpx.HTTPError):
                    answer = await http.get(url + "/tlog/checkpoint")
                    if answer.status_code == 200:
                        acks.checkpoints.append(answer.text)
            await asyncio.sleep(0.05)


def _load(
    servers: list[RegistryProcess], acks: Acks, until: Callable[[Acks], bool], bound: float
) -> None:
    """Writers spread over ``servers`` until ``until(acks)`` (or ``bound`` seconds)."""

    async def run() -> None:
        tasks = [
            asyncio.create_task(_writer(s.port, s.token, n, acks))
            for n, s in ((n, servers[n % len(servers)]) for n in range(WRITERS))
        ]
        watcher = asyncio.create_task(_watch_checkpoints([s.url for s in servers], acks))
        ends = time.monotonic() + bound
        while not acks.done and not until(acks) and time.monotonic() < ends:
            if any(t.done() and not t.cancelled() and t.exception() for t in (*tasks, watcher)):
                break  # a writer's assertion failed: stop the load and report it
            await asyncio.sleep(0.01)
        acks.done = True
        await gather_all(*tasks, watcher)  # a writer's or the watcher's failure fails the test

    asyncio.run(run())


def _key(url: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_b64(
        httpx.get(url + "/protocol/merkle/public-key").json()["public_key_base64"]
    )


def _checkpoint(url: str, key: Ed25519PublicKey, note: str) -> tuple[int, bytes]:
    verifier = NoteVerifier(LOG_ID, key_id_c2sp(LOG_ID, key.raw), key)
    checkpoint = verify_checkpoint(note, [verifier], origin=LOG_ID).checkpoint
    return checkpoint.tree_size, checkpoint.root_hash


def _wait_integrated(url: str, size: int, bound: float = 20) -> str:
    ends = time.monotonic() + bound
    while time.monotonic() < ends:
        note = httpx.get(url + "/tlog/checkpoint").text
        if int(note.split("\n")[1]) >= size:
            return note
        time.sleep(0.05)
    pytest.fail(f"no checkpoint of size {size} within {bound} s")


def _check(url: str, acks: Acks) -> None:
    started = time.monotonic()
    _check_log(url, acks)
    print(f"checked {len(acks.entries)} entries on {url} in {time.monotonic() - started:.2f} s")


def _check_log(url: str, acks: Acks) -> None:
    """Every acknowledged entry is in the log at its index; every checkpoint handed out verifies
    and the final one extends it (RFC 9162 §2.1.4); one root per size (no fork)."""
    assert acks.entries, "nothing was acknowledged"
    key = _key(url)
    final_note = _wait_integrated(url, max(acks.entries) + 1)
    final_size, final_root = _checkpoint(url, key, final_note)
    with httpx.Client(base_url=url, timeout=30) as http:
        for start in range(0, final_size, 1000):
            page = http.get(
                "/protocol/merkle/entries",
                params={"start": start, "end": min(start + 1000, final_size)},
            ).json()["entries"]
            for item in page:
                index = item["leaf_index"]
                if index in acks.entries:
                    assert item["leaf_hash"] == leaf_hash(acks.entries[index]).hex(), index
        roots: dict[int, bytes] = {}
        for note in {*acks.checkpoints}:
            size, root = _checkpoint(url, key, note)
            assert roots.setdefault(size, root) == root, f"two roots at size {size}: a fork"
            if 0 < size < final_size:
                proof = http.get(
                    "/protocol/merkle/consistency", params={"first": size, "second": final_size}
                ).json()
                verify_consistency(
                    size, final_size, [bytes.fromhex(h) for h in proof["proof"]], root, final_root
                )
            elif size == final_size:
                assert root == final_root


# -- SQLite -------------------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryProcess]:
    with serving(tmp_path, "log:write") as (instance,):
        yield instance


def test_sigkill_under_load_loses_no_acknowledged_entry_sqlite(server: RegistryProcess) -> None:
    acks = Acks()
    for round_ in range(3):  # kill at three moments; integrations run ~10 times a second
        target = len(acks.entries) + 150 + random.randrange(150)
        _load([server], acks, lambda a, t=target: len(a.entries) >= t, bound=30)
        acks.done = False
        server.kill()
        server.start()  # start-up audits every node and refuses a forked or damaged tree
        _check(server.url, acks)
        assert 500 not in acks.refusals, (round_, acks.refusals)


def test_bad_input_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    with serving(tmp_path, "log:write", env={"AFFIDAVIT_BODY_TIMEOUT": "1"}) as (instance,):
        writer, facts = instance.token, api_key(instance.data_dir, "facts:write")
        url = instance.url
        octets = {"Content-Type": "application/octet-stream"}
        cases = [
            (None, b"x", 401, "auth.missing"),
            ("afk_0000000000000000_" + "A" * 43, b"x", 401, "auth.invalid"),
            (facts, b"x", 403, "auth.forbidden"),
            (writer, b"", 400, "http.body_empty"),
            (writer, b"y" * 65_536, 413, "http.body_too_large"),
        ]
        for token, body, status, code in cases:
            headers = dict(octets, **({"Authorization": f"Bearer {token}"} if token else {}))
            answer = httpx.post(url + ENTRIES, content=body, headers=headers)
            assert (answer.status_code, answer.json()["code"]) == (status, code)
        # Streamed without a length, over the limit: refused as soon as it passes it.
        chunks = (b"z" * 8192 for _ in range(9))
        streamed = httpx.post(
            url + ENTRIES, content=chunks, headers={**octets, "Authorization": f"Bearer {writer}"}
        )
        assert (streamed.status_code, streamed.json()["code"]) == (413, "http.body_too_large")
        # A slow body: announced 100 bytes, 10 sent, then silence past the body timeout.
        with socket.create_connection(("127.0.0.1", instance.port), timeout=10) as raw:
            raw.sendall(
                f"POST {ENTRIES} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {writer}\r\n"
                "Content-Length: 100\r\n\r\n".encode()
                + b"0123456789"
            )
            answer_bytes = b""
            while b"\r\n\r\n" not in answer_bytes or not answer_bytes.rstrip().endswith(b"}"):
                chunk = raw.recv(4096)
                if not chunk:
                    break
                answer_bytes += chunk
        head, _, body = answer_bytes.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408")
        assert b"connection: close" in head.lower()
        assert json.loads(body)["code"] == "http.body_timeout"
        # Nothing was written: the first entry now is index 0.
        first = httpx.post(
            url + ENTRIES, content=b"first", headers={**octets, "Authorization": f"Bearer {writer}"}
        )
        assert (first.status_code, first.json()["index"]) == (201, 0)


def test_a_full_queue_answers_503_with_retry_after_and_drops_nothing(tmp_path: Path) -> None:
    env = {"AFFIDAVIT_LOG_QUEUE": "4", "AFFIDAVIT_WRITE_BATCH": "1"}
    retry_after: list[str] = []
    with serving(tmp_path, "log:write", env=env) as (instance,):

        async def flood() -> list[tuple[int, bytes, bytes]]:
            async with httpx.AsyncClient(timeout=30) as http:

                async def one(i: int) -> tuple[int, bytes, bytes]:
                    entry = f"flood {i}".encode()
                    answer = await http.post(
                        instance.url + ENTRIES,
                        content=entry,
                        headers={"Authorization": f"Bearer {instance.token}"},
                    )
                    if answer.status_code == 503:
                        retry_after.append(answer.headers.get("retry-after", ""))
                    return answer.status_code, entry, answer.content

                return await asyncio.gather(*(one(i) for i in range(200)))

        answers = asyncio.run(flood())
        statuses = {status for status, _, _ in answers}
        assert statuses <= {201, 503}, statuses
        full = [json.loads(body)["code"] for status, _, body in answers if status == 503]
        assert full, "the queue never filled"
        assert set(full) == {"registry.queue_full"}
        assert set(retry_after) == {"1"}
        acks = Acks(entries={json.loads(b)["index"]: e for s, e, b in answers if s == 201})
        _check(instance.url, acks)  # every acknowledged entry is there


# -- PostgreSQL: two instances on one database ------------------------------------------------


def _pair(tmp_path: Path, url: str) -> contextlib.AbstractContextManager[list[RegistryProcess]]:
    return serving(tmp_path, "log:write", count=2, database_url=url)


_INTEGRATING = (  # how the statements of an integration begin (attest/stores/postgres.py)
    "SELECT idx, hash FROM log_sequenced WHERE idx >=",
    "INSERT INTO log_nodes",
    "INSERT INTO log_entries(idx, data) SELECT",
    "DELETE FROM log_sequenced WHERE idx <",
)


def _integrating(watch: LockWatch, pid: int) -> bool:
    """Whether registry process ``pid`` is inside an integration transaction, holding the writer
    lock."""
    return any(
        state.startswith("idle in transaction") and query.startswith(_INTEGRATING)
        for state, query in watch.holders(pid)
    )


def _stored_size(cluster: PgCluster, url: str) -> int:
    with cluster.connect(database_name(url)) as conn:
        row = conn.execute("SELECT max(idx) FROM log_nodes WHERE level = 0").fetchone()
    return 0 if row is None or row[0] is None else int(row[0]) + 1


@contextlib.contextmanager
def _loaded(servers: list[RegistryProcess], acks: Acks) -> Iterator[None]:
    """The load in a thread for the length of the block; what it raised fails the test."""
    worker = Worker(_load, servers, acks, lambda _: False, 120)
    worker.start()
    try:
        yield
    finally:
        acks.done = True
        worker.join(60)
    worker.check(0)


def _catch_integrating(a: RegistryProcess, acks: Acks, watch: LockWatch) -> int:
    """Once 200 entries are acknowledged, SIGSTOP instance ``a`` at a moment it is inside an
    integration holding the writer lock, while entries keep arriving (the load runs in the
    caller); its pid."""
    until(lambda: len(acks.entries) >= 200, 60, step=0.01)
    assert a.process is not None
    pid = a.process.pid
    caught = stop_inside(pid, lambda: _integrating(watch, pid))
    print(f"\ncaught A inside an integration after {caught:.2f} s")
    return pid


def test_sigkill_mid_integration_loses_nothing_postgresql(
    pg_cluster: PgCluster, pg_url: str, tmp_path: Path
) -> None:
    with _pair(tmp_path, pg_url) as (a, b), contextlib.closing(LockWatch(pg_cluster, pg_url)) as w:
        acks = Acks()
        with _loaded([a, b], acks):
            _catch_integrating(a, acks, w)
            a.kill()
            killed_at = len(acks.entries)
            until(lambda: len(acks.entries) >= killed_at + 100, 60, step=0.01)  # B carries on
        _check(b.url, acks)
        a.start()  # the killed instance comes back: start-up audits the tree, no fork
        _check(a.url, acks)


def test_two_instances_never_integrate_at_once_sigstop_mid_batch(
    pg_cluster: PgCluster, pg_url: str, tmp_path: Path
) -> None:
    with _pair(tmp_path, pg_url) as (a, b), contextlib.closing(LockWatch(pg_cluster, pg_url)) as w:
        acks = Acks()
        with _loaded([a, b], acks):
            pid = _catch_integrating(a, acks, w)
            paused, frozen = time.monotonic(), _stored_size(pg_cluster, pg_url)
            assert _integrating(w, pid)  # still inside its batch, holding the writer lock
            # While A holds the writer lock inside its batch, nobody integrates (B waits)...
            time.sleep(3.0)
            assert _stored_size(pg_cluster, pg_url) == frozen
            # ...until A's lease ends its session; then B integrates what A had taken, once.
            until(lambda: _stored_size(pg_cluster, pg_url) > frozen, 15, what="B never integrated")
            grew = time.monotonic() - paused
            os.kill(pid, signal.SIGCONT)
            resumed = len(acks.entries)
            until(lambda: len(acks.entries) >= resumed + 100, 60, step=0.01)
        print(f"\nSIGSTOP mid-integration: the tree grew again {grew:.2f} s after the pause")
        _check(b.url, acks)
        _check(a.url, acks)
