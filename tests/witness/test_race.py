"""The rollback race of tlog-witness, for real: two witness processes on ONE state folder, many
threads submitting checkpoints of different sizes from different old sizes at once.

If the check "old == stored size" and the update were two steps, two requests could both pass the
check from the same old size and the later write would roll the witness back. What must hold:

- the successes chain: ordered by old size, each success starts where the previous one ended
  (no two successes leave one old size for different new sizes), so no leaves were ever rolled
  back, whatever the interleaving;
- the persisted size, polled meanwhile through both processes, never decreases;
- a restart keeps the state.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.checkpoint import parse_checkpoint_body, parse_note
from affidavit.witness.protocol import origin_hash

from tests.witness.helpers import Tree, WitnessProcess, write_key
from tests.workers import Worker

pytestmark = pytest.mark.network_local

THREADS = 8
ROUNDS = 30
TREE = Tree(400)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[WitnessProcess, WitnessProcess]]:
    key = write_key(tmp_path / "w.key", derive_test_key("witness race: witness"))
    state = tmp_path / "state"
    first = WitnessProcess(key, state, [TREE.vkey]).start()
    try:
        second = WitnessProcess(key, state, [TREE.vkey]).start()
        try:
            yield first, second
        finally:
            second.stop()
    finally:
        first.stop()


def _served_size(client: httpx.Client) -> int:
    response = client.get(f"/{origin_hash(TREE.origin)}/checkpoint")
    if response.status_code == 404:
        return 0
    assert response.status_code == 200
    return parse_checkpoint_body(parse_note(response.text).text).tree_size


def test_concurrent_submissions_never_roll_back(
    pair: tuple[WitnessProcess, WitnessProcess],
) -> None:
    urls = [pair[0].url, pair[1].url]
    successes: list[tuple[int, int]] = []
    conflicts: list[int] = []
    unexpected: list[str] = []
    polled: list[int] = []
    lock = threading.Lock()
    done = threading.Event()

    def submitter(seed: int) -> None:
        rng = random.Random(seed)
        known = 0
        with httpx.Client(base_url=urls[seed % 2], timeout=30) as client:
            for _ in range(ROUNDS):
                new = min(len(TREE.leaves), known + rng.randint(0, 6))
                response = client.post("/add-checkpoint", content=TREE.body(known, new))
                with lock:
                    if response.status_code == 200:
                        successes.append((known, new))
                        known = new
                    elif response.status_code == 409:
                        conflicts.append(known)
                        known = int(response.text)
                    else:
                        unexpected.append(f"{response.status_code} {response.text}")

    def poller() -> None:
        clients = [httpx.Client(base_url=url, timeout=30) for url in urls]
        try:
            turn = 0
            while not done.is_set():
                polled.append(_served_size(clients[turn % 2]))
                turn += 1
        finally:
            for client in clients:
                client.close()

    watcher = Worker(poller)
    watcher.start()
    workers = [Worker(submitter, seed) for seed in range(THREADS)]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            worker.check(120)  # a submitter's failure fails the test
    finally:
        done.set()
    watcher.check(30)

    assert not unexpected
    assert len(successes) >= ROUNDS  # the load did cosign, and it did contend:
    assert conflicts
    steps = sorted((old, new) for old, new in successes if old != new)
    assert len({old for old, _ in steps}) == len(steps), "two successes left one size: rollback"
    position = 0
    for old, new in steps:
        assert old == position, f"success {old}->{new} does not start where the last ended"
        assert new > old
        position = new
    reached = {0, *(new for _, new in steps)}
    assert all(old in reached for old, new in successes if old == new)
    assert polled == sorted(polled), "the persisted size went down"

    with httpx.Client(base_url=urls[0], timeout=10) as client:
        assert _served_size(client) == position
        before = client.get(f"/{origin_hash(TREE.origin)}/checkpoint").text

    # A restart keeps the state: the same checkpoint is served, old 0 is answered 409 <size>.
    for process in pair:
        process.stop()
    pair[0].start()
    with httpx.Client(base_url=urls[0], timeout=10) as client:
        assert client.get(f"/{origin_hash(TREE.origin)}/checkpoint").text == before
        response = client.post("/add-checkpoint", content=TREE.body(0, len(TREE.leaves)))
        assert (response.status_code, response.text) == (409, f"{position}\n")
